// endpoint_url with a path (behind a reverse proxy that passes it on): the OAuth routes live under it — callbacks
// at <endpoint_url>/<provider>/auth/callback, logout at <endpoint_url>/<provider>/logout — and every URL the
// frontend builds (redirect URI, logout links, the page after logout) carries it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUTH_HOST,
  COOKIE_NAME,
  freePort,
  HttpUserAgent,
  startEchoBackend,
  startTestFrontend,
  type EchoBackend,
  type TestFrontend,
} from '../support/browser';
import { startFakeGithub, type FakeGithub } from '../support/fakeGithub';

const CLIENT = { clientId: 'Iv1.path-client', clientSecret: 'path-client-secret-0123456789' };

describe('frontend: endpoint_url with a path', () => {
  let gh: FakeGithub;
  let backend: EchoBackend;
  let fe: TestFrontend;
  let origin: string;

  beforeAll(async () => {
    gh = await startFakeGithub(CLIENT);
    gh.setUser('octo', [{ email: 'octo@example.test', primary: true, verified: true, visibility: null }]);
    gh.setUser('outsider', [{ email: 'outsider@other.test', primary: true, verified: true, visibility: null }]);
    backend = await startEchoBackend();
    const oauthPort = await freePort();
    origin = `http://${AUTH_HOST}:${oauthPort}`;
    fe = await startTestFrontend({
      oauthPort,
      oauth: { endpoint_url: `${origin}/sso/` },
      providers: [{ name: 'github', type: 'idp_a', client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret, ...gh.endpoints }],
      shares: [
        {
          token: 'app',
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'github', emailPatterns: ['*@example.test'], checkIntervalMs: 3_600_000 },
        },
      ],
    });
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await gh?.close();
  });

  async function login(agent: HttpUserAgent, user: string) {
    gh.signInAs(user);
    const start = await agent.request(fe.shareUrl('app', '/p?q=1'));
    const authorize = new URL(start.location!);
    const back = await agent.request(authorize.href);
    return { authorize, callbackUrl: back.location!, callback: await agent.request(back.location!) };
  }

  it('registers and serves the callback under the path', async () => {
    expect(fe.endpointUrl).toBe(`${origin}/sso`);
    const agent = new HttpUserAgent();
    const { authorize, callbackUrl, callback } = await login(agent, 'octo');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${origin}/sso/github/auth/callback`);
    expect(new URL(callbackUrl).pathname).toBe('/sso/github/auth/callback');
    expect(callback.status).toBe(302);
    expect(callback.location).toBe(fe.shareUrl('app', '/p?q=1'));
    expect((await agent.request(callback.location!)).json().headers['svc-auth-email']).toBe('octo@example.test');
  });

  it('links a refused user to the logout under the path', async () => {
    const { callback } = await login(new HttpUserAgent(), 'outsider');
    expect(callback.status).toBe(403);
    expect(callback.body).toContain(`href="${origin}/sso/github/logout?redirect_url=`);
  });

  it('logs out under the path and lands on the signed-out page there', async () => {
    const agent = new HttpUserAgent();
    await login(agent, 'octo');
    const res = await agent.request(`${origin}/sso/github/logout`);
    expect(res.status).toBe(302);
    expect(res.location).toBe(`${origin}/sso/github/login`);
    expect(agent.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
    const page = await agent.request(res.location!);
    expect(page.status).toBe(200);
    expect(page.body).toContain('You are signed out of github.');
  });

  it('redirects after logout only to shares or under the path', async () => {
    const agent = new HttpUserAgent();
    const to = async (target: string) => (await agent.request(`${origin}/sso/github/logout?redirect_url=${encodeURIComponent(target)}`)).location;
    expect(await to(`${origin}/sso/github/login`)).toBe(`${origin}/sso/github/login`);
    expect(await to(fe.shareUrl('app', '/bye'))).toBe(fe.shareUrl('app', '/bye'));
    expect(await to(`${origin}/other-app/`)).toBe(`${origin}/sso/github/login`);
    expect(await to(`${origin}/ssox/`)).toBe(`${origin}/sso/github/login`);
  });

  it('answers nothing outside the path, except /health', async () => {
    const agent = new HttpUserAgent();
    expect((await agent.request(`${origin}/github/logout`)).status).toBe(404);
    expect((await agent.request(`${origin}/github/auth/callback?code=x&state=y`)).status).toBe(404);
    expect((await agent.request(`${origin}/ssogithub/logout`)).status).toBe(404);
    expect((await agent.request(`${origin}/health`)).json()).toEqual({ status: 'ok' });
    expect((await agent.request(`${origin}/sso/health`)).json()).toEqual({ status: 'ok' });
  });
});
