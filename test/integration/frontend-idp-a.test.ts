// idp_a (GitHub wire format) against a loopback fake: only the primary AND verified email counts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, HttpUserAgent, startEchoBackend, startTestFrontend, testClock, type EchoBackend, type TestFrontend } from '../support/browser';
import { startFakeGithub, type FakeGithub } from '../support/fakeGithub';

const CLIENT = { clientId: 'Iv1.gh-client', clientSecret: 'gh-client-secret-0123456789' };
const HOUR = 3_600_000;

describe('frontend: idp_a provider', () => {
  let gh: FakeGithub;
  let backend: EchoBackend;
  let fe: TestFrontend;
  const clock = testClock();

  beforeAll(async () => {
    gh = await startFakeGithub(CLIENT);
    gh.setUser('octo', [
      { email: 'octo@elsewhere.test', primary: false, verified: true, visibility: null },
      { email: 'Octo@Example.test', primary: true, verified: true, visibility: 'public' },
    ]);
    gh.setUser('unverified', [{ email: 'unverified@example.test', primary: true, verified: false, visibility: null }]);
    gh.setUser('secondary', [
      { email: 'secondary@other.test', primary: true, verified: true, visibility: null },
      { email: 'secondary@example.test', primary: false, verified: true, visibility: null },
    ]);
    gh.setUser('noprimary', [{ email: 'noprimary@example.test', primary: false, verified: true, visibility: null }]);
    backend = await startEchoBackend();
    fe = await startTestFrontend({
      now: clock.now,
      providers: [{ name: 'github', type: 'idp_a', client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret, ...gh.endpoints }],
      shares: [
        {
          token: 'gh',
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'github', emailPatterns: ['*@example.test'], checkIntervalMs: HOUR },
        },
      ],
    });
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await gh?.close();
  });

  async function login(agent: HttpUserAgent, user: string, path = '/') {
    gh.signInAs(user);
    const start = await agent.request(fe.shareUrl('gh', path));
    expect(start.status).toBe(302);
    const authorize = new URL(start.location!);
    const back = await agent.request(authorize.href);
    const callback = await agent.request(back.location!);
    return { authorize, callback };
  }

  it('uses GitHub authorize parameters and lands on the original URL', async () => {
    const agent = new HttpUserAgent();
    const { authorize, callback } = await login(agent, 'octo', '/x?y=1');
    expect(authorize.origin + authorize.pathname).toBe(gh.endpoints.auth_url);
    expect(authorize.searchParams.get('client_id')).toBe(CLIENT.clientId);
    expect(authorize.searchParams.get('scope')).toBe('user:email');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${fe.endpointUrl}/github/auth/callback`);
    expect(callback.status).toBe(302);
    expect(callback.location).toBe(fe.shareUrl('gh', '/x?y=1'));
    const echoed = (await agent.request(callback.location!)).json();
    expect(echoed.headers['svc-auth-provider']).toBe('github');
    expect(echoed.headers['svc-auth-email']).toBe('Octo@Example.test'); // the primary one, case kept
  });

  it('refuses a primary email that GitHub has not verified', async () => {
    const agent = new HttpUserAgent();
    const { callback } = await login(agent, 'unverified');
    expect(callback.status).toBe(403);
    expect(callback.body).toContain('has not verified the email address unverified@example.test');
    expect(agent.cookie(`${COOKIE_NAME}_gh`)).toBeUndefined();
  });

  it('ignores verified non-primary emails', async () => {
    const agent = new HttpUserAgent();
    const { callback } = await login(agent, 'secondary');
    expect(callback.status).toBe(403);
    expect(callback.body).toContain('secondary@other.test');
    expect(agent.cookie(`${COOKIE_NAME}_gh`)).toBeUndefined();
  });

  it('refuses an account without a primary email (403 with the logout link) and revokes its token', async () => {
    const agent = new HttpUserAgent();
    const revokedBefore = gh.revokedTokens.length;
    const { callback } = await login(agent, 'noprimary');
    expect(callback.status).toBe(403);
    expect(callback.body).toContain('did not share an email address');
    expect(callback.body).toContain(`href="${fe.endpointUrl}/github/logout?redirect_url=`);
    expect(gh.revokedTokens.length).toBe(revokedBefore + 1);
    expect(agent.cookie(`${COOKIE_NAME}_gh`)).toBeUndefined();
  });

  it('shows a retry page when the user denies access at the provider', async () => {
    const agent = new HttpUserAgent();
    gh.denyNextAuthorization();
    const start = await agent.request(fe.shareUrl('gh', '/denied'));
    const back = await agent.request(start.location!);
    const callback = await agent.request(back.location!);
    expect(callback.status).toBe(401);
    expect(callback.body).toContain(`href="${fe.shareUrl('gh', '/denied')}"`);
  });

  it("re-verifies at the check interval with GitHub's API, and signs in again once the token stops working", async () => {
    const agent = new HttpUserAgent();
    await login(agent, 'octo');
    expect((await agent.request(fe.shareUrl('gh', '/'))).status).toBe(200);
    const asked = gh.apiRequests.length;
    clock.advance(HOUR);
    // the session's token asks GitHub again: no trip to the provider, a reissued cookie
    const again = await agent.request(fe.shareUrl('gh', '/'));
    expect(again.status).toBe(200);
    expect(again.setCookies.some((c) => c.startsWith('svc-auth-session_gh='))).toBe(true);
    expect(gh.apiRequests.slice(asked)).toEqual(['GET /api/user/emails']);
    clock.advance(HOUR);
    gh.forgetTokens(); // the user revoked the app at GitHub
    const res = await agent.request(fe.shareUrl('gh', '/'));
    expect(res.status).toBe(302);
    expect(res.location).toContain(gh.endpoints.auth_url);
    expect((await agent.request(fe.shareUrl('gh', '/'), { headers: { 'x-requested-with': 'XMLHttpRequest' } })).status).toBe(401);
  });

  it('logout revokes the token with DELETE /applications/{client_id}/token and clears the cookie', async () => {
    const agent = new HttpUserAgent();
    await login(agent, 'octo');
    const token = gh.issuedTokens.at(-1)!;
    const res = await agent.request(`${fe.endpointUrl}/github/logout`);
    expect(gh.revokedTokens).toContain(token);
    expect(res.status).toBe(302);
    expect(res.location).toBe(`${fe.endpointUrl}/github/login`);
    expect(agent.cookie(`${COOKIE_NAME}_gh`)).toBeUndefined();
    const loginPage = await agent.request(res.location!);
    expect(loginPage.status).toBe(200);
    expect(loginPage.body).toContain('signed out');
  });

  it('logout still clears the cookie when revocation fails', async () => {
    const agent = new HttpUserAgent();
    await login(agent, 'octo');
    gh.failRevocation(true);
    try {
      const res = await agent.request(`${fe.endpointUrl}/github/logout?redirect_url=${encodeURIComponent(fe.shareUrl('gh', '/'))}`);
      expect(res.status).toBe(302);
      expect(res.location).toBe(fe.shareUrl('gh', '/'));
      expect(agent.cookie(`${COOKIE_NAME}_gh`)).toBeUndefined();
      expect(fe.logs.some((l) => l.includes('token revocation failed'))).toBe(true);
    } finally {
      gh.failRevocation(false);
    }
  });
});
