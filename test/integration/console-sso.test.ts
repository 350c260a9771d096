// The console's sign-in through an external JWT signer at the HTTP level, against a real OpenID Provider: one
// callback sent many times at once signs in once; an unknown signer, an unreachable IdP and a token the signer does not
// accept (wrong audience) are refused with their reason, and the console keeps serving. A signer whose target token is
// the access token: a JWT access token of the IdP (RFC 8707 resource, its audience) signs in, its claims property read
// from it; a signer expecting the client id as audience refuses it, saying so. Runs on the test store
// (WEFT_TEST_STORE=postgres for PostgreSQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LINK_FAILED_PARAM, SSO_CALLBACK_PATH, SSO_START_PATH } from '../../src/shared/console';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { freePort, HttpUserAgent } from '../support/browser';
import { signInAtOidcProvider, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const CLIENT_ID = 'weft-console';
/** The API the second IdP issues its JWT access tokens for (their `aud`). */
const RESOURCE = 'https://weft.example.test/network';

describe('console sign-in through an IdP (HTTP)', () => {
  let idp: TestOidcProvider;
  /** an IdP issuing JWT access tokens for RESOURCE (with the account's email in them) */
  let apiIdp: TestOidcProvider;
  let app: TestApp;
  let admin: ApiClient;
  let consoleUrl = '';
  let signerId = '';

  const signer = (over: Record<string, unknown>) => ({
    enabled: true,
    issuer: idp.issuer,
    audience: CLIENT_ID,
    jwksEndpoint: `${idp.issuer}/jwks`,
    claimsProperty: 'sub',
    useExternalId: true,
    externalAuthUrl: idp.issuer,
    clientId: CLIENT_ID,
    scopes: ['openid'],
    targetToken: 'ID',
    ...over,
  });

  /** Starts a sign-in with `id` and completes it at the IdP as `login`; the callback URL, not yet followed. */
  async function throughIdp(agent: HttpUserAgent, id: string, login: string): Promise<string> {
    const started = await agent.request(`${consoleUrl}${SSO_START_PATH}?signer=${encodeURIComponent(id)}`);
    expect(started.status).toBe(303);
    return signInAtOidcProvider(agent, started.location!, login);
  }

  const refusal = (location: string | undefined) => new URL(location ?? '', consoleUrl).searchParams.get(LOGIN_LINK_FAILED_PARAM);

  beforeAll(async () => {
    const port = await freePort();
    idp = await startOidcProvider({
      clients: [{ clientId: CLIENT_ID, tokenEndpointAuthMethod: 'none', redirectUris: [`http://127.0.0.1:${port}${SSO_CALLBACK_PATH}`] }],
    });
    apiIdp = await startOidcProvider({
      clients: [{ clientId: CLIENT_ID, tokenEndpointAuthMethod: 'none', redirectUris: [`http://127.0.0.1:${port}${SSO_CALLBACK_PATH}`] }],
      jwtAccessTokens: { resource: RESOURCE, scope: 'network', claims: ['email'] },
    });
    app = await startTestApp({ consoleAddress: `127.0.0.1:${port}`, routerListener: 'off' });
    consoleUrl = app.urls.console!;
    admin = await app.adminClient();
    signerId = await admin.create('/external-jwt-signers', signer({ name: 'Company IdP' }));
    await admin.create('/identities', { name: 'Alice Admin', type: 'User', isAdmin: true, externalId: 'alice' });
  });

  afterAll(async () => {
    await admin?.close();
    await app?.stop();
    await idp?.close();
    await apiIdp?.close();
  });

  it('one callback sent many times at once signs in once', async () => {
    const agent = new HttpUserAgent();
    const callback = await throughIdp(agent, signerId, 'alice');
    const answers = await Promise.all(Array.from({ length: 6 }, () => agent.request(callback)));
    const signedIn = answers.filter((a) => a.status === 303 && a.location === `${consoleUrl}/`);
    expect(signedIn.length).toBe(1);
    expect(signedIn[0]!.setCookies.some((c) => c.startsWith(`weft-console-${new URL(consoleUrl).port}=`))).toBe(true);
    expect(answers.filter((a) => refusal(a.location) === 'sso-state').length).toBe(5);
    const sessions = (await admin.get('/api-sessions?filter=' + encodeURIComponent('identity.name = "Alice Admin"'))).body.data;
    expect(sessions.length).toBe(1);
    expect(sessions[0].authenticatorId).toBe(signerId);
  });

  it('refuses an unknown signer, an unreachable IdP and a token of the wrong audience; the console keeps serving', async () => {
    const agent = new HttpUserAgent();
    expect(refusal((await agent.request(`${consoleUrl}${SSO_START_PATH}?signer=nope`)).location)).toBe('sso-signer');

    const closed = await freePort();
    const away = await admin.create(
      '/external-jwt-signers',
      signer({
        name: 'Away IdP',
        issuer: `http://127.0.0.1:${closed}`,
        jwksEndpoint: `http://127.0.0.1:${closed}/jwks`,
        externalAuthUrl: `http://127.0.0.1:${closed}`,
      }),
    );
    expect(refusal((await agent.request(`${consoleUrl}${SSO_START_PATH}?signer=${away}`)).location)).toBe('sso-unavailable');
    expect((await admin.del(`/external-jwt-signers/${away}`)).status).toBe(200);

    // the same IdP, but the signer expects another audience: the ID token is refused as an ext-jwt login would be
    expect((await admin.patch(`/external-jwt-signers/${signerId}`, { audience: 'someone-else' })).status).toBe(200);
    const callback = await throughIdp(agent, signerId, 'alice');
    expect(refusal((await agent.request(callback)).location)).toBe('sso-audience');
    expect((await admin.patch(`/external-jwt-signers/${signerId}`, { audience: CLIENT_ID })).status).toBe(200);

    // and then a normal sign-in works
    const fresh = new HttpUserAgent();
    const again = await fresh.request(await throughIdp(fresh, signerId, 'alice'));
    expect([again.status, again.location]).toEqual([303, `${consoleUrl}/`]);
    expect((await fresh.request(`${consoleUrl}/`)).status).toBe(200);
  });

  it('a signer of access tokens: the JWT access token signs in (audience, issuer, kid, claims property); the client id as audience is refused, saying so', async () => {
    const apiSigner = await admin.create(
      '/external-jwt-signers',
      signer({
        name: 'Company API',
        issuer: apiIdp.issuer,
        audience: RESOURCE,
        jwksEndpoint: `${apiIdp.issuer}/jwks`,
        externalAuthUrl: apiIdp.issuer,
        claimsProperty: 'email',
        scopes: ['openid', 'network'],
        targetToken: 'ACCESS',
      }),
    );
    // named by the access token's email claim (the ID token carries none: the email scope is not asked)
    const bea = await admin.create('/identities', { name: 'Bea Admin', type: 'User', isAdmin: true, externalId: 'bea@example.test' });

    const agent = new HttpUserAgent();
    const callback = await throughIdp(agent, apiSigner, 'bea');
    const signedIn = await agent.request(callback);
    expect([signedIn.status, signedIn.location]).toEqual([303, `${consoleUrl}/`]);
    expect((await agent.request(`${consoleUrl}/`)).status).toBe(200);
    const sessions = (await admin.get('/api-sessions?filter=' + encodeURIComponent(`identityId = "${bea}"`))).body.data;
    expect(sessions.map((x: { authenticatorId: string }) => x.authenticatorId)).toEqual([apiSigner]);

    // the signer expects the client id (the ID token's audience), but verifies the access token: refused, and why
    expect((await admin.patch(`/external-jwt-signers/${apiSigner}`, { audience: CLIENT_ID })).status).toBe(200);
    const other = new HttpUserAgent();
    expect(refusal((await other.request(await throughIdp(other, apiSigner, 'bea'))).location)).toBe('sso-audience');
    // the ID token (audience: the client id) would pass that signer: the access token is the one checked
    expect((await admin.patch(`/external-jwt-signers/${apiSigner}`, { targetToken: 'ID', claimsProperty: 'sub', useExternalId: false })).status).toBe(
      200,
    );
    expect(refusal((await other.request(await throughIdp(other, apiSigner, 'bea'))).location)).toBe('sso-unknown-identity');
    expect((await admin.get('/api-sessions?filter=' + encodeURIComponent(`identityId = "${bea}"`))).body.data).toHaveLength(1);
  });
});
