// Negative: unverified or missing emails never open a share, for every provider type: 403 with a logout link.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, freePort, HttpUserAgent, startEchoBackend, startTestFrontend, type EchoBackend, type TestFrontend } from '../support/browser';
import { startFakeGithub, type FakeGithub } from '../support/fakeGithub';
import { startFakeGoogle, type FakeGoogle } from '../support/fakeGoogle';
import { signInAtOidcProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const GH = { clientId: 'gh-unverified', clientSecret: 'gh-unverified-secret-0123' };
const GOOGLE = { clientId: 'google-unverified', clientSecret: 'google-unverified-secret' };
const OIDC = { clientId: 'oidc-unverified', clientSecret: 'oidc-unverified-secret-0123' };

describe('negative: unverified or missing email', () => {
  let gh: FakeGithub;
  let google: FakeGoogle;
  let idp: TestOidcProvider;
  let backend: EchoBackend;
  let fe: TestFrontend;

  beforeAll(async () => {
    const oauthPort = await freePort();
    gh = await startFakeGithub(GH);
    gh.setUser('u', [{ email: 'u@example.test', primary: true, verified: false, visibility: null }]);
    google = await startFakeGoogle(GOOGLE);
    google.setUser('u', { email: 'u@example.test', verifiedEmail: false });
    google.setUser('n', { verifiedEmail: false }); // no email in userinfo
    const callback = (name: string) => `http://auth.weft.test:${oauthPort}/${name}/auth/callback`;
    idp = await startOidcProvider({ clients: [{ ...OIDC, redirectUris: [callback('oidc'), callback('oidc-no-email')] }] });
    idp.setAccount('u', { email: 'u@example.test', emailVerified: false });
    backend = await startEchoBackend();
    const share = (token: string, provider: string) => ({
      token,
      backendMode: 'proxy' as const,
      target: backend.url,
      oauth: { provider, emailPatterns: [], checkIntervalMs: 3_600_000 },
    });
    fe = await startTestFrontend({
      oauthPort,
      providers: [
        { name: 'gh', type: 'idp_a', client_id: GH.clientId, client_secret: GH.clientSecret, ...gh.endpoints },
        { name: 'google', type: 'idp_b', client_id: GOOGLE.clientId, client_secret: GOOGLE.clientSecret, ...google.endpoints },
        {
          name: 'oidc',
          type: 'oidc',
          client_id: OIDC.clientId,
          client_secret: OIDC.clientSecret,
          issuer: idp.issuer,
          scopes: ['openid', 'email'],
          supports_pkce: false,
        },
        // without the email scope the provider returns no email claim at all
        {
          name: 'oidc-no-email',
          type: 'oidc',
          client_id: OIDC.clientId,
          client_secret: OIDC.clientSecret,
          issuer: idp.issuer,
          scopes: ['openid'],
          supports_pkce: false,
        },
      ],
      shares: [share('a', 'gh'), share('b', 'google'), share('c', 'oidc'), share('d', 'oidc-no-email')],
    });
    gh.signInAs('u');
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await Promise.all([gh?.close(), google?.close(), idp?.close()]);
  });

  async function expectRefused(agent: HttpUserAgent, token: string, callbackUrl: string, why = 'has not verified the email address u@example.test') {
    const res = await agent.request(callbackUrl);
    expect(res.status).toBe(403);
    expect(res.body).toContain(why);
    const provider = new URL(callbackUrl).pathname.split('/')[1];
    expect(res.body).toContain(`href="${fe.endpointUrl}/${provider}/logout?redirect_url=${encodeURIComponent(fe.shareUrl(token, '/'))}"`);
    expect(agent.cookie(`${COOKIE_NAME}_${token}`)).toBeUndefined();
    expect(backend.requests).toHaveLength(0);
  }

  it('idp_a: a primary email with verified=false', async () => {
    const agent = new HttpUserAgent();
    const start = await agent.request(fe.shareUrl('a', '/'));
    await expectRefused(agent, 'a', (await agent.request(start.location!)).location!);
  });

  it('idp_b: verified_email=false', async () => {
    google.signInAs('u');
    const agent = new HttpUserAgent();
    const start = await agent.request(fe.shareUrl('b', '/'));
    await expectRefused(agent, 'b', (await agent.request(start.location!)).location!);
  });

  it('oidc: email_verified=false', async () => {
    const agent = new HttpUserAgent();
    const start = await agent.request(fe.shareUrl('c', '/'));
    await expectRefused(agent, 'c', await signInAtOidcProvider(agent, start.location!, 'u'));
  });

  it('idp_b: userinfo without an email', async () => {
    google.signInAs('n');
    const agent = new HttpUserAgent();
    const start = await agent.request(fe.shareUrl('b', '/'));
    await expectRefused(agent, 'b', (await agent.request(start.location!)).location!, 'did not share an email address');
  });

  it('oidc: no email claim (no email scope)', async () => {
    const agent = new HttpUserAgent();
    const start = await agent.request(fe.shareUrl('d', '/'));
    await expectRefused(agent, 'd', await signInAtOidcProvider(agent, start.location!, 'u'), 'did not share an email address');
  });
});
