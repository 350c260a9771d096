import { createHash } from 'node:crypto';
import type { ProviderConfig } from '../config';
import { isRecord, providerFetch, readJson, safeErrorCode } from './http';
import { ProviderError, type LoginChecks, type OAuthProvider, type ProviderContext, type StoredTokens } from './types';

// idp_b speaks Google's OAuth 2.0 wire format (authorization code + PKCE, v2 userinfo); auth_url, token_url,
// userinfo_url and revoke_url point it at another server speaking it.
const DEFAULTS = {
  auth_url: 'https://accounts.google.com/o/oauth2/v2/auth',
  token_url: 'https://oauth2.googleapis.com/token',
  userinfo_url: 'https://www.googleapis.com/oauth2/v2/userinfo',
  revoke_url: 'https://oauth2.googleapis.com/revoke',
};

export function createGoogleProvider(cfg: ProviderConfig, ctx: ProviderContext): OAuthProvider {
  const endpoints = {
    auth_url: cfg.auth_url ?? DEFAULTS.auth_url,
    token_url: cfg.token_url ?? DEFAULTS.token_url,
    userinfo_url: cfg.userinfo_url ?? DEFAULTS.userinfo_url,
    revoke_url: cfg.revoke_url ?? DEFAULTS.revoke_url,
  };

  return {
    name: cfg.name,
    type: 'idp_b',

    async authorizationUrl(checks: LoginChecks) {
      const url = new URL(endpoints.auth_url);
      url.searchParams.set('client_id', cfg.client_id);
      url.searchParams.set('redirect_uri', ctx.redirectUri);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('scope', 'openid email');
      url.searchParams.set('state', checks.state);
      url.searchParams.set('access_type', 'online');
      url.searchParams.set('code_challenge', createHash('sha256').update(checks.codeVerifier).digest('base64url'));
      url.searchParams.set('code_challenge_method', 'S256');
      return url;
    },

    async completeLogin(callbackUrl: URL, checks: LoginChecks) {
      const code = callbackUrl.searchParams.get('code');
      if (!code) throw new ProviderError('idp_b callback: no authorization code');
      const res = await providerFetch(
        'idp_b token',
        endpoints.token_url,
        {
          method: 'POST',
          headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            code,
            client_id: cfg.client_id,
            client_secret: cfg.client_secret,
            redirect_uri: ctx.redirectUri,
            grant_type: 'authorization_code',
            code_verifier: checks.codeVerifier,
          }),
        },
        ctx.timeoutMs,
      );
      const body = await readJson('idp_b token', res);
      if (!res.ok || !isRecord(body) || typeof body.access_token !== 'string' || !body.access_token) {
        throw new ProviderError(`idp_b token: HTTP ${res.status}, ${isRecord(body) ? safeErrorCode(body.error) : 'invalid_response'}`);
      }
      const accessToken = body.access_token;
      const infoRes = await providerFetch(
        'idp_b userinfo',
        endpoints.userinfo_url,
        { headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' } },
        ctx.timeoutMs,
      );
      const info = await readJson('idp_b userinfo', infoRes);
      if (!infoRes.ok || !isRecord(info)) throw new ProviderError(`idp_b userinfo: HTTP ${infoRes.status}`);
      const email = typeof info.email === 'string' && info.email ? info.email : undefined;
      return {
        email,
        emailVerified: info.verified_email === true,
        subject: typeof info.id === 'string' ? info.id : undefined,
        accessToken,
        // the Google Workspace domain of the account; absent for consumer accounts
        hostedDomain: typeof info.hd === 'string' && info.hd ? info.hd : undefined,
      };
    },

    canReverify() {
      return false;
    },

    async refresh() {
      throw new ProviderError('idp_b does not support refresh');
    },

    async revoke(tokens: StoredTokens) {
      if (!tokens.accessToken) return;
      const res = await providerFetch(
        'idp_b revoke',
        endpoints.revoke_url,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: tokens.accessToken }),
        },
        ctx.timeoutMs,
      );
      await res.body?.cancel();
      if (!res.ok) throw new ProviderError(`idp_b revoke: HTTP ${res.status}`);
    },

    tokensToStore(identity) {
      return { accessToken: identity.accessToken };
    },
  };
}
