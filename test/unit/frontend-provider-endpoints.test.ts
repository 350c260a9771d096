// idp_a / idp_b endpoints: a provider entry without overrides talks to the documented GitHub / Google endpoints;
// auth_url, token_url, api_url (idp_a) and userinfo_url, revoke_url (idp_b) replace them. Every HTTP call the
// provider makes is recorded by a stubbed fetch, so nothing leaves the machine.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { frontendConfigSchema } from '../../src/main/frontend/config';
import { createProviders, type OAuthProvider } from '../../src/main/frontend/providers';

const CHECKS = { state: 'state-1', nonce: 'nonce-1', codeVerifier: 'v'.repeat(43) };
const ENDPOINT_URL = 'https://oauth.example.com';

const GITHUB = {
  auth: 'https://github.com/login/oauth/authorize',
  token: 'https://github.com/login/oauth/access_token',
  api: 'https://api.github.com',
};
const GOOGLE = {
  auth: 'https://accounts.google.com/o/oauth2/v2/auth',
  token: 'https://oauth2.googleapis.com/token',
  userinfo: 'https://www.googleapis.com/oauth2/v2/userinfo',
  revoke: 'https://oauth2.googleapis.com/revoke',
};

/** The provider as the frontend builds it: the entry goes through config validation first. */
function provider(entry: Record<string, unknown>): OAuthProvider {
  const config = frontendConfigSchema.parse({
    bind_address: '0.0.0.0:8080',
    share_domain: 'share.example.com',
    oauth: {
      bind_address: '127.0.0.1:8181',
      endpoint_url: ENDPOINT_URL,
      cookie_name: 'svc-auth-session',
      cookie_domain: 'example.com',
      session_lifetime: '6h',
      intermediate_lifetime: '5m',
      signing_key: 's'.repeat(32),
      encryption_key: 'e'.repeat(24),
      providers: [{ name: 'p', client_id: 'client-id', client_secret: 'client-secret', ...entry }],
    },
  });
  return createProviders(config.oauth!).get('p')!;
}

interface Call {
  method: string;
  url: string;
}

let calls: Call[];

/** Answers each provider call like the real service would, by the last path segment. */
function fakeFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = String(input);
  const method = init?.method ?? 'GET';
  calls.push({ method, url });
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const path = new URL(url).pathname;
  if (method === 'POST' && (path.endsWith('/access_token') || path.endsWith('/token')))
    return Promise.resolve(json({ access_token: 'at-1', token_type: 'bearer' }));
  if (path.endsWith('/user/emails')) return Promise.resolve(json([{ email: 'a@example.test', primary: true, verified: true }]));
  if (path.endsWith('/userinfo')) return Promise.resolve(json({ id: '42', email: 'a@example.test', verified_email: true }));
  if (method === 'DELETE' && path.endsWith('/token')) return Promise.resolve(new Response(null, { status: 204 }));
  if (path.endsWith('/revoke')) return Promise.resolve(new Response(null, { status: 200 }));
  return Promise.resolve(new Response('not found', { status: 404 }));
}

beforeEach(() => {
  calls = [];
  vi.stubGlobal('fetch', vi.fn(fakeFetch));
});

afterEach(() => {
  vi.unstubAllGlobals();
});

/** Runs a whole login and a logout; returns the authorize URL and every call made, in order. */
async function exercise(p: OAuthProvider): Promise<{ authorize: URL; calls: Call[] }> {
  const authorize = await p.authorizationUrl(CHECKS);
  const callback = new URL(`${ENDPOINT_URL}/p/auth/callback?code=code-1&state=${CHECKS.state}`);
  const identity = await p.completeLogin(callback, CHECKS);
  expect(identity).toMatchObject({ email: 'a@example.test', emailVerified: true });
  await p.revoke(p.tokensToStore(identity));
  return { authorize, calls };
}

const base = (u: URL) => u.origin + u.pathname;

describe('idp_a endpoints', () => {
  it('default to github.com: authorize, token and the API (emails, token revocation)', async () => {
    const { authorize, calls } = await exercise(provider({ type: 'idp_a' }));
    expect(base(authorize)).toBe(GITHUB.auth);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${ENDPOINT_URL}/p/auth/callback`);
    expect(calls).toEqual([
      { method: 'POST', url: GITHUB.token },
      { method: 'GET', url: `${GITHUB.api}/user/emails` },
      { method: 'DELETE', url: `${GITHUB.api}/applications/client-id/token` },
    ]);
  });

  it('are replaced by auth_url, token_url and api_url (GitHub Enterprise)', async () => {
    const { authorize, calls } = await exercise(
      provider({
        type: 'idp_a',
        auth_url: 'https://ghe.example.com/login/oauth/authorize',
        token_url: 'https://ghe.example.com/login/oauth/access_token',
        api_url: 'https://ghe.example.com/api/v3/',
      }),
    );
    expect(base(authorize)).toBe('https://ghe.example.com/login/oauth/authorize');
    expect(calls).toEqual([
      { method: 'POST', url: 'https://ghe.example.com/login/oauth/access_token' },
      { method: 'GET', url: 'https://ghe.example.com/api/v3/user/emails' },
      { method: 'DELETE', url: 'https://ghe.example.com/api/v3/applications/client-id/token' },
    ]);
    expect(calls.some((c) => c.url.includes('github.com'))).toBe(false);
  });
});

describe('idp_b endpoints', () => {
  it("default to Google's: authorize, token, userinfo and revoke", async () => {
    const { authorize, calls } = await exercise(provider({ type: 'idp_b' }));
    expect(base(authorize)).toBe(GOOGLE.auth);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${ENDPOINT_URL}/p/auth/callback`);
    expect(calls).toEqual([
      { method: 'POST', url: GOOGLE.token },
      { method: 'GET', url: GOOGLE.userinfo },
      { method: 'POST', url: GOOGLE.revoke },
    ]);
  });

  it('are replaced by auth_url, token_url, userinfo_url and revoke_url', async () => {
    const { authorize, calls } = await exercise(
      provider({
        type: 'idp_b',
        auth_url: 'https://accounts.example.com/o/oauth2/v2/auth',
        token_url: 'https://accounts.example.com/token',
        userinfo_url: 'https://accounts.example.com/oauth2/v2/userinfo',
        revoke_url: 'https://accounts.example.com/revoke',
      }),
    );
    expect(base(authorize)).toBe('https://accounts.example.com/o/oauth2/v2/auth');
    expect(calls).toEqual([
      { method: 'POST', url: 'https://accounts.example.com/token' },
      { method: 'GET', url: 'https://accounts.example.com/oauth2/v2/userinfo' },
      { method: 'POST', url: 'https://accounts.example.com/revoke' },
    ]);
    expect(calls.some((c) => /google/.test(c.url))).toBe(false);
  });
});
