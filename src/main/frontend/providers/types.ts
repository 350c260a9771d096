import type { ProviderType } from '../config';

/** Per-login secrets carried (encrypted) in the state token. */
export interface LoginChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** What a provider tells us about the user after a login or a refresh. */
export interface ProviderIdentity {
  /** Absent when the provider shared no email address (a refusal, like an unverified one). */
  email?: string;
  emailVerified: boolean;
  subject?: string;
  accessToken?: string;
  refreshToken?: string;
}

/** Provider tokens kept (encrypted) in the session cookie. */
export interface StoredTokens {
  accessToken?: string;
  refreshToken?: string;
  subject?: string;
}

export interface OAuthProvider {
  readonly name: string;
  readonly type: ProviderType;
  /** True when the provider can re-verify a session without the user (OIDC refresh tokens). */
  readonly supportsRefresh: boolean;
  authorizationUrl(checks: LoginChecks): Promise<URL>;
  /** `callbackUrl` is the redirect URI plus the query the provider sent. */
  completeLogin(callbackUrl: URL, checks: LoginChecks): Promise<ProviderIdentity>;
  refresh(tokens: StoredTokens): Promise<ProviderIdentity>;
  revoke(tokens: StoredTokens): Promise<void>;
  /** Drops only what a session needs to keep; keeps cookies small. */
  tokensToStore(identity: ProviderIdentity): StoredTokens;
}

/** A provider-side failure; `message` is safe to log (no tokens), never shown raw to users. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
}

export interface ProviderContext {
  /** `<endpoint_url>/<name>/auth/callback` */
  redirectUri: string;
  /** Timeout for each call to the provider. */
  timeoutMs: number;
}
