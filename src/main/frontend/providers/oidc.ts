import * as client from 'openid-client';
import { isLoopbackHost } from '../address';
import { TOKEN_ENDPOINT_AUTH_METHODS, type ProviderConfig, type TokenEndpointAuthMethod } from '../config';
import { isRecord } from './http';
import { ProviderError, type LoginChecks, type OAuthProvider, type ProviderContext, type ProviderIdentity, type StoredTokens } from './types';

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
        const method = cfg.token_endpoint_auth_method ?? defaultAuthMethod(metadata.token_endpoint_auth_methods_supported);
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

  async function identityFrom(config: client.Configuration, tokens: TokenResponse, previous?: StoredTokens): Promise<ProviderIdentity> {
    const claims = tokens.claims();
    const subject = claims?.sub ?? previous?.subject;
    let source: Record<string, unknown> | undefined = claims;
    if (typeof source?.email !== 'string' && config.serverMetadata().userinfo_endpoint) {
      if (!subject) throw new ProviderError('oidc: no subject to check userinfo against');
      try {
        source = await client.fetchUserInfo(config, tokens.access_token, subject);
      } catch (err) {
        throw new ProviderError(`oidc userinfo: ${describe(err)}`);
      }
    }
    // No email claim (the "email" scope not configured or not granted) is a refusal, not a provider failure.
    const email = isRecord(source) && typeof source.email === 'string' && source.email ? source.email : undefined;
    const verified = source?.email_verified === true || source?.email_verified === 'true';
    return {
      email,
      emailVerified: verified,
      subject,
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token ?? previous?.refreshToken,
    };
  }

  return {
    name: cfg.name,
    type: 'oidc',
    supportsRefresh: true,

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

    async completeLogin(callbackUrl: URL, checks: LoginChecks) {
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
      return identityFrom(config, tokens);
    },

    async refresh(stored: StoredTokens) {
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
      return identityFrom(config, tokens, stored);
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

    tokensToStore(identity) {
      // The refresh token is what re-verification needs; the access token is kept only without one.
      return identity.refreshToken
        ? { refreshToken: identity.refreshToken, subject: identity.subject }
        : { accessToken: identity.accessToken, subject: identity.subject };
    },
  };
}

/**
 * Without a configured method: the first of ours the issuer lists, else client_secret_basic (the OIDC default).
 * Basic form-encodes the id and secret first (RFC 6749 2.3.1), which issuers that compare raw values refuse.
 */
function defaultAuthMethod(supported: readonly string[] | undefined): TokenEndpointAuthMethod {
  return (
    (supported?.find((m) => (TOKEN_ENDPOINT_AUTH_METHODS as readonly string[]).includes(m)) as TokenEndpointAuthMethod | undefined) ??
    'client_secret_basic'
  );
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
