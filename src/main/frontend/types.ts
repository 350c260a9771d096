import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { FrontendConfig } from './config';

/** A claim condition: the claim `name` of the ID token or userinfo equals `value` (a list claim: contains it). */
export interface ClaimRule {
  name: string;
  value: string;
}

/**
 * Who may enter, beyond a verified email: each kind given must be met by a login whose provider can be checked for
 * it (email patterns by every provider, GitHub organizations and teams by idp_a, claims by oidc, Google Workspace
 * domains by idp_b and oidc); within a kind, one match is enough. See accessRules.ts.
 */
export interface AccessRules {
  /** globs, case-insensitive */
  emailPatterns?: string[];
  /** GitHub organization logins (case-insensitive) */
  githubOrgs?: string[];
  /** "org/team-slug" (case-insensitive) */
  githubTeams?: string[];
  claims?: ClaimRule[];
  /** Google Workspace domains (the `hd` claim) */
  googleDomains?: string[];
}

/** A stricter rule for the paths its regular expression matches (anchored; see pathRules.ts). */
export interface PathRule extends AccessRules {
  path: string;
}

export interface ShareOAuth extends AccessRules {
  /** the share's (first) provider */
  provider: string;
  /** every provider the share accepts, when there are several (provider is the first of them) */
  providers?: string[];
  emailPatterns: string[];
  checkIntervalMs: number;
  /** regular expressions of paths served without a login (anchored, matched against the normalised path) */
  skipPaths?: string[];
  pathRules?: PathRule[];
}

export interface PublicShare {
  token: string;
  backendMode: 'proxy' | 'web';
  /** URL for `proxy`, absolute directory for `web`. */
  target: string;
  /**
   * Overlay mode: requests (and upgrades) go over a connection dialed to this service through the edge router; the
   * process that binds it serves the backend (backendMode and target are its business then).
   */
  overlay?: { serviceId: string };
  oauth?: ShareOAuth;
  /** Host names the share also answers at, besides `<token>.<share domain>` (lowercase). */
  domains?: string[];
  /** The certificate (and its key, PEM) the https listener presents for `domains` (SNI). */
  domainTls?: { cert: string; key: string };
}

/** Dials a service through the edge router (provided by the composition root; the frontend knows no core). */
export interface OverlayDialer {
  dial(serviceId: string): Promise<Duplex>;
}

export interface ShareResolver {
  resolve(token: string): PublicShare | undefined | Promise<PublicShare | undefined>;
  /** The share answering at this custom domain (lowercase host name without port), if any. */
  resolveDomain?(host: string): PublicShare | undefined | Promise<PublicShare | undefined>;
}

export interface StartFrontendOptions {
  config: FrontendConfig;
  resolver: ShareResolver;
  logger: Logger;
  /** how overlay shares are reached; without it they answer 503 */
  overlay?: OverlayDialer;
  /** Internal: injectable clock (ms since epoch) for expiry and check-interval tests. */
  now?: () => number;
  /**
   * Marks a single-use value (an OAuth state) used until `expiresAtMs` (times by the frontend's clock, `nowMs` now);
   * false when it already was. Weft gives one
   * kept in its database, so a state is single-use across every node; without it, this process remembers.
   */
  usedOnce?: UsedOnce;
}

export type UsedOnce = (key: string, expiresAtMs: number, nowMs: number) => boolean | Promise<boolean>;

export interface FrontendHandle {
  shareUrl(token: string): string;
  publicAddress: { host: string; port: number };
  oauthAddress?: { host: string; port: number };
  close(): Promise<void>;
}

/** Who a request is authenticated as, once the OAuth gate let it through. */
export interface AuthIdentity {
  provider: string;
  email: string;
  expiresAtMs: number;
}

/** The providers a share accepts, in order. */
export function shareProviders(oauth: Pick<ShareOAuth, 'provider' | 'providers'>): string[] {
  return oauth.providers?.length ? oauth.providers : [oauth.provider];
}
