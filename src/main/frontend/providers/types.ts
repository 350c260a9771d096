import type { ProviderType } from '../config';

/** Per-login secrets carried (encrypted) in the state token. */
export interface LoginChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** What the share's rules need a provider to fetch besides the email (GitHub memberships, OIDC claims). */
export interface IdentityNeeds {
  githubOrgs?: boolean;
  githubTeams?: boolean;
  claims?: boolean;
}

/** What a provider tells us about the user after a login or a refresh. */
export interface ProviderIdentity {
  /** Absent when the provider shared no email address (a refusal, like an unverified one). */
  email?: string;
  emailVerified: boolean;
  subject?: string;
  accessToken?: string;
  refreshToken?: string;
  /** GitHub organization logins, lowercase (fetched when needed) */
  githubOrgs?: string[];
  /** GitHub teams as "org/slug", lowercase (fetched when needed) */
  githubTeams?: string[];
  /** ID token claims merged with userinfo (oidc) */
  claims?: Record<string, unknown>;
  /** Google Workspace domain (`hd`) */
  hostedDomain?: string;
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
  authorizationUrl(checks: LoginChecks, needs?: IdentityNeeds): Promise<URL>;
  /** `callbackUrl` is the redirect URI plus the query the provider sent. */
  completeLogin(callbackUrl: URL, checks: LoginChecks, needs?: IdentityNeeds): Promise<ProviderIdentity>;
  /**
   * Whether a session holding these tokens can be re-verified without the user: an OIDC refresh token, or a GitHub
   * access token (its API is asked again).
   */
  canReverify(tokens: StoredTokens): boolean;
  /** Re-verifies a session: the identity as the provider tells it now. */
  refresh(tokens: StoredTokens, needs?: IdentityNeeds): Promise<ProviderIdentity>;
  revoke(tokens: StoredTokens): Promise<void>;
  /** Drops only what a session needs to keep; keeps cookies small. */
  tokensToStore(identity: ProviderIdentity): StoredTokens;
  /**
   * OpenID Connect RP-initiated logout: the provider's end_session_endpoint with client_id, post_logout_redirect_uri
   * and state, when the provider offers one (and it is not turned off); undefined otherwise.
   */
  endSessionUrl?(postLogoutRedirectUri: string, state: string): Promise<URL | undefined>;
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
