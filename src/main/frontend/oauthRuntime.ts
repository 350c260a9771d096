import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { parseDuration } from '../../shared/duration';
import { evaluateRules, ruleNeeds, rulesFingerprint, type LoginFacts, type Refusal } from './accessRules';
import type { OAuthConfig } from './config';
import { EmailMatcherCache } from './emailPatterns';
import { deriveKeys } from './keys';
import { LoginStates, usedOnceInMemory } from './loginState';
import { compilePathRules, isSkipped, readPath, strictRulesFor } from './pathRules';
import { createProviders, ProviderError, type IdentityNeeds, type OAuthProvider, type ProviderIdentity } from './providers';
import { SessionCodec, type CookiePlacement, type Session } from './sessions';
import { Tickets } from './tickets';
import { shareProviders, type AuthIdentity, type PublicShare, type ShareOAuth, type UsedOnce } from './types';

export { refusalMessage, pathRefusalMessage, type Refusal } from './accessRules';

export type GateResult =
  | { kind: 'allow'; identity: AuthIdentity; setCookies: string[] }
  /** a skip rule lets the path through without a login */
  | { kind: 'skip' }
  | { kind: 'login'; reason: 'no_session' | 'check_due' | 'refresh_failed' }
  | { kind: 'forbidden'; provider: string; email?: string; reason: Refusal; scope: 'share' | 'path'; setCookies: string[] }
  /** a path the share's path rules cannot read safely (bad encoding, NUL: 400; too long: 414) */
  | { kind: 'bad_path'; status: 400 | 414 }
  | { kind: 'misconfigured'; message: string };

/** The verdict of the share's rules on a login: the share as a whole, and each of its path rules. */
export type Verdict = { ok: true; email: string; pathVerdicts: string[] } | { ok: false; reason: Refusal };

interface RefreshOutcome {
  identity?: ProviderIdentity;
  error?: string;
  doneAtMs?: number;
}

// Concurrent requests that hit the check interval together share one refresh (refresh tokens may rotate).
const REFRESH_REUSE_MS = 30_000;

const pathOnly = (p: string) => {
  const q = p.indexOf('?');
  return q < 0 ? p : p.slice(0, q);
};

/** Everything OAuth for one frontend instance: providers, keys, sessions, states. */
export class OAuthRuntime {
  readonly providers: Map<string, OAuthProvider>;
  readonly sessions: SessionCodec;
  readonly states: LoginStates;
  readonly tickets: Tickets;
  readonly emails = new EmailMatcherCache();
  /** endpoint_url without trailing slashes; routes are served under its path. */
  readonly endpointUrl: string;
  /** The path of endpoint_url ("" or "/sso"). */
  readonly endpointPath: string;
  readonly sessionLifetimeMs: number;
  private readonly refreshes = new Map<string, { promise: Promise<RefreshOutcome>; startedAtMs: number }>();

  constructor(
    readonly config: OAuthConfig,
    readonly secureCookies: boolean,
    private readonly logger: Logger,
    readonly now: () => number,
    usedOnce?: UsedOnce,
  ) {
    const keys = deriveKeys(config.signing_key, config.encryption_key);
    const cookieDomain = config.cookie_domain.replace(/^\./, '');
    const once = usedOnce ?? usedOnceInMemory();
    this.endpointUrl = config.endpoint_url.replace(/\/+$/, '');
    this.endpointPath = new URL(this.endpointUrl).pathname.replace(/\/+$/, '');
    this.sessionLifetimeMs = parseDuration(config.session_lifetime);
    this.providers = createProviders(config);
    this.sessions = new SessionCodec(keys, { cookieName: config.cookie_name, cookieDomain, secure: secureCookies });
    const lifetimeMs = parseDuration(config.intermediate_lifetime);
    this.states = new LoginStates(keys, { cookieName: config.cookie_name, cookieDomain, secure: secureCookies, lifetimeMs, usedOnce: once });
    this.tickets = new Tickets(keys, { cookieName: config.cookie_name, secure: secureCookies, lifetimeMs, usedOnce: once });
  }

  emailAllowed(oauth: ShareOAuth, email: string): boolean {
    return this.emails.matches(oauth.emailPatterns, email);
  }

  /** What the share's rules need `provider` to fetch at a login or re-verification. */
  needs(oauth: ShareOAuth): IdentityNeeds {
    return ruleNeeds(oauth);
  }

  /**
   * Only a verified email counts; then the share's rules (email patterns, GitHub organizations and teams, claims,
   * Google Workspace domain), and a verdict for each of its path rules, kept in the session.
   */
  check(oauth: ShareOAuth, provider: OAuthProvider, identity: ProviderIdentity): Verdict {
    if (!identity.email) return { ok: false, reason: 'no_email' };
    if (!identity.emailVerified) return { ok: false, reason: 'email_not_verified' };
    const facts: LoginFacts = {
      email: identity.email,
      providerType: provider.type,
      githubOrgs: identity.githubOrgs,
      githubTeams: identity.githubTeams,
      claims: identity.claims,
      hostedDomain: identity.hostedDomain,
    };
    const refusal = evaluateRules(oauth, facts, this.emails);
    if (refusal) return { ok: false, reason: refusal };
    return { ok: true, email: identity.email, pathVerdicts: (oauth.pathRules ?? []).map((rule) => evaluateRules(rule, facts, this.emails) ?? '') };
  }

  /** The session to keep for a login that passed `check`. */
  sessionFor(share: PublicShare & { oauth: ShareOAuth }, provider: OAuthProvider, identity: ProviderIdentity, verdict: Verdict & { ok: true }) {
    const now = this.now();
    return {
      provider: provider.name,
      share: share.token,
      email: verdict.email,
      expiresAtMs: now + this.sessionLifetimeMs,
      checkedAtMs: now,
      tokens: provider.tokensToStore(identity),
      rulesFingerprint: rulesFingerprint(share.oauth),
      pathVerdicts: verdict.pathVerdicts,
    } satisfies Omit<Session, 'cookieName'>;
  }

  /** `<endpoint_url>/<provider>/<action>` */
  providerUrl(provider: string, action: 'auth/callback' | 'auth/start' | 'logout' | 'logout/done' | 'login'): string {
    return `${this.endpointUrl}/${encodeURIComponent(provider)}/${action}`;
  }

  /**
   * Decides whether a request to an OAuth-protected share may pass: skip rules, the session (one of the share's
   * providers), re-verification when due or when the share's rules changed since it was checked, path rules.
   */
  async authorize(
    req: IncomingMessage,
    share: PublicShare & { oauth: ShareOAuth },
    requestPath: string,
    placement: CookiePlacement = {},
  ): Promise<GateResult> {
    const oauth = share.oauth;
    const names = shareProviders(oauth);
    const unknown = names.find((n) => !this.providers.has(n));
    if (unknown) return { kind: 'misconfigured', message: `share uses OAuth provider "${unknown}", which this frontend does not configure` };

    const compiled = oauth.skipPaths?.length || oauth.pathRules?.length ? compilePathRules(oauth) : undefined;
    const reading = compiled ? readPath(pathOnly(requestPath)) : undefined;
    if (reading && !reading.ok) return { kind: 'bad_path', status: reading.status };
    if (compiled && reading?.ok && isSkipped(compiled, reading)) return { kind: 'skip' };

    const now = this.now();
    const session = await this.sessions.find(req.headers.cookie, share.token, names, now);
    if (!session) return { kind: 'login', reason: 'no_session' };
    const provider = this.providers.get(session.provider)!;
    if (!this.emailAllowed(oauth, session.email)) {
      return { kind: 'forbidden', provider: provider.name, email: session.email, reason: 'email_not_allowed', scope: 'share', setCookies: [] };
    }
    const fingerprint = rulesFingerprint(oauth);
    let current: Omit<Session, 'cookieName'> = session;
    const setCookies: string[] = [];
    const stale = (session.rulesFingerprint ?? '') !== fingerprint;
    if (stale || now - session.checkedAtMs >= oauth.checkIntervalMs) {
      if (!provider.canReverify(session.tokens)) return { kind: 'login', reason: 'check_due' };
      const outcome = await this.refreshOnce(provider, session, this.needs(oauth));
      if (!outcome.identity) {
        this.logger.info(
          { share: share.token, provider: provider.name, email: session.email, err: outcome.error },
          'oauth session re-verification failed; re-authentication required',
        );
        return { kind: 'login', reason: 'refresh_failed' };
      }
      const fresh = outcome.identity;
      const verdict = this.check(oauth, provider, fresh);
      if (!verdict.ok) {
        return {
          kind: 'forbidden',
          provider: provider.name,
          email: fresh.email,
          reason: verdict.reason,
          scope: 'share',
          setCookies: [this.sessions.clear(session.cookieName, placement)],
        };
      }
      current = {
        provider: provider.name,
        share: share.token,
        email: verdict.email,
        expiresAtMs: session.expiresAtMs, // re-verification never extends session_lifetime
        checkedAtMs: now,
        tokens: provider.tokensToStore(fresh),
        rulesFingerprint: fingerprint,
        pathVerdicts: verdict.pathVerdicts,
      };
      setCookies.push(await this.sessions.issue(current, now, placement));
      this.logger.info({ share: share.token, provider: provider.name, email: verdict.email }, 'oauth session re-verified');
    }
    if (compiled && reading?.ok && oauth.pathRules?.length) {
      for (const i of strictRulesFor(compiled, reading)) {
        const verdict = current.pathVerdicts?.[i];
        if (verdict === '') continue;
        return {
          kind: 'forbidden',
          provider: provider.name,
          email: current.email,
          reason: (verdict || 'rule_not_applicable') as Refusal,
          scope: 'path',
          setCookies,
        };
      }
    }
    return { kind: 'allow', identity: { provider: provider.name, email: current.email, expiresAtMs: current.expiresAtMs }, setCookies };
  }

  private refreshOnce(provider: OAuthProvider, session: Session, needs: IdentityNeeds): Promise<RefreshOutcome> {
    const now = this.now();
    for (const [key, entry] of this.refreshes) if (now - entry.startedAtMs > REFRESH_REUSE_MS) this.refreshes.delete(key);
    const key = `${session.share}:${createHash('sha256')
      .update(session.tokens.refreshToken ?? session.tokens.accessToken ?? '')
      .digest('base64url')}`;
    const existing = this.refreshes.get(key);
    if (existing) return existing.promise;
    const promise = provider.refresh(session.tokens, needs).then(
      (identity): RefreshOutcome => ({ identity }),
      (err): RefreshOutcome => ({ error: err instanceof ProviderError ? err.message : 'unexpected refresh error' }),
    );
    this.refreshes.set(key, { promise, startedAtMs: now });
    return promise;
  }

  /**
   * Starts a login: sealed state + binding cookie, and the provider's authorization URL. `hostBinding` (a custom
   * domain's login) is carried to the ticket that brings the session back to that host.
   */
  async beginLogin(
    provider: OAuthProvider,
    share: PublicShare & { oauth: ShareOAuth },
    originalUrl: string,
    hostBinding?: string,
  ): Promise<{ location: string; setCookies: string[] }> {
    const login = await this.states.create({ provider: provider.name, share: share.token, originalUrl, hostBinding }, this.now());
    const url = await provider.authorizationUrl(
      { state: login.state, nonce: login.claims.non, codeVerifier: login.claims.pkv },
      this.needs(share.oauth),
    );
    return { location: url.href, setCookies: [login.bindingCookie] };
  }

  /**
   * Where a logout of `provider` goes once our cookies are cleared: the provider's end_session_endpoint (OpenID
   * Connect RP-initiated logout) when it offers one and a session was ended, coming back to `target` through
   * <endpoint_url>/<name>/logout/done; otherwise `target` itself.
   */
  async logoutLocation(provider: OAuthProvider, target: string, endedSessions: number): Promise<string> {
    if (!endedSessions || !provider.endSessionUrl) return target;
    try {
      const state = await this.tickets.sealLogout({ prv: provider.name, url: target }, this.now());
      const url = await provider.endSessionUrl(this.providerUrl(provider.name, 'logout/done'), state);
      return url?.href ?? target;
    } catch (err) {
      this.logger.warn(
        { provider: provider.name, err: err instanceof ProviderError ? err.message : 'unexpected error' },
        'provider logout unavailable; signed out here only',
      );
      return target;
    }
  }
}
