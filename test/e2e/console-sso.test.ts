// Sign-in to the console through the network's external JWT signers, in Chromium against a real OpenID Provider
// (oidc-provider): an admin signs in at the IdP (authorization code flow with PKCE, the ID token then logs in as
// `POST /authenticate?method=ext-jwt` does); through a signer whose target token is the access token, with a second
// IdP issuing JWT access tokens for an API (its audience), and refused with the reason when the signer expects another
// audience; a non-admin whose auth policy forbids ext-jwt logins, an IdP account that matches no identity, a cancelled
// sign-in at the IdP, and a tampered or replayed state come back to the login page with a message.
import { mkdirSync } from 'node:fs';
import type { ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, isRendererStale } from '../../scripts/build-renderer';
import { SSO_CALLBACK_PATH, SSO_START_PATH } from '../../src/shared/console';
import { startTestApp, type TestApp } from '../support/app';
import { freePort, HttpUserAgent, launchChromium, type LaunchedBrowser } from '../support/browser';
import { SCREENSHOTS, screenshotBothWidths } from '../support/consoleBrowser';
import { signInAtOidcProvider, signInWithBrowser, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const CLIENT_ID = 'weft-console';
/** The API the second IdP issues its JWT access tokens for (their `aud`). */
const RESOURCE = 'https://weft.example.test/network';

describe('console: sign in through an external JWT signer (Chromium + oidc-provider)', () => {
  let idp: TestOidcProvider;
  /** an IdP issuing JWT access tokens for RESOURCE (with the account's email in them) */
  let apiIdp: TestOidcProvider;
  let apiSigner = '';
  let app: TestApp;
  let browser: LaunchedBrowser;
  let consoleUrl = '';
  const errors: string[] = [];

  /** A new page on the console's login page at 1280×800, with no cookies (of the console or the IdP) left. */
  async function loginPage(): Promise<{ page: Page }> {
    await browser.context.clearCookies();
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    // only the console's own errors count (the IdP's development pages load web fonts)
    page.on('console', (m: ConsoleMessage) => void (m.type() === 'error' && m.location().url.startsWith(consoleUrl) && errors.push(m.text())));
    page.on('pageerror', (e: Error) => void errors.push(e.message));
    await page.goto(consoleUrl);
    await page.getByRole('heading', { name: 'Sign in to Weft' }).waitFor();
    return { page };
  }

  async function signInAs(
    login: string,
    through: { name: string; idp: TestOidcProvider } = { name: 'Company IdP', idp },
  ): Promise<{ page: Page; callback: string }> {
    const { page } = await loginPage();
    const callback = page.waitForRequest((r) => r.url().startsWith(`${consoleUrl}${SSO_CALLBACK_PATH}`));
    await page.getByRole('link', { name: `Sign in with ${through.name}` }).click();
    await signInWithBrowser(page, login, through.idp.issuer);
    const url = (await callback).url();
    await page.waitForURL((u) => u.href.startsWith(consoleUrl) && !u.pathname.startsWith('/login/'));
    return { page, callback: url };
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    if (isRendererStale()) await buildRenderer();
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
    const admin = await app.adminClient();
    await admin.create('/external-jwt-signers', {
      name: 'Company IdP',
      enabled: true,
      issuer: idp.issuer,
      audience: CLIENT_ID,
      jwksEndpoint: `${idp.issuer}/jwks`,
      claimsProperty: 'sub',
      useExternalId: true,
      externalAuthUrl: idp.issuer,
      clientId: CLIENT_ID,
      scopes: ['openid', 'email'],
      targetToken: 'ID',
    });
    // verifies the access token: a JWT for RESOURCE naming the identity by its email claim (the ID token has none)
    apiSigner = await admin.create('/external-jwt-signers', {
      name: 'Company API',
      enabled: true,
      issuer: apiIdp.issuer,
      audience: RESOURCE,
      jwksEndpoint: `${apiIdp.issuer}/jwks`,
      claimsProperty: 'email',
      useExternalId: true,
      externalAuthUrl: apiIdp.issuer,
      clientId: CLIENT_ID,
      scopes: ['openid', 'network'],
      targetToken: 'ACCESS',
    });
    // not offered: disabled, or without a client id
    await admin.create('/external-jwt-signers', {
      name: 'Old IdP',
      enabled: false,
      issuer: 'https://old.example.test',
      audience: 'x',
      jwksEndpoint: 'https://old.example.test/jwks',
      externalAuthUrl: 'https://old.example.test',
      clientId: 'x',
    });
    await admin.create('/external-jwt-signers', {
      name: 'SDK only',
      enabled: true,
      issuer: 'https://sdk.example.test',
      audience: 'x',
      jwksEndpoint: 'https://sdk.example.test/jwks',
    });
    const noSso = await admin.create('/auth-policies', {
      name: 'no-sso',
      primary: {
        cert: { allowed: true, allowExpiredCerts: true },
        extJwt: { allowed: false, allowedSigners: [] },
        updb: {
          allowed: true,
          lockoutDurationMinutes: 0,
          maxAttempts: 0,
          minPasswordLength: 5,
          requireMixedCase: false,
          requireNumberChar: false,
          requireSpecialChar: false,
        },
      },
      secondary: { requireTotp: false, requireExtJwtSigner: null },
    });
    await admin.create('/identities', { name: 'Alice Admin', type: 'User', isAdmin: true, externalId: 'alice' });
    await admin.create('/identities', { name: 'Bob', type: 'User', isAdmin: false, externalId: 'bob', authPolicyId: noSso });
    await admin.create('/identities', { name: 'Bea Admin', type: 'User', isAdmin: true, externalId: 'bea@example.test' });
    await admin.close();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await idp?.close();
    await apiIdp?.close();
  });

  it('lists the enabled signers with a client id and signs an admin in through the IdP', async () => {
    const { page: login } = await loginPage();
    const offered = login.getByRole('group', { name: 'Sign in through an identity provider' }).getByRole('link');
    expect(await offered.allTextContents()).toEqual(['Sign in with Company API', 'Sign in with Company IdP']);
    await screenshotBothWidths(login, 'login-sso');
    await login.close();

    const { page } = await signInAs('alice');
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await expect.poll(() => page.getByRole('banner').textContent()).toContain('Alice Admin (admin)');
    const sessions = await page.evaluate(() => document.cookie);
    expect(sessions).toBe(''); // the session and binding cookies are HttpOnly
    await page.close();

    // the login is an ext-jwt login of the core: the REST API lists its session, made by the signer
    const admin = await app.adminClient();
    const listed = (await admin.get('/api-sessions?filter=' + encodeURIComponent('identity.name = "Alice Admin"'))).body.data;
    expect(listed.length).toBe(1);
    const signer = (await admin.get('/external-jwt-signers?filter=' + encodeURIComponent('name = "Company IdP"'))).body.data[0];
    expect(listed[0].authenticatorId).toBe(signer.id);
    await admin.close();
  });

  it('signs in through a signer of access tokens (a JWT access token of the IdP); another audience is refused, saying so', async () => {
    const through = { name: 'Company API', idp: apiIdp };
    const { page } = await signInAs('bea', through);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await expect.poll(() => page.getByRole('banner').textContent()).toContain('Bea Admin (admin)');
    await page.close();
    const admin = await app.adminClient();
    const listed = (await admin.get('/api-sessions?filter=' + encodeURIComponent('identity.name = "Bea Admin"'))).body.data;
    expect(listed.map((x: { authenticatorId: string }) => x.authenticatorId)).toEqual([apiSigner]);

    // the signer expects the client id (an ID token's audience) while it verifies access tokens
    expect((await admin.patch(`/external-jwt-signers/${apiSigner}`, { audience: CLIENT_ID })).status).toBe(200);
    const refused = await signInAs('bea', through);
    await refused.page.getByText('Sign-in refused: The token of your identity provider is not for this network', { exact: false }).waitFor();
    expect(await refused.page.getByRole('heading', { name: 'Sign in to Weft' }).count()).toBe(1);
    await screenshotBothWidths(refused.page, 'login-sso-audience');
    await refused.page.close();
    expect((await admin.patch(`/external-jwt-signers/${apiSigner}`, { audience: RESOURCE })).status).toBe(200);
    await admin.close();
  });

  it('refuses a non-admin whose auth policy forbids ext-jwt logins, with the reason', async () => {
    const { page } = await signInAs('bob');
    await page.getByText('Sign-in refused: Your identity’s auth policy does not allow signing in with this identity provider.').waitFor();
    expect(await page.getByRole('heading', { name: 'Sign in to Weft' }).count()).toBe(1);
    await screenshotBothWidths(page, 'login-sso-refused');
    await page.close();
  });

  it('refuses an IdP account that matches no identity', async () => {
    const { page } = await signInAs('carol');
    await page.getByText('Sign-in refused: Your identity provider account matches no identity in this network.', { exact: false }).waitFor();
    await page.close();
  });

  it('a sign-in cancelled at the IdP comes back with a message', async () => {
    const { page } = await loginPage();
    await page.getByRole('link', { name: 'Sign in with Company IdP' }).click();
    await page.waitForURL((u) => u.href.startsWith(idp.issuer));
    await page.getByRole('link', { name: '[ Cancel ]' }).click();
    await page.getByText('Sign-in refused: Your identity provider did not complete the sign-in', { exact: false }).waitFor();
    await page.close();
  });

  it('refuses a tampered state and a replayed callback', async () => {
    const { page, callback } = await signInAs('alice');
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.close();
    const stateMessage = 'Sign-in refused: The sign-in through your identity provider could not be verified';

    // the same callback again, signed out: the state was used once already (and its binding cookie is gone)
    const again = await loginPage();
    await again.page.goto(callback);
    await again.page.getByText(stateMessage, { exact: false }).waitFor();
    expect(await again.page.getByRole('heading', { name: 'Dashboard' }).count()).toBe(0);
    await again.page.close();

    // a flow started and completed at the IdP over HTTP, its callback held back; the browser then gets the flow's
    // binding cookie and the callback with an altered state
    const agent = new HttpUserAgent();
    const signerId = await app.adminClient().then(async (a) => {
      const list = await a.get('/external-jwt-signers?filter=' + encodeURIComponent('name = "Company IdP"'));
      await a.close();
      return list.body.data[0].id as string;
    });
    const started = await agent.request(`${consoleUrl}${SSO_START_PATH}?signer=${signerId}`);
    expect(started.status).toBe(303);
    const held = new URL(await signInAtOidcProvider(agent, started.location!, 'alice'));
    expect(held.href.startsWith(`${consoleUrl}${SSO_CALLBACK_PATH}`)).toBe(true);
    const fresh = await loginPage();
    await browser.context.addCookies(
      agent.cookiesFor(consoleUrl).map((c) => ({ name: c.name, value: c.value, url: consoleUrl, httpOnly: true, sameSite: 'Lax' as const })),
    );
    const tampered = new URL(held);
    const state = tampered.searchParams.get('state')!;
    tampered.searchParams.set('state', state.slice(0, -4) + (state.endsWith('AAAA') ? 'BBBB' : 'AAAA'));
    await fresh.page.goto(tampered.href);
    await fresh.page.getByText(stateMessage, { exact: false }).waitFor();
    await screenshotBothWidths(fresh.page, 'login-sso-state');
    expect(await fresh.page.getByRole('heading', { name: 'Dashboard' }).count()).toBe(0);
    // the untouched callback of that flow still signs in: only the altered state was refused
    await browser.context.addCookies(
      agent.cookiesFor(consoleUrl).map((c) => ({ name: c.name, value: c.value, url: consoleUrl, httpOnly: true, sameSite: 'Lax' as const })),
    );
    await fresh.page.goto(held.href);
    await fresh.page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await fresh.page.close();
    expect(errors).toEqual([]);
  });
});
