// End to end in Chromium against a real oidc-provider: login to a protected share, headers seen
// by the backend, WebSocket with the session, transparent refresh, logout, and a refused email.
import { once } from 'node:events';
import type { Page, Request as PageRequest } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COOKIE_NAME,
  freePort,
  launchChromium,
  startEchoBackend,
  startTestFrontend,
  testClock,
  type EchoBackend,
  type LaunchedBrowser,
  type TestFrontend,
} from '../support/browser';
import { startOidcProvider, type TestOidcProvider, signInWithBrowser } from '../support/oidcProvider';

const CLIENT = { clientId: 'weft-e2e', clientSecret: 'e2e-client-secret-0123456789' };
const HOUR = 3_600_000;
const HOSTILE_EMAIL = '<img src=x onerror="document.title=1">@evil.test';

describe('frontend e2e: Chromium + oidc-provider', () => {
  let idp: TestOidcProvider;
  let backend: EchoBackend;
  let fe: TestFrontend;
  let browser: LaunchedBrowser;
  let page: Page;
  const clock = testClock();

  beforeAll(async () => {
    const oauthPort = await freePort();
    idp = await startOidcProvider({ clients: [{ ...CLIENT, redirectUris: [`http://auth.weft.test:${oauthPort}/idp/auth/callback`] }] });
    idp.setAccount('alice', { email: 'alice@example.test', emailVerified: true });
    idp.setAccount('mallory', { email: HOSTILE_EMAIL, emailVerified: true });
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
      ],
      shares: [
        {
          token: 'app',
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'idp', emailPatterns: ['*@EXAMPLE.test'], checkIntervalMs: HOUR },
        },
      ],
    });
    browser = await launchChromium();
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await fe?.close();
    await backend?.close();
    await idp?.close();
  });

  it('logs in through the provider and lands on the original URL with its query', async () => {
    await page.setExtraHTTPHeaders({ 'svc-auth-email': 'spoofed@evil.test', 'svc-auth-provider': 'spoofed' });
    const original = fe.shareUrl('app', '/deep/path?x=1&y=two%20words');
    await page.goto(original);
    await signInWithBrowser(page, 'alice', idp.issuer);
    await page.waitForURL(original);
    expect(page.url()).toBe(original);

    const echoed = JSON.parse((await page.textContent('body'))!);
    expect(echoed.url).toBe('/deep/path?x=1&y=two%20words');
    expect(echoed.headers['svc-auth-provider']).toBe('idp');
    expect(echoed.headers['svc-auth-email']).toBe('alice@example.test');
    expect(Date.parse(echoed.headers['svc-auth-expires'])).toBeGreaterThan(Date.now());
    expect(echoed.headers.cookie ?? '').not.toContain(COOKIE_NAME);

    const cookies = await browser.context.cookies();
    const session = cookies.find((c) => c.name === `${COOKIE_NAME}_app`);
    expect(session).toMatchObject({ domain: '.weft.test', path: '/', httpOnly: true, sameSite: 'Lax' });
    expect(cookies.some((c) => c.name.startsWith(`${COOKIE_NAME}.flow.`))).toBe(false); // binding cookie cleared
  });

  it('opens a WebSocket through the frontend with the session', async () => {
    const wsUrl = fe.shareUrl('app', '/socket?q=1').replace(/^http/, 'ws');
    const result = await page.evaluate(
      (url) =>
        new Promise<string[]>((resolve) => {
          const ws = new WebSocket(url);
          const got: string[] = [];
          ws.onopen = () => ws.send('ping');
          ws.onmessage = (e) => {
            got.push(String(e.data));
            if (got.length === 2) {
              ws.close();
              resolve(got);
            }
          };
          ws.onerror = () => resolve(['error']);
        }),
      wsUrl,
    );
    expect(result).toHaveLength(2);
    const hello = JSON.parse(result[0]);
    expect(hello.url).toBe('/socket?q=1');
    expect(hello.headers['svc-auth-email']).toBe('alice@example.test');
    expect(hello.headers['svc-auth-provider']).toBe('idp');
    expect(hello.headers.cookie ?? '').not.toContain(COOKIE_NAME);
    expect(JSON.parse(result[1])).toEqual({ type: 'echo', data: 'ping' });
  });

  it('answers fetch() and XHR without a session with 401, not a login redirect (http: no Sec-Fetch-*)', async () => {
    const session = (await browser.context.cookies()).find((c) => c.name === `${COOKIE_NAME}_app`)!;
    await browser.context.clearCookies({ name: session.name });
    try {
      const seen: Array<Promise<Record<string, string>>> = [];
      const onRequest = (r: PageRequest) => {
        if (r.url().includes('/api/')) seen.push(r.allHeaders());
      };
      page.on('request', onRequest);
      const result = await page.evaluate(async () => {
        const res = await fetch('/api/data');
        const xhr = await new Promise<number>((resolve) => {
          const x = new XMLHttpRequest();
          x.open('GET', '/api/xhr');
          x.onloadend = () => resolve(x.status);
          x.send();
        });
        return { fetchStatus: res.status, body: await res.json(), xhr };
      });
      page.off('request', onRequest);
      expect(result).toMatchObject({ fetchStatus: 401, body: { error: 'authentication_required', provider: 'idp' }, xhr: 401 });
      // What made this hard: over http Chromium sends no Sec-Fetch-Mode to tell scripts from navigations.
      expect(seen.length).toBe(2);
      for (const headers of await Promise.all(seen)) expect(headers['sec-fetch-mode']).toBeUndefined();
    } finally {
      await browser.context.addCookies([session]);
    }
  });

  it('refreshes transparently at the check interval', async () => {
    const before = (await browser.context.cookies()).find((c) => c.name === `${COOKIE_NAME}_app`)!.value;
    const grants = idp.refreshGrants;
    clock.advance(HOUR + 1000);
    const refreshed = once(idp.events, 'refresh');
    const response = await page.reload();
    await refreshed;
    expect(response!.status()).toBe(200);
    expect(idp.refreshGrants).toBe(grants + 1);
    expect(JSON.parse((await page.textContent('body'))!).headers['svc-auth-email']).toBe('alice@example.test');
    const after = (await browser.context.cookies()).find((c) => c.name === `${COOKIE_NAME}_app`)!.value;
    expect(after).not.toBe(before);
  });

  it('logs out: the session cookie is gone and the token is revoked', async () => {
    const revoked = once(idp.events, 'revoked');
    const target = fe.shareUrl('app', '/');
    await page.goto(`${fe.endpointUrl}/idp/logout?redirect_url=${encodeURIComponent(target)}`);
    await revoked;
    expect((await browser.context.cookies()).some((c) => c.name === `${COOKIE_NAME}_app`)).toBe(false);
    // Back on the share without a session means a new trip to the provider.
    await page.waitForURL((u) => u.href.startsWith(idp.issuer));
  });

  it('refuses an email outside the patterns with 403 and an escaped page', async () => {
    const second = await launchChromium();
    try {
      const p = await second.context.newPage();
      const responses: Array<{ url: string; status: number; body: Promise<string> }> = [];
      p.on('response', (r) => {
        if (r.url().startsWith(`${fe.endpointUrl}/idp/auth/callback`)) responses.push({ url: r.url(), status: r.status(), body: r.text() });
      });
      await p.goto(fe.shareUrl('app', '/'));
      await signInWithBrowser(p, 'mallory', idp.issuer);
      await p.waitForURL((u) => u.href.startsWith(`${fe.endpointUrl}/idp/auth/callback`));
      expect(responses).toHaveLength(1);
      expect(responses[0].status).toBe(403);
      const html = await responses[0].body;
      expect(html).toContain('&#60;img src=x onerror=&#34;document.title=1&#34;&#62;@evil.test');
      expect(html).not.toContain('<img');
      expect(await p.locator('img').count()).toBe(0);
      expect(await p.textContent('body')).toContain(HOSTILE_EMAIL);
      const logout = p.locator('a', { hasText: 'Sign out' });
      expect(await logout.getAttribute('href')).toMatch(new RegExp(`^${fe.endpointUrl}/idp/logout\\?redirect_url=`));
      expect((await second.context.cookies()).some((c) => c.name === `${COOKIE_NAME}_app`)).toBe(false);
    } finally {
      await second.close();
    }
  });
});
