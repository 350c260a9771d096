import { createHash } from 'node:crypto';
import type { ProviderConfig } from '../config';
import { isRecord, providerFetch, readJson, safeErrorCode } from './http';
import {
  ProviderError,
  type IdentityNeeds,
  type LoginChecks,
  type OAuthProvider,
  type ProviderContext,
  type ProviderIdentity,
  type StoredTokens,
} from './types';

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

/** Scopes that let a token list the user's private organization and team memberships. */
const ORG_SCOPES = ['read:org', 'write:org', 'admin:org', 'user'];

/** Pages of 100 followed for /user/orgs and /user/teams (10,000 memberships). */
const MAX_PAGES = 100;

interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/** The `rel="next"` URL of a Link header (RFC 8288), if any. */
function nextLink(link: string | null): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(',')) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    const rel = m ? /;\s*rel\s*=\s*"?([^";]*)"?/i.exec(m[2]!)?.[1] : undefined;
    if (rel?.toLowerCase().split(/\s+/).includes('next')) return m![1];
  }
  return undefined;
}

export function createGithubProvider(cfg: ProviderConfig, ctx: ProviderContext): OAuthProvider {
  const authUrl = cfg.auth_url ?? DEFAULTS.auth_url;
  const tokenUrl = cfg.token_url ?? DEFAULTS.token_url;
  const apiBase = (cfg.api_url ?? DEFAULTS.api_url).replace(/\/+$/, '');
  const apiOrigin = new URL(apiBase).origin;

  async function apiGet(what: string, url: string, accessToken: string): Promise<{ body: unknown; next?: string; scopes: string | null }> {
    const res = await providerFetch(what, url, { headers: { ...API_HEADERS, Authorization: `Bearer ${accessToken}` } }, ctx.timeoutMs);
    const body = await readJson(what, res);
    if (!res.ok) throw new ProviderError(`${what}: HTTP ${res.status}`);
    return { body, next: nextLink(res.headers.get('link')), scopes: res.headers.get('x-oauth-scopes') };
  }

  /** Every item of a paginated list; the token is only ever sent to the API's own origin. */
  async function apiList(what: string, path: string, accessToken: string): Promise<unknown[]> {
    const items: unknown[] = [];
    let url: string | undefined = `${apiBase}${path}?per_page=100`;
    for (let page = 0; url && page < MAX_PAGES; page++) {
      if (new URL(url).origin !== apiOrigin) throw new ProviderError(`${what}: pagination left the API origin`);
      const { body, next } = await apiGet(what, url, accessToken);
      if (!Array.isArray(body)) throw new ProviderError(`${what}: expected a list`);
      items.push(...body);
      url = next;
    }
    return items;
  }

  async function identityFor(accessToken: string, needs: IdentityNeeds = {}): Promise<ProviderIdentity> {
    const { body, scopes } = await apiGet('idp_a emails', `${apiBase}/user/emails`, accessToken);
    // A token granted without read:org (a session from before the share checked memberships) sees public memberships
    // only: it must not refuse anybody, so such a session signs in again (and is asked for read:org).
    if ((needs.githubOrgs || needs.githubTeams) && scopes !== null && !scopes.split(/[\s,]+/).some((sc) => ORG_SCOPES.includes(sc))) {
      throw new ProviderError('idp_a: the token was not granted read:org');
    }
    if (!Array.isArray(body)) throw new ProviderError('idp_a emails: expected a list');
    const emails = body.filter(
      (e): e is GithubEmail => isRecord(e) && typeof e.email === 'string' && typeof e.primary === 'boolean' && typeof e.verified === 'boolean',
    );
    const primary = emails.find((e) => e.primary);
    // Only the primary address counts, and only when the provider has verified it.
    const identity: ProviderIdentity = { email: primary?.email || undefined, emailVerified: primary?.verified === true, accessToken };
    if (needs.githubOrgs) {
      const orgs = await apiList('idp_a orgs', '/user/orgs', accessToken);
      identity.githubOrgs = orgs.flatMap((o) => (isRecord(o) && typeof o.login === 'string' ? [o.login.toLowerCase()] : []));
    }
    if (needs.githubTeams) {
      const teams = await apiList('idp_a teams', '/user/teams', accessToken);
      identity.githubTeams = teams.flatMap((t) =>
        isRecord(t) && typeof t.slug === 'string' && isRecord(t.organization) && typeof t.organization.login === 'string'
          ? [`${t.organization.login}/${t.slug}`.toLowerCase()]
          : [],
      );
    }
    return identity;
  }

  return {
    name: cfg.name,
    type: 'idp_a',

    async authorizationUrl(checks: LoginChecks, needs: IdentityNeeds = {}) {
      const url = new URL(authUrl);
      url.searchParams.set('client_id', cfg.client_id);
      url.searchParams.set('redirect_uri', ctx.redirectUri);
      // read:org lists private memberships too; asked for only when the share checks them
      url.searchParams.set('scope', needs.githubOrgs || needs.githubTeams ? 'user:email read:org' : 'user:email');
      url.searchParams.set('state', checks.state);
      // PKCE (GitHub supports it for OAuth and GitHub Apps since July 2025; older servers ignore the parameters)
      url.searchParams.set('code_challenge', createHash('sha256').update(checks.codeVerifier).digest('base64url'));
      url.searchParams.set('code_challenge_method', 'S256');
      return url;
    },

    async completeLogin(callbackUrl: URL, checks: LoginChecks, needs?: IdentityNeeds) {
      const code = callbackUrl.searchParams.get('code');
      if (!code) throw new ProviderError('idp_a callback: no authorization code');
      const res = await providerFetch(
        'idp_a token',
        tokenUrl,
        {
          method: 'POST',
          headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': API_HEADERS['User-Agent'] },
          body: new URLSearchParams({
            client_id: cfg.client_id,
            client_secret: cfg.client_secret,
            code,
            redirect_uri: ctx.redirectUri,
            code_verifier: checks.codeVerifier,
          }),
        },
        ctx.timeoutMs,
      );
      const body = await readJson('idp_a token', res);
      // GitHub reports grant errors with HTTP 200 and an "error" member.
      if (!isRecord(body) || body.error !== undefined || typeof body.access_token !== 'string' || !body.access_token) {
        const code = isRecord(body) ? safeErrorCode(body.error) : 'invalid_response';
        throw new ProviderError(`idp_a token: HTTP ${res.status}, ${code}`);
      }
      return identityFor(body.access_token, needs);
    },

    canReverify(tokens) {
      return !!tokens.accessToken;
    },

    // GitHub OAuth App tokens do not expire: re-verification asks the API again with the session's token (a revoked
    // token or a lost membership ends the session).
    async refresh(tokens: StoredTokens, needs?: IdentityNeeds) {
      if (!tokens.accessToken) throw new ProviderError('idp_a: session has no access token');
      return identityFor(tokens.accessToken, needs);
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
