import * as client from 'openid-client';
import { isLoopbackHost } from '../address';
import { TOKEN_ENDPOINT_AUTH_METHODS, type ProviderConfig, type TokenEndpointAuthMethod } from '../config';
import {
  ProviderError,
  type IdentityNeeds,
  type LoginChecks,
  type OAuthProvider,
  type ProviderContext,
  type ProviderIdentity,
  type StoredTokens,
} from './types';

type TokenResponse = Awaited<ReturnType<typeof client.authorizationCodeGrant>>;

/** Generic OpenID Connect provider: discovery, nonce, optional PKCE (S256), refresh, revocation. */
export function createOidcProvider(cfg: ProviderConfig, ctx: ProviderContext): OAuthProvider {
  const issuer = new URL(cfg.issuer!);
  const scopes = cfg.scopes ?? ['openid'];
  const usePkce = cfg.supports_pkce === true;
  // Plain http is accepted (by config validation) only for loopback issuers, i.e. tests and local IdPs.
  const insecure = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname);
  let configuration: Promise<client.Configuration> | undefined;

  function discover(): Promise<client.Configuration> {
    if (!configuration) {
      configuration = (async () => {
        const execute = insecure ? [client.allowInsecureRequests] : [];
        const discovered = await client.discovery(issuer, cfg.client_id, { client_secret: cfg.client_secret }, undefined, {
          execute,
          timeout: Math.ceil(ctx.timeoutMs / 1000),
        });
        const metadata = discovered.serverMetadata();
        const method =
          cfg.token_endpoint_auth_method ?? defaultAuthMethod(metadata.token_endpoint_auth_methods_supported, cfg.client_id, cfg.client_secret);
        const auth = method === 'client_secret_post' ? client.ClientSecretPost(cfg.client_secret) : client.ClientSecretBasic(cfg.client_secret);
        const config = new client.Configuration(metadata, cfg.client_id, { client_secret: cfg.client_secret }, auth);
        config.timeout = Math.ceil(ctx.timeoutMs / 1000);
        for (const fn of execute) fn(config);
        return config;
      })();
      // A failed discovery is retried on the next login instead of being cached forever.
      configuration.catch(() => {
        configuration = undefined;
      });
    }
    return configuration.catch((err) => {
      throw new ProviderError(`oidc discovery for ${issuer.origin}: ${describe(err)}`);
    });
  }

  async function identityFrom(
    config: client.Configuration,
    tokens: TokenResponse,
    previous?: StoredTokens,
    needs: IdentityNeeds = {},
  ): Promise<ProviderIdentity> {
    const idClaims = tokens.claims();
    const subject = idClaims?.sub ?? previous?.subject;
    let claims: Record<string, unknown> = { ...(idClaims ?? {}) };
    // userinfo when the ID token has no email, or when rules check claims (groups often come only from userinfo)
    if ((typeof claims.email !== 'string' || needs.claims) && config.serverMetadata().userinfo_endpoint) {
      if (!subject) throw new ProviderError('oidc: no subject to check userinfo against');
      try {
        claims = { ...claims, ...(await client.fetchUserInfo(config, tokens.access_token, subject)) };
      } catch (err) {
        throw new ProviderError(`oidc userinfo: ${describe(err)}`);
      }
    }
    // No email claim (the "email" scope not configured or not granted) is a refusal, not a provider failure.
    const email = typeof claims.email === 'string' && claims.email ? claims.email : undefined;
    const verified = claims.email_verified === true || claims.email_verified === 'true';
    return {
      email,
      emailVerified: verified,
      subject,
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token ?? previous?.refreshToken,
      claims,
      hostedDomain: typeof claims.hd === 'string' && claims.hd ? claims.hd : undefined,
    };
  }

  return {
    name: cfg.name,
    type: 'oidc',

    async authorizationUrl(checks: LoginChecks) {
      const config = await discover();
      const params: Record<string, string> = {
        redirect_uri: ctx.redirectUri,
        scope: scopes.join(' '),
        state: checks.state,
        nonce: checks.nonce,
        response_type: 'code',
      };
      if (usePkce) {
        params.code_challenge = await client.calculatePKCECodeChallenge(checks.codeVerifier);
        params.code_challenge_method = 'S256';
      }
      // OIDC Core 11: offline_access is only honoured together with prompt=consent.
      if (scopes.includes('offline_access')) params.prompt = 'consent';
      return client.buildAuthorizationUrl(config, params);
    },

    async completeLogin(callbackUrl: URL, checks: LoginChecks, needs?: IdentityNeeds) {
      const config = await discover();
      let tokens: TokenResponse;
      try {
        tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          pkceCodeVerifier: usePkce ? checks.codeVerifier : undefined,
          idTokenExpected: true,
        });
      } catch (err) {
        throw new ProviderError(`oidc code exchange: ${describe(err)}`);
      }
      return identityFrom(config, tokens, undefined, needs);
    },

    canReverify(tokens) {
      return !!tokens.refreshToken;
    },

    async refresh(stored: StoredTokens, needs?: IdentityNeeds) {
      if (!stored.refreshToken) throw new ProviderError('oidc: session has no refresh token');
      const config = await discover();
      let tokens: TokenResponse;
      try {
        tokens = await client.refreshTokenGrant(config, stored.refreshToken);
      } catch (err) {
        throw new ProviderError(`oidc refresh: ${describe(err)}`);
      }
      const claims = tokens.claims();
      if (claims && stored.subject && claims.sub !== stored.subject) throw new ProviderError('oidc refresh: subject changed');
      return identityFrom(config, tokens, stored, needs);
    },

    async revoke(stored: StoredTokens) {
      const config = await discover();
      if (!config.serverMetadata().revocation_endpoint) return;
      const failures: string[] = [];
      // Revoking the refresh token ends the grant; the access token goes too when we still hold it.
      if (stored.refreshToken) {
        await client.tokenRevocation(config, stored.refreshToken, { token_type_hint: 'refresh_token' }).catch((err) => failures.push(describe(err)));
      }
      if (stored.accessToken) {
        await client.tokenRevocation(config, stored.accessToken, { token_type_hint: 'access_token' }).catch((err) => failures.push(describe(err)));
      }
      if (failures.length) throw new ProviderError(`oidc revoke: ${failures.join('; ')}`);
    },

    async endSessionUrl(postLogoutRedirectUri: string, state: string) {
      if (cfg.end_session === false) return undefined;
      const config = await discover();
      if (!config.serverMetadata().end_session_endpoint) return undefined;
      // No id_token_hint (sessions keep no ID token: cookies stay small); client_id names the client instead (OpenID
      // Connect RP-Initiated Logout 1.0, 2), so the provider can check post_logout_redirect_uri.
      return client.buildEndSessionUrl(config, { client_id: cfg.client_id, post_logout_redirect_uri: postLogoutRedirectUri, state });
    },

    tokensToStore(identity) {
      // The refresh token is what re-verification needs; the access token is kept only without one.
      return identity.refreshToken
        ? { refreshToken: identity.refreshToken, subject: identity.subject }
        : { accessToken: identity.accessToken, subject: identity.subject };
    },
  };
}

/**
 * Without a configured method: client_secret_post when the issuer lists both and Basic would change the id or the
 * secret (it form-encodes them first, RFC 6749 2.3.1, so -_.!~*'() and others become %2D...: providers that compare the
 * raw value, glewlwyd among them, refuse the login); otherwise the first of ours the issuer lists, else
 * client_secret_basic (the OIDC default).
 */
export function defaultAuthMethod(supported: readonly string[] | undefined, clientId = '', clientSecret = ''): TokenEndpointAuthMethod {
  const listed = (supported ?? []).filter((m): m is TokenEndpointAuthMethod => (TOKEN_ENDPOINT_AUTH_METHODS as readonly string[]).includes(m));
  if (listed.includes('client_secret_basic') && listed.includes('client_secret_post') && (basicChanges(clientId) || basicChanges(clientSecret))) {
    return 'client_secret_post';
  }
  return listed[0] ?? 'client_secret_basic';
}

/** Whether HTTP Basic's form-encoding (as openid-client does it) changes the value. */
function basicChanges(value: string): boolean {
  return /[^A-Za-z0-9]/.test(value);
}

/** Error text from openid-client/oauth4webapi without response bodies or tokens. */
function describe(err: unknown): string {
  if (err instanceof client.ResponseBodyError) return `${err.error}${err.status ? ` (HTTP ${err.status})` : ''}`;
  if (err instanceof client.AuthorizationResponseError) return `authorization error ${err.error}`;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    // openid-client wraps oauth4webapi's error, whose message names the failing check (e.g. the
    // "nonce" claim) without echoing values.
    const detail = err.cause instanceof Error && err.cause.message !== err.message ? ` (${err.cause.message})` : '';
    return typeof code === 'string' ? `${code}: ${err.message}${detail}` : `${err.message}${detail}`;
  }
  return String(err);
}
