// The whole stack in a real browser: Weft started with a frontend + oauth configuration, the real
// `weft share public` CLI creating an OAuth share through the Management API, Chromium logging in at a real
// OpenID Provider (oidc-provider on loopback), refresh, logout, a refused email, and removal on Ctrl-C.
import { once } from 'node:events';
import pino from 'pino';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runShareCommand } from '../../src/main/share/shareCommand';
import { tempDir, type TestApp } from '../support/app';
import { COOKIE_NAME, freePort, HttpUserAgent, launchChromium, startEchoBackend, type EchoBackend, type LaunchedBrowser } from '../support/browser';
import { startOidcProvider, type TestOidcProvider, signInWithBrowser } from '../support/oidcProvider';
import { frontendSection, MemoryShareIo, OffsetClock, startShareApp, startShareCli, startWeftShare, type ShareCli } from '../support/shares';

const CLIENT = { clientId: 'weft-share-e2e', clientSecret: 'share-e2e-client-secret-0123456789' };
const CHECK_INTERVAL_MS = 60_000;

describe('weft share public e2e: Weft + CLI + Chromium + oidc-provider', () => {
  const clock = new OffsetClock();
  let idp: TestOidcProvider;
  let app: TestApp;
  let backend: EchoBackend;
  let cli: ShareCli;
  let browser: LaunchedBrowser;
  let page: Page;
  let endpointUrl: string;
  const logs: string[] = [];
  const callbackUrls: string[] = [];

  beforeAll(async () => {
    const oauthPort = await freePort();
    endpointUrl = `http://auth.weft.test:${oauthPort}`;
    idp = await startOidcProvider({ clients: [{ ...CLIENT, redirectUris: [`${endpointUrl}/idp/auth/callback`] }] });
    idp.setAccount('alice', { email: 'Alice@Example.test', emailVerified: true });
    idp.setAccount('mallory', { email: 'mallory@elsewhere.test', emailVerified: true });
    const provider = {
      name: 'idp',
      type: 'oidc' as const,
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      issuer: idp.issuer,
      scopes: ['openid', 'email', 'offline_access'],
      supports_pkce: true,
    };
    [app, backend] = await Promise.all([
      startShareApp({
        frontend: frontendSection({ oauthPort, providers: [provider] }),
        clock,
        logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(line) }),
      }),
      startEchoBackend(),
    ]);
    cli = await startShareCli([
      backend.url,
      '--backend-mode',
      'proxy',
      '--oauth-provider',
      'idp',
      '--oauth-email-address-pattern',
      '*@example.test',
      '--oauth-check-interval',
      '1m',
      '--data-dir',
      app.dataDir,
    ]);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('request', (r) => {
      if (r.url().startsWith(`${endpointUrl}/idp/auth/callback`)) callbackUrls.push(r.url());
    });
  });

  afterAll(async () => {
    await browser?.close();
    await cli?.stop();
    await app?.stop();
    await backend?.close();
    await idp?.close();
  });

  it('the CLI prints the share URL on the configured share domain', () => {
    expect(cli.url).toBe(app.urls.frontend!.shareUrl.replace('{token}', cli.token));
    expect(cli.stdout).toContain('  OAuth:       provider idp; emails matching *@example.test; re-verified every 1m');
  });

  it('logs in at the provider and lands on the original URL with its query; the backend sees the three headers', async () => {
    const original = `${cli.url}deep/path?x=1&y=two%20words`;
    await page.goto(original);
    await signInWithBrowser(page, 'alice', idp.issuer);
    await page.waitForURL(original);
    expect(page.url()).toBe(original);

    const echoed = JSON.parse((await page.textContent('body'))!);
    expect(echoed.url).toBe('/deep/path?x=1&y=two%20words');
    expect(echoed.headers['svc-auth-provider']).toBe('idp');
    expect(echoed.headers['svc-auth-email']).toBe('Alice@Example.test');
    const expires = Date.parse(echoed.headers['svc-auth-expires']);
    expect(expires).toBeGreaterThan(clock.now().getTime());
    expect(echoed.headers['svc-auth-expires']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(echoed.headers.cookie ?? '').not.toContain(COOKIE_NAME);
    const session = (await browser.context.cookies()).find((c) => c.name === `${COOKIE_NAME}_${cli.token}`);
    expect(session).toMatchObject({ domain: '.weft.test', httpOnly: true, sameSite: 'Lax' });
  });

  it('logs requests with provider and email, never tokens or cookies', async () => {
    const entries = logs.map((l) => JSON.parse(l));
    expect(entries).toContainEqual(
      expect.objectContaining({
        msg: 'public request',
        share: cli.token,
        provider: 'idp',
        email: 'Alice@Example.test',
        status: 200,
        path: '/deep/path',
      }),
    );
    expect(entries).toContainEqual(
      expect.objectContaining({ msg: 'oauth request', route: 'auth/callback', provider: 'idp', email: 'Alice@Example.test', status: 302 }),
    );
    const session = (await browser.context.cookies()).find((c) => c.name === `${COOKIE_NAME}_${cli.token}`)!;
    expect(callbackUrls).toHaveLength(1);
    const callback = new URL(callbackUrls[0]!).searchParams;
    const secrets = [session.value, callback.get('code')!, callback.get('state')!];
    for (const secret of secrets) expect(secret.length).toBeGreaterThan(10);
    for (const line of logs) for (const secret of secrets) expect(line).not.toContain(secret);
    expect(logs.join('\n')).not.toMatch(/svc-auth-session_[a-z0-9]+=|"cookie"|authorization/i);
  });

  it('answers /health on both listeners', async () => {
    const agent = new HttpUserAgent();
    for (const listener of [app.urls.frontend!.publicListener, app.urls.frontend!.oauthListener!]) {
      const res = await agent.request(`${listener}/health`);
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
    }
  });

  it('re-verifies at the short check interval with a transparent refresh', async () => {
    const grants = idp.refreshGrants;
    clock.advance(CHECK_INTERVAL_MS + 1000);
    const refreshed = once(idp.events, 'refresh');
    const response = await page.reload();
    await refreshed;
    expect(response!.status()).toBe(200);
    expect(idp.refreshGrants).toBe(grants + 1);
    expect(JSON.parse((await page.textContent('body'))!).headers['svc-auth-email']).toBe('Alice@Example.test');
  });

  it('logs out: the token is revoked, the cookie is gone, and the share asks for a login again', async () => {
    const revoked = once(idp.events, 'revoked');
    await page.goto(`${endpointUrl}/idp/logout?redirect_url=${encodeURIComponent(cli.url)}`);
    await revoked;
    expect((await browser.context.cookies()).some((c) => c.name === `${COOKIE_NAME}_${cli.token}`)).toBe(false);
    await page.waitForURL((u) => u.href.startsWith(idp.issuer));
  });

  it('refuses an email outside the share pattern with 403', async () => {
    const second = await launchChromium();
    try {
      const p = await second.context.newPage();
      const callbacks: number[] = [];
      p.on('response', (r) => {
        if (r.url().startsWith(`${endpointUrl}/idp/auth/callback`)) callbacks.push(r.status());
      });
      await p.goto(cli.url);
      await signInWithBrowser(p, 'mallory', idp.issuer);
      await p.waitForURL((u) => u.href.startsWith(`${endpointUrl}/idp/auth/callback`));
      expect(callbacks).toEqual([403]);
      expect(await p.textContent('body')).toContain('mallory@elsewhere.test');
      expect((await second.context.cookies()).some((c) => c.name === `${COOKIE_NAME}_${cli.token}`)).toBe(false);
      expect(backend.requests.some((r) => r.headers['svc-auth-email'] === 'mallory@elsewhere.test')).toBe(false);
    } finally {
      await second.close();
    }
  });

  it("an overlay share hosted elsewhere (weft share public --remote, weft share host <grant>): the same login, the host's backend sees the three headers", async () => {
    const remote = await startShareCli([
      `${backend.url}/hosted`,
      '--backend-mode',
      'proxy',
      '--remote',
      '--reserved',
      '--oauth-provider',
      'idp',
      '--oauth-email-address-pattern',
      '*@example.test',
      '--data-dir',
      app.dataDir,
    ]);
    expect(await remote.exited).toBe(0);
    const grant = remote.stdout.find((l) => l.startsWith('  share grant: '))!.slice('  share grant: '.length);
    const host = await startWeftShare('host', [grant], { cwd: tempDir('weft-host-') });
    const other = await launchChromium();
    try {
      const p = await other.context.newPage();
      const original = `${remote.url}via/overlay?q=1`;
      await p.goto(original);
      await signInWithBrowser(p, 'alice', idp.issuer);
      await p.waitForURL(original);
      const echoed = JSON.parse((await p.textContent('body'))!);
      expect(echoed.url).toBe('/hosted/via/overlay?q=1');
      expect(echoed.headers['svc-auth-provider']).toBe('idp');
      expect(echoed.headers['svc-auth-email']).toBe('Alice@Example.test');
      expect(echoed.headers.cookie ?? '').not.toContain(COOKIE_NAME);
      expect((await other.context.cookies()).some((c) => c.name === `${COOKIE_NAME}_${remote.token}`)).toBe(true);
    } finally {
      await other.close();
      await host.stop();
      await runShareCommand(['release', remote.token, '--data-dir', app.dataDir], new MemoryShareIo());
    }
  });

  it('Ctrl-C on the CLI removes the share: the URL answers 404', async () => {
    expect(await cli.stop('SIGINT')).toBe(0);
    expect(cli.stdout.at(-1)).toBe(`Share ${cli.token} removed.`);
    const res = await new HttpUserAgent().request(cli.url);
    expect(res.status).toBe(404);
    const response = await page.goto(cli.url);
    expect(response!.status()).toBe(404);
  });
});
