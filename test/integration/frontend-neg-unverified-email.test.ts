// Negative: unverified emails never open a share, for every provider type.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, freePort, HttpUserAgent, startEchoBackend, startTestFrontend, type EchoBackend, type TestFrontend } from '../support/browser';
import { startFakeGithub, type FakeGithub } from '../support/fakeGithub';
import { startFakeGoogle, type FakeGoogle } from '../support/fakeGoogle';
import { signInAtOidcProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const GH = { clientId: 'gh-unverified', clientSecret: 'gh-unverified-secret-0123' };
const GOOGLE = { clientId: 'google-unverified', clientSecret: 'google-unverified-secret' };
const OIDC = { clientId: 'oidc-unverified', clientSecret: 'oidc-unverified-secret-0123' };

describe('negative: unverified email', () => {
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
    idp = await startOidcProvider({ clients: [{ ...OIDC, redirectUris: [`http://auth.weft.test:${oauthPort}/oidc/auth/callback`] }] });
    idp.setAccount('u', { email: 'u@example.test', emailVerified: false });
    backend = await startEchoBackend();
    const share = (token: string, provider: string) => ({ token, backendMode: 'proxy' as const, target: backend.url, oauth: { provider, emailPatterns: [], checkIntervalMs: 3_600_000 } });
    fe = await startTestFrontend({
      oauthPort,
      providers: [
        { name: 'gh', type: 'idp_a', client_id: GH.clientId, client_secret: GH.clientSecret },
        { name: 'google', type: 'idp_b', client_id: GOOGLE.clientId, client_secret: GOOGLE.clientSecret },
        { name: 'oidc', type: 'oidc', client_id: OIDC.clientId, client_secret: OIDC.clientSecret, issuer: idp.issuer, scopes: ['openid', 'email'], supports_pkce: false },
      ],
      providerEndpoints: { idp_a: gh.endpoints, idp_b: google.endpoints },
      shares: [share('a', 'gh'), share('b', 'google'), share('c', 'oidc')],
    });
    gh.signInAs('u');
    google.signInAs('u');
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await Promise.all([gh?.close(), google?.close(), idp?.close()]);
  });

  async function expectRefused(agent: HttpUserAgent, token: string, callbackUrl: string) {
    const res = await agent.request(callbackUrl);
    expect(res.status).toBe(403);
    expect(res.body).toContain('has not verified the email address u@example.test');
    expect(agent.cookie(`${COOKIE_NAME}_${token}`)).toBeUndefined();
    expect(backend.requests).toHaveLength(0);
  }

  it('idp_a: a primary email with verified=false', async () => {
    const agent = new HttpUserAgent();
    const start = await agent.request(fe.shareUrl('a', '/'));
    await expectRefused(agent, 'a', (await agent.request(start.location!)).location!);
  });

  it('idp_b: verified_email=false', async () => {
    const agent = new HttpUserAgent();
    const start = await agent.request(fe.shareUrl('b', '/'));
    await expectRefused(agent, 'b', (await agent.request(start.location!)).location!);
  });

  it('oidc: email_verified=false', async () => {
    const agent = new HttpUserAgent();
    const start = await agent.request(fe.shareUrl('c', '/'));
    await expectRefused(agent, 'c', await signInAtOidcProvider(agent, start.location!, 'u'));
  });
});
