import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { FrontendConfig } from './config';

export interface ShareOAuth {
  provider: string;
  emailPatterns: string[];
  checkIntervalMs: number;
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
}

/** Dials a service through the edge router (provided by the composition root; the frontend knows no core). */
export interface OverlayDialer {
  dial(serviceId: string): Promise<Duplex>;
}

export interface ShareResolver {
  resolve(token: string): PublicShare | undefined | Promise<PublicShare | undefined>;
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
