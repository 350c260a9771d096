// Generic OIDC against a real oidc-provider, at the HTTP level: login with nonce + PKCE, session
// headers, transparent refresh at the check interval, session_lifetime, logout with revocation.
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COOKIE_NAME,
  freePort,
  HttpUserAgent,
  startEchoBackend,
  startTestFrontend,
  testClock,
  type EchoBackend,
  type TestFrontend,
} from '../support/browser';
import { confirmOidcLogout, signInAtOidcProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const CLIENT = { clientId: 'weft-frontend', clientSecret: 'oidc-client-secret-0123456789' };
const HOUR = 3_600_000;

describe('frontend: OIDC provider', () => {
  let idp: TestOidcProvider;
  let backend: EchoBackend;
  let fe: TestFrontend;
  const clock = testClock();

  beforeAll(async () => {
    const oauthPort = await freePort();
    idp = await startOidcProvider({
      clients: [
        {
          ...CLIENT,
          redirectUris: [`http://auth.weft.test:${oauthPort}/idp/auth/callback`, `http://auth.weft.test:${oauthPort}/idp-online/auth/callback`],
          postLogoutRedirectUris: [`http://auth.weft.test:${oauthPort}/idp/logout/done`],
        },
      ],
    });
    idp.setAccount('alice', { email: 'Alice@Example.test', emailVerified: true });
    backend = await startEchoBackend();
    fe = await startTestFrontend({
      oauthPort,
      now: clock.now,
      providers: [
        {
          name: 'idp',
          type: 'oidc',
          client_id: CLIENT.clientId,
          client_secret: CLIENT.clientSecret,
          issuer: idp.issuer,
          scopes: ['openid', 'email', 'offline_access'],
          supports_pkce: true,
        },
        // The same issuer and client without offline_access: no refresh token asked for, so no prompt=consent.
        {
          name: 'idp-online',
          type: 'oidc',
          client_id: CLIENT.clientId,
          client_secret: CLIENT.clientSecret,
          issuer: idp.issuer,
          scopes: ['openid', 'email'],
          supports_pkce: true,
        },
      ],
      shares: [
        {
          token: 'app',
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'idp', emailPatterns: ['*@example.test'], checkIntervalMs: HOUR },
        },
        { token: 'other', backendMode: 'proxy', target: backend.url, oauth: { provider: 'idp', emailPatterns: [], checkIntervalMs: HOUR } },
        {
          token: 'online',
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'idp-online', emailPatterns: ['*@example.test'], checkIntervalMs: HOUR },
        },
      ],
    });
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await idp?.close();
  });

  async function login(agent: HttpUserAgent, url: string, user = 'alice') {
    const start = await agent.request(url);
    expect(start.status).toBe(302);
    const authorize = new URL(start.location!);
    const callback = await signInAtOidcProvider(agent, authorize.href, user);
    const done = await agent.request(callback);
    return { authorize, callback, done };
  }

  it('sends the browser to the provider with state, nonce and PKCE S256, and back to the original URL with its query', async () => {
    const agent = new HttpUserAgent();
    const { authorize, done } = await login(agent, fe.shareUrl('app', '/deep/path?x=1&y=two%20words'));
    expect(authorize.origin).toBe(idp.issuer);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${fe.endpointUrl}/idp/auth/callback`);
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(authorize.searchParams.get('scope')).toBe('openid email offline_access');
    // OIDC Core 11: offline_access is honoured only with prompt=consent (oidc-provider drops it otherwise).
    expect(authorize.searchParams.getAll('prompt')).toEqual(['consent']);
    expect(done.status).toBe(302);
    expect(done.location).toBe(fe.shareUrl('app', '/deep/path?x=1&y=two%20words'));

    const session = agent.cookie(`${COOKIE_NAME}_app`)!;
    expect(session).toMatchObject({ domain: 'weft.test', path: '/', httpOnly: true, sameSite: 'Lax', secure: false });
    const setCookie = done.setCookies.find((c) => c.startsWith(`${COOKIE_NAME}_app=`))!;
    expect(setCookie).toMatch(/Max-Age=21600/);

    const page = await agent.request(done.location!);
    expect(page.status).toBe(200);
    const echoed = page.json();
    expect(echoed.url).toBe('/deep/path?x=1&y=two%20words');
    expect(echoed.headers['svc-auth-provider']).toBe('idp');
    expect(echoed.headers['svc-auth-email']).toBe('Alice@Example.test');
    expect(echoed.headers['svc-auth-expires']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(echoed.headers['svc-auth-expires'])).toBeGreaterThan(clock.now() + 5 * HOUR);
    expect(echoed.headers.cookie ?? '').not.toContain(COOKIE_NAME);
  });

  it('adds no prompt=consent when the scopes do not ask for offline_access', async () => {
    const agent = new HttpUserAgent();
    const { authorize, done } = await login(agent, fe.shareUrl('online', '/page'));
    expect(authorize.origin).toBe(idp.issuer);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${fe.endpointUrl}/idp-online/auth/callback`);
    expect(authorize.searchParams.get('scope')).toBe('openid email');
    expect(authorize.searchParams.has('prompt')).toBe(false);
    // The provider accepts it and the login completes.
    expect(done.status).toBe(302);
    expect(done.location).toBe(fe.shareUrl('online', '/page'));
    const echoed = (await agent.request(done.location!)).json();
    expect(echoed.headers['svc-auth-provider']).toBe('idp-online');
    expect(echoed.headers['svc-auth-email']).toBe('Alice@Example.test');
  });

  it('keeps sessions per share: a session for one share does not open another', async () => {
    const agent = new HttpUserAgent();
    await login(agent, fe.shareUrl('app', '/'));
    const other = await agent.request(fe.shareUrl('other', '/'));
    expect(other.status).toBe(302);
    expect(new URL(other.location!).origin).toBe(idp.issuer);
  });

  it('refreshes transparently with the refresh token at the check interval and reissues the cookie', async () => {
    const agent = new HttpUserAgent();
    const { done } = await login(agent, fe.shareUrl('app', '/'));
    const before = agent.cookie(`${COOKIE_NAME}_app`)!.value;
    const firstExpiry = (await agent.request(done.location!)).json().headers['svc-auth-expires'];

    clock.advance(HOUR + 1000);
    const refreshed = once(idp.events, 'refresh');
    const res = await agent.request(fe.shareUrl('app', '/after-refresh'));
    await refreshed;
    expect(res.status).toBe(200);
    expect(res.json().headers['svc-auth-email']).toBe('Alice@Example.test');
    expect(res.json().headers['svc-auth-expires']).toBe(firstExpiry); // refresh never extends the session
    expect(res.setCookies.some((c) => c.startsWith(`${COOKIE_NAME}_app=`))).toBe(true);
    expect(agent.cookie(`${COOKIE_NAME}_app`)!.value).not.toBe(before);

    // The reissued cookie carries the new check time: no second refresh right away.
    const grants = idp.refreshGrants;
    expect((await agent.request(fe.shareUrl('app', '/again'))).status).toBe(200);
    expect(idp.refreshGrants).toBe(grants);
  });

  it('re-checks the email at refresh: a now-unverified email is refused', async () => {
    idp.setAccount('carol', { email: 'carol@example.test', emailVerified: true });
    const agent = new HttpUserAgent();
    await login(agent, fe.shareUrl('app', '/'), 'carol');
    idp.setAccount('carol', { email: 'carol@example.test', emailVerified: false });
    clock.advance(HOUR + 1000);
    const res = await agent.request(fe.shareUrl('app', '/'));
    expect(res.status).toBe(403);
    expect(res.body).toContain('has not verified');
    expect(agent.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
  });

  it('asks everyone to sign in again after session_lifetime', async () => {
    const agent = new HttpUserAgent();
    await login(agent, fe.shareUrl('app', '/'));
    clock.advance(6 * HOUR + 1000);
    const res = await agent.request(fe.shareUrl('app', '/'));
    expect(res.status).toBe(302);
    expect(new URL(res.location!).origin).toBe(idp.issuer);
  });

  it("logs out: revokes at the provider, clears the cookie, ends the provider's session (RP-initiated logout), back to the share", async () => {
    const agent = new HttpUserAgent();
    await login(agent, fe.shareUrl('app', '/'));
    const revoked = once(idp.events, 'revoked');
    const res = await agent.request(`${fe.endpointUrl}/idp/logout?redirect_url=${encodeURIComponent(fe.shareUrl('app', '/bye'))}`);
    await revoked;
    expect(res.status).toBe(302);
    // the provider offers end_session_endpoint: the browser goes there (client_id, no id_token_hint), and comes back
    const endSession = new URL(res.location!);
    expect(`${endSession.origin}${endSession.pathname}`).toBe(`${idp.issuer}/session/end`);
    expect(endSession.searchParams.get('client_id')).toBe(CLIENT.clientId);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${fe.endpointUrl}/idp/logout/done`);
    const back = await confirmOidcLogout(agent, res.location!);
    expect(back.startsWith(`${fe.endpointUrl}/idp/logout/done?`)).toBe(true);
    const done = await agent.request(back);
    expect(done.status).toBe(302);
    expect(done.location).toBe(fe.shareUrl('app', '/bye'));
    // a forged or missing state ends on the signed-out page, never elsewhere
    const forged = await agent.request(`${fe.endpointUrl}/idp/logout/done?state=x`);
    expect(forged.status).toBe(200);
    expect(forged.body).toContain('Signed out');
    expect(res.setCookies.some((c) => c.startsWith(`${COOKIE_NAME}_app=;`) && /Max-Age=0/.test(c))).toBe(true);
    expect(agent.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
    expect((await agent.request(fe.shareUrl('app', '/'), { headers: { accept: 'application/json' } })).status).toBe(401);
  });

  it('never logs tokens, codes, cookies or secrets', () => {
    const text = fe.logs.join('\n');
    expect(text).not.toContain(CLIENT.clientSecret);
    expect(text).not.toMatch(/code=|state=|svc-auth-session_\w+=/);
    expect(text).not.toContain('test-signing-key');
    const lines = fe.logs.map((l) => JSON.parse(l));
    expect(lines.some((l) => l.msg === 'public request' && l.share === 'app' && l.provider === 'idp' && l.email === 'Alice@Example.test')).toBe(true);
  });
});
