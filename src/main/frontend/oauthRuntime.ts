import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { parseDuration } from '../../shared/duration';
import type { OAuthConfig } from './config';
import { EmailMatcherCache } from './emailPatterns';
import { deriveKeys } from './keys';
import { LoginStates } from './loginState';
import { createProviders, ProviderError, type OAuthProvider, type ProviderIdentity } from './providers';
import { SessionCodec, type Session } from './sessions';
import type { AuthIdentity, PublicShare, ShareOAuth, UsedOnce } from './types';

export type GateResult =
  | { kind: 'allow'; identity: AuthIdentity; setCookies: string[] }
  | { kind: 'login'; reason: 'no_session' | 'check_due' | 'refresh_failed' }
  | { kind: 'forbidden'; provider: string; email?: string; reason: Refusal; setCookies: string[] }
  | { kind: 'misconfigured'; message: string };

/** Why a signed-in user is refused (403 with a logout link), at login or at a refresh. */
export type Refusal = 'no_email' | 'email_not_verified' | 'email_not_allowed';

export function refusalMessage(reason: Refusal, email: string | undefined): string {
  switch (reason) {
    case 'no_email':
      return 'The identity provider did not share an email address for this account, so access to this share cannot be checked. Allow it to share your email address, or sign in with another account.';
    case 'email_not_verified':
      return `The provider has not verified the email address ${email}. Verify it with the provider and try again.`;
    case 'email_not_allowed':
      return `You are signed in as ${email}, which is not allowed to access this share.`;
  }
}

interface RefreshOutcome {
  identity?: ProviderIdentity;
  error?: string;
  doneAtMs?: number;
}

// Concurrent requests that hit the check interval together share one refresh (refresh tokens may rotate).
const REFRESH_REUSE_MS = 30_000;

/** Everything OAuth for one frontend instance: providers, keys, sessions, states. */
export class OAuthRuntime {
  readonly providers: Map<string, OAuthProvider>;
  readonly sessions: SessionCodec;
  readonly states: LoginStates;
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
    this.endpointUrl = config.endpoint_url.replace(/\/+$/, '');
    this.endpointPath = new URL(this.endpointUrl).pathname.replace(/\/+$/, '');
    this.sessionLifetimeMs = parseDuration(config.session_lifetime);
    this.providers = createProviders(config);
    this.sessions = new SessionCodec(keys, { cookieName: config.cookie_name, cookieDomain, secure: secureCookies });
    this.states = new LoginStates(keys, {
      cookieName: config.cookie_name,
      cookieDomain,
      secure: secureCookies,
      lifetimeMs: parseDuration(config.intermediate_lifetime),
      usedOnce,
    });
  }

  emailAllowed(oauth: ShareOAuth, email: string): boolean {
    return this.emails.matches(oauth.emailPatterns, email);
  }

  /** Only a verified email matching the share's patterns is let in. */
  check(oauth: ShareOAuth, identity: ProviderIdentity): { ok: true; email: string } | { ok: false; reason: Refusal } {
    if (!identity.email) return { ok: false, reason: 'no_email' };
    if (!identity.emailVerified) return { ok: false, reason: 'email_not_verified' };
    if (!this.emailAllowed(oauth, identity.email)) return { ok: false, reason: 'email_not_allowed' };
    return { ok: true, email: identity.email };
  }

  /** `<endpoint_url>/<provider>/<action>` */
  providerUrl(provider: string, action: 'auth/callback' | 'logout' | 'login'): string {
    return `${this.endpointUrl}/${encodeURIComponent(provider)}/${action}`;
  }

  /** Decides whether a request to an OAuth-protected share may pass, refreshing OIDC sessions when due. */
  async authorize(req: IncomingMessage, share: PublicShare & { oauth: ShareOAuth }): Promise<GateResult> {
    const provider = this.providers.get(share.oauth.provider);
    if (!provider)
      return { kind: 'misconfigured', message: `share uses OAuth provider "${share.oauth.provider}", which this frontend does not configure` };
    const now = this.now();
    const session = await this.sessions.find(req.headers.cookie, share.token, provider.name, now);
    if (!session) return { kind: 'login', reason: 'no_session' };
    if (!this.emailAllowed(share.oauth, session.email)) {
      return { kind: 'forbidden', provider: provider.name, email: session.email, reason: 'email_not_allowed', setCookies: [] };
    }
    if (now - session.checkedAtMs < share.oauth.checkIntervalMs) {
      return { kind: 'allow', identity: identityOf(session), setCookies: [] };
    }
    if (!provider.supportsRefresh || !session.tokens.refreshToken) return { kind: 'login', reason: 'check_due' };

    const outcome = await this.refreshOnce(provider, session);
    if (!outcome.identity) {
      this.logger.info(
        { share: share.token, provider: provider.name, email: session.email, err: outcome.error },
        'oauth session refresh failed; re-authentication required',
      );
      return { kind: 'login', reason: 'refresh_failed' };
    }
    const fresh = outcome.identity;
    const checked = this.check(share.oauth, fresh);
    if (!checked.ok) {
      return {
        kind: 'forbidden',
        provider: provider.name,
        email: fresh.email,
        reason: checked.reason,
        setCookies: [this.sessions.clear(session.cookieName)],
      };
    }
    const renewed: Omit<Session, 'cookieName'> = {
      provider: provider.name,
      share: share.token,
      email: checked.email,
      expiresAtMs: session.expiresAtMs, // refresh re-verifies; it never extends session_lifetime
      checkedAtMs: now,
      tokens: provider.tokensToStore(fresh),
    };
    const cookie = await this.sessions.issue(renewed, now);
    this.logger.info({ share: share.token, provider: provider.name, email: checked.email }, 'oauth session refreshed');
    return { kind: 'allow', identity: { provider: provider.name, email: checked.email, expiresAtMs: session.expiresAtMs }, setCookies: [cookie] };
  }

  private refreshOnce(provider: OAuthProvider, session: Session): Promise<RefreshOutcome> {
    const now = this.now();
    for (const [key, entry] of this.refreshes) if (now - entry.startedAtMs > REFRESH_REUSE_MS) this.refreshes.delete(key);
    const key = `${session.share}:${createHash('sha256')
      .update(session.tokens.refreshToken ?? '')
      .digest('base64url')}`;
    const existing = this.refreshes.get(key);
    if (existing) return existing.promise;
    const promise = provider.refresh(session.tokens).then(
      (identity): RefreshOutcome => ({ identity }),
      (err): RefreshOutcome => ({ error: err instanceof ProviderError ? err.message : 'unexpected refresh error' }),
    );
    this.refreshes.set(key, { promise, startedAtMs: now });
    return promise;
  }

  /** Starts a login: sealed state + binding cookie, and the provider's authorization URL. */
  async beginLogin(provider: OAuthProvider, share: PublicShare, originalUrl: string): Promise<{ location: string; setCookies: string[] }> {
    const login = await this.states.create({ provider: provider.name, share: share.token, originalUrl }, this.now());
    const url = await provider.authorizationUrl({ state: login.state, nonce: login.claims.non, codeVerifier: login.claims.pkv });
    return { location: url.href, setCookies: [login.bindingCookie] };
  }
}

function identityOf(session: Session): AuthIdentity {
  return { provider: session.provider, email: session.email, expiresAtMs: session.expiresAtMs };
}
