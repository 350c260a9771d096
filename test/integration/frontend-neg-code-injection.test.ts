// Negative (OIDC): an authorization code from one login cannot complete another login — the
// nonce (ID token) and PKCE verifier tie each code to its own state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, freePort, HttpUserAgent, startEchoBackend, startTestFrontend, type EchoBackend, type TestFrontend } from '../support/browser';
import { signInAtOidcProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const CLIENT = { clientId: 'oidc-injection', clientSecret: 'oidc-injection-secret-0123' };

describe('negative: authorization code injection (OIDC)', () => {
  let idp: TestOidcProvider;
  let backend: EchoBackend;
  let fe: TestFrontend;

  beforeAll(async () => {
    const oauthPort = await freePort();
    const redirectUris = ['nonce', 'pkce'].map((n) => `http://auth.weft.test:${oauthPort}/${n}/auth/callback`);
    idp = await startOidcProvider({ clients: [{ ...CLIENT, redirectUris }] });
    backend = await startEchoBackend();
    const provider = (name: string, pkce: boolean) => ({
      name,
      type: 'oidc' as const,
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      issuer: idp.issuer,
      scopes: ['openid', 'email'],
      supports_pkce: pkce,
    });
    fe = await startTestFrontend({
      oauthPort,
      providers: [provider('nonce', false), provider('pkce', true)],
      shares: ['nonce', 'pkce'].map((p) => ({
        token: `s-${p}`,
        backendMode: 'proxy' as const,
        target: backend.url,
        oauth: { provider: p, emailPatterns: [], checkIntervalMs: 3_600_000 },
      })),
    });
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await idp?.close();
  });

  for (const provider of ['nonce', 'pkce']) {
    it(`refuses a code swapped into another login's callback (${provider})`, async () => {
      const agent = new HttpUserAgent();
      const first = await agent.request(fe.shareUrl(`s-${provider}`, '/one'));
      const second = await agent.request(fe.shareUrl(`s-${provider}`, '/two'));
      const callbackOne = new URL(await signInAtOidcProvider(agent, first.location!, 'victim'));
      const callbackTwo = new URL(await signInAtOidcProvider(agent, second.location!, 'victim'));
      const mixed = new URL(callbackOne.href);
      mixed.searchParams.set('code', callbackTwo.searchParams.get('code')!);
      const res = await agent.request(mixed.href);
      expect(res.status).toBe(502);
      expect(agent.cookie(`${COOKIE_NAME}_s-${provider}`)).toBeUndefined();
      const failure = fe.logs
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === 'oauth code exchange failed')
        .at(-1);
      expect(failure.err).toMatch(provider === 'pkce' ? /invalid_grant/ : /"nonce" claim/);
      if (provider === 'pkce') {
        // PKCE stops the swap at the token endpoint, so the victim's own callback still works.
        // (Without PKCE the code is spent before the nonce check catches the swap.)
        expect((await agent.request(callbackTwo.href)).status).toBe(302);
      }
    });
  }
});
