import type { ProviderConfig } from '../config';
import { isRecord, providerFetch, readJson, safeErrorCode } from './http';
import { ProviderError, type LoginChecks, type OAuthProvider, type ProviderContext, type ProviderIdentity, type StoredTokens } from './types';

// idp_a speaks GitHub's OAuth App wire format; auth_url, token_url and api_url point it at GitHub Enterprise
// (https://<host>/login/oauth/authorize, https://<host>/login/oauth/access_token, https://<host>/api/v3).
const DEFAULTS = {
  auth_url: 'https://github.com/login/oauth/authorize',
  token_url: 'https://github.com/login/oauth/access_token',
  api_url: 'https://api.github.com',
};

const API_HEADERS = {
  Accept: 'application/vnd.github+json',
  'X-GitHub-Api-Version': '2022-11-28',
  'User-Agent': 'weft-frontend',
};

interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

export function createGithubProvider(cfg: ProviderConfig, ctx: ProviderContext): OAuthProvider {
  const authUrl = cfg.auth_url ?? DEFAULTS.auth_url;
  const tokenUrl = cfg.token_url ?? DEFAULTS.token_url;
  const apiBase = (cfg.api_url ?? DEFAULTS.api_url).replace(/\/+$/, '');

  async function fetchPrimaryEmail(accessToken: string): Promise<ProviderIdentity> {
    const res = await providerFetch(
      'idp_a emails',
      `${apiBase}/user/emails`,
      { headers: { ...API_HEADERS, Authorization: `Bearer ${accessToken}` } },
      ctx.timeoutMs,
    );
    const body = await readJson('idp_a emails', res);
    if (!res.ok) throw new ProviderError(`idp_a emails: HTTP ${res.status}`);
    if (!Array.isArray(body)) throw new ProviderError('idp_a emails: expected a list');
    const emails = body.filter(
      (e): e is GithubEmail => isRecord(e) && typeof e.email === 'string' && typeof e.primary === 'boolean' && typeof e.verified === 'boolean',
    );
    const primary = emails.find((e) => e.primary);
    // Only the primary address counts, and only when the provider has verified it.
    return { email: primary?.email || undefined, emailVerified: primary?.verified === true, accessToken };
  }

  return {
    name: cfg.name,
    type: 'idp_a',
    supportsRefresh: false,

    async authorizationUrl(checks: LoginChecks) {
      const url = new URL(authUrl);
      url.searchParams.set('client_id', cfg.client_id);
      url.searchParams.set('redirect_uri', ctx.redirectUri);
      url.searchParams.set('scope', 'user:email');
      url.searchParams.set('state', checks.state);
      return url;
    },

    async completeLogin(callbackUrl: URL) {
      const code = callbackUrl.searchParams.get('code');
      if (!code) throw new ProviderError('idp_a callback: no authorization code');
      const res = await providerFetch(
        'idp_a token',
        tokenUrl,
        {
          method: 'POST',
          headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': API_HEADERS['User-Agent'] },
          body: new URLSearchParams({ client_id: cfg.client_id, client_secret: cfg.client_secret, code, redirect_uri: ctx.redirectUri }),
        },
        ctx.timeoutMs,
      );
      const body = await readJson('idp_a token', res);
      // GitHub reports grant errors with HTTP 200 and an "error" member.
      if (!isRecord(body) || body.error !== undefined || typeof body.access_token !== 'string' || !body.access_token) {
        const code = isRecord(body) ? safeErrorCode(body.error) : 'invalid_response';
        throw new ProviderError(`idp_a token: HTTP ${res.status}, ${code}`);
      }
      return fetchPrimaryEmail(body.access_token);
    },

    async refresh() {
      throw new ProviderError('idp_a does not support refresh');
    },

    async revoke(tokens: StoredTokens) {
      if (!tokens.accessToken) return;
      const basic = Buffer.from(`${cfg.client_id}:${cfg.client_secret}`).toString('base64');
      const res = await providerFetch(
        'idp_a revoke',
        `${apiBase}/applications/${encodeURIComponent(cfg.client_id)}/token`,
        {
          method: 'DELETE',
          headers: { ...API_HEADERS, Authorization: `Basic ${basic}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ access_token: tokens.accessToken }),
        },
        ctx.timeoutMs,
      );
      await res.body?.cancel();
      if (res.status !== 204) throw new ProviderError(`idp_a revoke: HTTP ${res.status}`);
    },

    tokensToStore(identity) {
      return { accessToken: identity.accessToken };
    },
  };
}
