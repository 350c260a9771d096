// idp_b (Google wire format) against a loopback fake: PKCE S256, verified_email, revocation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, HttpUserAgent, startEchoBackend, startTestFrontend, type EchoBackend, type TestFrontend } from '../support/browser';
import { startFakeGoogle, type FakeGoogle } from '../support/fakeGoogle';

const CLIENT = { clientId: '1234-abc.apps.googleusercontent.com', clientSecret: 'GOCSPX-google-secret-0123' };

describe('frontend: idp_b provider', () => {
  let google: FakeGoogle;
  let backend: EchoBackend;
  let fe: TestFrontend;

  beforeAll(async () => {
    google = await startFakeGoogle(CLIENT);
    google.setUser('111', { email: 'grace@example.test', verifiedEmail: true });
    google.setUser('222', { email: 'unverified@example.test', verifiedEmail: false });
    google.setUser('333', { email: 'outsider@other.test', verifiedEmail: true });
    backend = await startEchoBackend();
    fe = await startTestFrontend({
      providers: [{ name: 'google', type: 'idp_b', client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret, ...google.endpoints }],
      shares: [
        {
          token: 'docs',
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'google', emailPatterns: ['*@example.test', 'boss@*'], checkIntervalMs: 3_600_000 },
        },
      ],
    });
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await google?.close();
  });

  async function login(agent: HttpUserAgent, user: string) {
    google.signInAs(user);
    const start = await agent.request(fe.shareUrl('docs', '/report?year=2024'));
    const back = await agent.request(start.location!);
    const callback = await agent.request(back.location!);
    return { authorize: new URL(start.location!), callback };
  }

  it('uses PKCE S256 and the Google endpoints, then proxies with the verified email', async () => {
    const agent = new HttpUserAgent();
    const { authorize, callback } = await login(agent, '111');
    expect(authorize.origin + authorize.pathname).toBe(google.endpoints.auth_url);
    expect(authorize.searchParams.get('response_type')).toBe('code');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('scope')).toContain('email');
    expect(callback.status).toBe(302);
    expect(callback.location).toBe(fe.shareUrl('docs', '/report?year=2024'));
    const echoed = (await agent.request(callback.location!)).json();
    expect(echoed.headers['svc-auth-email']).toBe('grace@example.test');
    expect(echoed.headers['svc-auth-provider']).toBe('google');
  });

  it('refuses verified_email=false', async () => {
    const agent = new HttpUserAgent();
    const { callback } = await login(agent, '222');
    expect(callback.status).toBe(403);
    expect(callback.body).toContain('has not verified');
    expect(agent.cookie(`${COOKIE_NAME}_docs`)).toBeUndefined();
  });

  it('refuses a verified email outside the patterns and revokes its token', async () => {
    const agent = new HttpUserAgent();
    const revokedBefore = google.revokedTokens.length;
    const { callback } = await login(agent, '333');
    expect(callback.status).toBe(403);
    expect(callback.body).toContain('outsider@other.test');
    expect(callback.body).toContain('/google/logout?redirect_url=');
    expect(google.revokedTokens.length).toBe(revokedBefore + 1);
  });

  it('logout posts the token to the revoke endpoint and clears the cookie', async () => {
    const agent = new HttpUserAgent();
    await login(agent, '111');
    const before = google.revokedTokens.length;
    const res = await agent.request(`${fe.endpointUrl}/google/logout?redirect_url=${encodeURIComponent(fe.endpointUrl + '/google/login')}`);
    expect(res.status).toBe(302);
    expect(res.location).toBe(`${fe.endpointUrl}/google/login`);
    expect(google.revokedTokens.length).toBe(before + 1);
    expect(agent.cookie(`${COOKIE_NAME}_docs`)).toBeUndefined();
  });
});
