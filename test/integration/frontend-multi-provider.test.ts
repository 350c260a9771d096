// Several providers on one share (oauth2-proxy#926): a chooser page (or straight to the only one), the login started
// at <endpoint_url>/<name>/auth/start, the session recording the provider used, logout per provider; and the
// start route refusing what is not a login for a share.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, freePort, HttpUserAgent, startEchoBackend, startTestFrontend, type EchoBackend, type TestFrontend } from '../support/browser';
import { startFakeGithub, type FakeGithub } from '../support/fakeGithub';
import { signInAtOidcProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const GH = { clientId: 'Iv1.multi', clientSecret: 'multi-github-secret-0123456789' };
const OIDC = { clientId: 'weft-multi', clientSecret: 'multi-oidc-secret-0123456789' };
const HOUR = 3_600_000;

describe('frontend: several providers on one share', () => {
  let gh: FakeGithub;
  let idp: TestOidcProvider;
  let backend: EchoBackend;
  let fe: TestFrontend;

  beforeAll(async () => {
    const oauthPort = await freePort();
    gh = await startFakeGithub(GH);
    gh.setUser('octo', [{ email: 'octo@example.test', primary: true, verified: true, visibility: 'public' }]);
    idp = await startOidcProvider({ clients: [{ ...OIDC, redirectUris: [`http://auth.weft.test:${oauthPort}/corp/auth/callback`] }] });
    idp.setAccount('alice', { email: 'alice@example.test', emailVerified: true });
    backend = await startEchoBackend();
    fe = await startTestFrontend({
      oauthPort,
      providers: [
        { name: 'github', type: 'idp_a', client_id: GH.clientId, client_secret: GH.clientSecret, ...gh.endpoints },
        {
          name: 'corp',
          type: 'oidc',
          client_id: OIDC.clientId,
          client_secret: OIDC.clientSecret,
          issuer: idp.issuer,
          scopes: ['openid', 'email'],
          supports_pkce: true,
          end_session: false,
        },
      ],
      shares: [
        {
          token: 'both',
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'github', providers: ['github', 'corp'], emailPatterns: [], checkIntervalMs: HOUR },
        },
        { token: 'one', backendMode: 'proxy', target: backend.url, oauth: { provider: 'corp', emailPatterns: [], checkIntervalMs: HOUR } },
        { token: 'open', backendMode: 'proxy', target: backend.url },
      ],
    });
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await idp?.close();
    await gh?.close();
  });

  /** The chooser's link for a provider. */
  async function choose(agent: HttpUserAgent, provider: string, path = '/p?q=1'): Promise<string> {
    const page = await agent.request(fe.shareUrl('both', path));
    expect(page.status).toBe(200);
    const href = new RegExp(`<a href="([^"]+)">Sign in with ${provider}</a>`).exec(page.body)?.[1];
    expect(href).toBeDefined();
    return href!.replace(/&amp;/g, '&');
  }

  it('shows a chooser page listing every provider, each link starting its login at the OAuth endpoint', async () => {
    const agent = new HttpUserAgent();
    const page = await agent.request(fe.shareUrl('both', '/p?q=1'));
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('Choose how to sign in');
    const original = encodeURIComponent(fe.shareUrl('both', '/p?q=1'));
    expect(page.body).toContain(`href="${fe.endpointUrl}/github/auth/start?url=${original}"`);
    expect(page.body).toContain(`href="${fe.endpointUrl}/corp/auth/start?url=${original}"`);
    expect(page.setCookies).toEqual([]); // nothing is started until the user picks
    expect(backend.requests.some((r) => r.url === '/p?q=1')).toBe(false);
  });

  it('API requests get 401 JSON naming the providers', async () => {
    const res = await new HttpUserAgent().request(fe.shareUrl('both', '/api'), { headers: { accept: 'application/json' } });
    expect(res.status).toBe(401);
    expect(res.json()).toMatchObject({ error: 'authentication_required', provider: 'github', providers: ['github', 'corp'] });
  });

  it('a share with one provider goes straight to it', async () => {
    const res = await new HttpUserAgent().request(fe.shareUrl('one', '/'));
    expect(res.status).toBe(302);
    expect(res.location!.startsWith(`${idp.issuer}/`)).toBe(true);
  });

  it('signs in with GitHub; the session records the provider; logout of the other provider leaves it', async () => {
    const agent = new HttpUserAgent();
    gh.signInAs('octo');
    const start = await agent.request(await choose(agent, 'github'));
    expect(start.status).toBe(302);
    expect(start.location!.startsWith(gh.endpoints.auth_url)).toBe(true);
    expect(start.setCookies.some((c) => c.startsWith(`${COOKIE_NAME}.flow.`))).toBe(true);
    const back = await agent.request(start.location!);
    const callback = await agent.request(back.location!);
    expect(callback.status).toBe(302);
    expect(callback.location).toBe(fe.shareUrl('both', '/p?q=1'));
    const echoed = (await agent.request(callback.location!)).json();
    expect(echoed.headers['svc-auth-provider']).toBe('github');
    expect(echoed.headers['svc-auth-email']).toBe('octo@example.test');

    await agent.request(`${fe.endpointUrl}/corp/logout`);
    expect((await agent.request(fe.shareUrl('both', '/'))).json().headers['svc-auth-provider']).toBe('github');
    const out = await agent.request(`${fe.endpointUrl}/github/logout?redirect_url=${encodeURIComponent(fe.shareUrl('both', '/'))}`);
    expect(out.location).toBe(fe.shareUrl('both', '/'));
    expect(agent.cookie(`${COOKIE_NAME}_both`)).toBeUndefined();
    expect(gh.revokedTokens).toHaveLength(1);
  });

  it('signs in with the OIDC provider on the same share; its session says corp; its logout ends it', async () => {
    const agent = new HttpUserAgent();
    const start = await agent.request(await choose(agent, 'corp', '/x'));
    expect(start.location!.startsWith(`${idp.issuer}/`)).toBe(true);
    const done = await agent.request(await signInAtOidcProvider(agent, start.location!, 'alice'));
    expect(done.location).toBe(fe.shareUrl('both', '/x'));
    expect((await agent.request(done.location!)).json().headers['svc-auth-provider']).toBe('corp');
    // this session is not one of github's
    await agent.request(`${fe.endpointUrl}/github/logout`);
    expect((await agent.request(fe.shareUrl('both', '/x'))).status).toBe(200);
    await agent.request(`${fe.endpointUrl}/corp/logout`);
    expect((await agent.request(fe.shareUrl('both', '/x'), { headers: { accept: 'application/json' } })).status).toBe(401);
  });

  it('a session of a provider the share no longer accepts asks for a new login', async () => {
    const agent = new HttpUserAgent();
    gh.signInAs('octo');
    const start = await agent.request(await choose(agent, 'github'));
    await agent.request((await agent.request((await agent.request(start.location!)).location!)).location!);
    expect((await agent.request(fe.shareUrl('both', '/'))).status).toBe(200);
    const share = fe.shares.get('both')!;
    fe.shares.set('both', { ...share, oauth: { ...share.oauth!, provider: 'corp', providers: undefined } });
    try {
      const res = await agent.request(fe.shareUrl('both', '/'));
      expect(res.status).toBe(302);
      expect(res.location!.startsWith(`${idp.issuer}/`)).toBe(true);
    } finally {
      fe.shares.set('both', share);
    }
  });

  it('the start route refuses a provider the share does not use, another host, and shares without OAuth', async () => {
    const agent = new HttpUserAgent();
    const start = (provider: string, url: string) => agent.request(`${fe.endpointUrl}/${provider}/auth/start?url=${encodeURIComponent(url)}`);
    expect((await start('github', fe.shareUrl('one', '/'))).status).toBe(400);
    expect(await start('github', 'https://evil.test/')).toMatchObject({ status: 400 });
    expect((await start('github', fe.shareUrl('open', '/'))).status).toBe(400);
    expect((await start('github', fe.shareUrl('missing', '/'))).status).toBe(400);
    expect((await agent.request(`${fe.endpointUrl}/github/auth/start`)).status).toBe(400);
    const ok = await start('corp', fe.shareUrl('one', '/deep?x=1'));
    expect(ok.status).toBe(302);
    expect(ok.location!.startsWith(`${idp.issuer}/`)).toBe(true);
    expect((await agent.request(`${fe.endpointUrl}/github/auth/start?url=x`, { method: 'POST', body: '' })).status).toBe(405);
  });
});
