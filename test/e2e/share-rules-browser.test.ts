// Public shares, round 2, end to end in Chromium: several providers on one share (chooser, provider recorded, logout
// per provider with the OIDC provider's RP-initiated logout), GitHub organization/team rules (PKCE), OIDC claims,
// Google Workspace domains, skip paths and stricter path rules, a WebSocket opened by the page after login, custom
// domains (by Host name on http, by SNI with their own certificate on https) and byte ranges from the web backend.
// The identity providers are oidc-provider and the GitHub/Google stand-ins speaking their wire formats.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  freePort,
  launchChromium,
  SHARE_DOMAIN,
  startEchoBackend,
  startTestFrontend,
  type EchoBackend,
  type LaunchedBrowser,
  type TestFrontend,
} from '../support/browser';
import { selfSignedCert, writeCert } from '../support/certs';
import { startFakeGithub, type FakeGithub } from '../support/fakeGithub';
import { startFakeGoogle, type FakeGoogle } from '../support/fakeGoogle';
import { signInWithBrowser, startOidcProvider, type TestOidcProvider } from '../support/oidcProvider';

const GH = { clientId: 'Iv1.rules-e2e', clientSecret: 'rules-e2e-github-secret-0123456789' };
const GG = { clientId: 'rules-e2e.apps.googleusercontent.com', clientSecret: 'rules-e2e-google-secret-0123456789' };
const OIDC = { clientId: 'weft-rules-e2e', clientSecret: 'rules-e2e-oidc-secret-0123456789' };
const HOUR = 3_600_000;
const CHECK = { emailPatterns: [] as string[], checkIntervalMs: HOUR };

describe('public shares in Chromium: providers, rules, paths, domains, ranges', () => {
  let gh: FakeGithub;
  let gg: FakeGoogle;
  let idp: TestOidcProvider;
  let backend: EchoBackend;
  let fe: TestFrontend;
  let tlsFe: TestFrontend;
  let browser: LaunchedBrowser;
  let page: Page;
  let dir: string;
  const movie = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-rules-e2e-'));
    await writeFile(path.join(dir, 'movie.mp4'), movie);
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>videos</title><video src="movie.mp4" preload="none"></video>');
    const oauthPort = await freePort();
    gh = await startFakeGithub(GH);
    gh.setUser('octo', [{ email: 'octo@example.test', primary: true, verified: true, visibility: null }]);
    gh.setUser('eve', [{ email: 'eve@example.test', primary: true, verified: true, visibility: null }]);
    gh.setOrgs('octo', ['Acme']);
    gh.setTeams('octo', ['acme/platform']);
    gh.setUser('member', [{ email: 'member@example.test', primary: true, verified: true, visibility: null }]);
    gh.setOrgs('member', ['acme']);
    gg = await startFakeGoogle(GG);
    gg.setUser('1001', { email: 'ann@corp.example', verifiedEmail: true, hostedDomain: 'corp.example' });
    gg.setUser('1002', { email: 'joe@gmail.test', verifiedEmail: true });
    idp = await startOidcProvider({
      clients: [
        {
          ...OIDC,
          redirectUris: [`http://auth.weft.test:${oauthPort}/corp/auth/callback`],
          postLogoutRedirectUris: [`http://auth.weft.test:${oauthPort}/corp/logout/done`],
        },
      ],
      extraClaims: ['groups'],
    });
    idp.setAccount('alice', { email: 'alice@example.test', emailVerified: true, claims: { groups: ['staff', 'admins'] } });
    idp.setAccount('bob', { email: 'bob@example.test', emailVerified: true, claims: { groups: ['staff'] } });
    backend = await startEchoBackend();
    fe = await startTestFrontend({
      oauthPort,
      providers: [
        { name: 'github', type: 'idp_a', client_id: GH.clientId, client_secret: GH.clientSecret, ...gh.endpoints },
        { name: 'google', type: 'idp_b', client_id: GG.clientId, client_secret: GG.clientSecret, ...gg.endpoints },
        {
          name: 'corp',
          type: 'oidc',
          client_id: OIDC.clientId,
          client_secret: OIDC.clientSecret,
          issuer: idp.issuer,
          scopes: ['openid', 'email'],
          supports_pkce: true,
        },
      ],
      shares: [
        { token: 'both', backendMode: 'proxy', target: backend.url, oauth: { provider: 'github', providers: ['github', 'corp'], ...CHECK } },
        {
          token: 'team',
          backendMode: 'proxy',
          target: backend.url,
          oauth: {
            provider: 'github',
            githubOrgs: ['acme'],
            skipPaths: ['^/healthz$'],
            pathRules: [{ path: '/admin(/.*)?', githubTeams: ['acme/platform'] }],
            ...CHECK,
          },
        },
        {
          token: 'admins',
          backendMode: 'proxy',
          target: backend.url,
          oauth: { provider: 'corp', claims: [{ name: 'groups', value: 'admins' }], ...CHECK },
        },
        { token: 'workspace', backendMode: 'proxy', target: backend.url, oauth: { provider: 'google', googleDomains: ['corp.example'], ...CHECK } },
        { token: 'site', backendMode: 'web', target: dir, domains: ['videos.custom.test'] },
        { token: 'custom', backendMode: 'proxy', target: backend.url, domains: ['app.custom.test'], oauth: { provider: 'github', ...CHECK } },
      ],
    });
    const own = selfSignedCert([`*.${SHARE_DOMAIN}`]);
    const custom = selfSignedCert(['secure.custom.test']);
    tlsFe = await startTestFrontend({
      noOAuth: true,
      tls: writeCert(dir, own, 'own-'),
      shares: [
        {
          token: 'secure',
          backendMode: 'proxy',
          target: backend.url,
          domains: ['secure.custom.test'],
          domainTls: { cert: custom.cert, key: custom.key },
        },
      ],
    });
    browser = await launchChromium({ hosts: ['*.custom.test'], ignoreHTTPSErrors: true });
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await tlsFe?.close();
    await fe?.close();
    await backend?.close();
    await idp?.close();
    await gg?.close();
    await gh?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    await browser.context.clearCookies();
    gh.signInAs(undefined);
    gg.signInAs(undefined);
  });

  const echoed = async () => JSON.parse((await page.textContent('body'))!) as { url: string; headers: Record<string, string> };

  it('several providers: a chooser; the session records the provider; logout of each, the OIDC one at the provider too', async () => {
    const original = fe.shareUrl('both', '/p?q=1');
    await page.goto(original);
    expect(await page.locator('a', { hasText: 'Sign in with' }).allTextContents()).toEqual(['Sign in with github', 'Sign in with corp']);

    await page.click('text=Sign in with corp');
    await signInWithBrowser(page, 'alice', idp.issuer);
    await page.waitForURL(original);
    expect((await echoed()).headers).toMatchObject({ 'svc-auth-email': 'alice@example.test', 'svc-auth-provider': 'corp' });

    // RP-initiated logout: the provider's end_session page, then back to the share, signed out
    await page.goto(`${fe.endpointUrl}/corp/logout?redirect_url=${encodeURIComponent(fe.shareUrl('both', '/bye'))}`);
    await page.waitForURL((u) => u.href.startsWith(idp.issuer));
    await page.click('button[value="yes"]');
    await page.waitForURL((u) => u.hostname === `both.${SHARE_DOMAIN}`);
    expect(await page.locator('a', { hasText: 'Sign in with' }).count()).toBe(2);

    gh.signInAs('octo');
    const before = gh.authorizeRequests.length;
    await page.click('text=Sign in with github');
    await page.waitForURL(fe.shareUrl('both', '/bye'));
    expect((await echoed()).headers).toMatchObject({ 'svc-auth-email': 'octo@example.test', 'svc-auth-provider': 'github' });
    // PKCE with GitHub
    expect(gh.authorizeRequests.length).toBe(before + 1);
    expect(gh.authorizeRequests.at(-1)!.get('code_challenge_method')).toBe('S256');
    // logging out of the other provider leaves this session; logging out of its own ends it
    await page.goto(`${fe.endpointUrl}/corp/logout?redirect_url=${encodeURIComponent(fe.shareUrl('both', '/still'))}`);
    await page.waitForURL(fe.shareUrl('both', '/still'));
    expect((await echoed()).headers['svc-auth-provider']).toBe('github');
    await page.goto(`${fe.endpointUrl}/github/logout?redirect_url=${encodeURIComponent(fe.shareUrl('both', '/gone'))}`);
    await page.waitForURL(fe.shareUrl('both', '/gone'));
    expect(await page.locator('a', { hasText: 'Sign in with' }).count()).toBe(2);
  });

  it('GitHub organizations and teams: an outsider reads which kind of rule refused them, not the rule', async () => {
    gh.signInAs('eve');
    await page.goto(fe.shareUrl('team', '/'));
    await page.waitForURL((u) => u.hostname === 'auth.weft.test');
    const text = (await page.textContent('body'))!;
    expect(text).toContain('your GitHub account is not a member of an organization or team allowed to access this share');
    expect(text.toLowerCase()).not.toContain('acme');

    await browser.context.clearCookies();
    gh.signInAs('member');
    await page.goto(fe.shareUrl('team', '/home'));
    await page.waitForURL(fe.shareUrl('team', '/home'));
    expect((await echoed()).headers['svc-auth-email']).toBe('member@example.test');
    // a stricter path: the organization lets in, the team rule of /admin does not
    const admin = await page.goto(fe.shareUrl('team', '/admin/users'));
    expect(admin!.status()).toBe(403);
    expect(await page.textContent('body')).toContain('This part of the share has a stricter rule than the rest.');
    const encoded = await page.goto(fe.shareUrl('team', '/%61dmin/users'));
    expect(encoded!.status()).toBe(403);

    await browser.context.clearCookies();
    gh.signInAs('octo');
    await page.goto(fe.shareUrl('team', '/admin/users'));
    await page.waitForURL(fe.shareUrl('team', '/admin/users'));
    expect((await echoed()).url).toBe('/admin/users');
  });

  it('skip paths open without a login; everything else, traversal included, goes to the login', async () => {
    const before = gh.authorizeRequests.length;
    const health = await page.goto(fe.shareUrl('team', '/healthz'));
    expect(health!.status()).toBe(200);
    expect((await echoed()).headers['svc-auth-email']).toBeUndefined();
    expect(gh.authorizeRequests.length).toBe(before);
    // Chromium sends /healthz/%2e%2e/admin as written: not the skip path, so a login
    await page.goto(fe.shareUrl('team', '/healthz/%2e%2e/admin'));
    await page.waitForURL((u) => u.href.startsWith(gh.endpoints.auth_url));
  });

  it('a WebSocket opened by the page after login reaches the backend with the identity (hot reload)', async () => {
    gh.signInAs('octo');
    await page.goto(fe.shareUrl('team', '/app'));
    await page.waitForURL(fe.shareUrl('team', '/app'));
    const wsUrl = fe.shareUrl('team', '/__vite_hmr').replace(/^http/, 'ws');
    const hello = await page.evaluate(
      (u) =>
        new Promise<{ protocol: string; first: string; echo: string }>((resolve, reject) => {
          const ws = new WebSocket(u, 'vite-hmr');
          const got: string[] = [];
          ws.onerror = () => reject(new Error('WebSocket failed'));
          ws.onmessage = (m) => {
            got.push(String(m.data));
            if (got.length === 1) ws.send('update');
            else {
              resolve({ protocol: ws.protocol, first: got[0]!, echo: got[1]! });
              ws.close();
            }
          };
        }),
      wsUrl,
    );
    expect(hello.protocol).toBe('vite-hmr');
    expect(JSON.parse(hello.first).headers['svc-auth-email']).toBe('octo@example.test');
    expect(JSON.parse(hello.echo)).toEqual({ type: 'echo', data: 'update' });
  });

  it('OIDC claims: a member of the group enters, another user is told a claim rule refused them', async () => {
    await page.goto(fe.shareUrl('admins', '/'));
    await signInWithBrowser(page, 'alice', idp.issuer);
    await page.waitForURL(fe.shareUrl('admins', '/'));
    expect((await echoed()).headers['svc-auth-email']).toBe('alice@example.test');

    await browser.context.clearCookies();
    await page.goto(fe.shareUrl('admins', '/'));
    await signInWithBrowser(page, 'bob', idp.issuer);
    await page.waitForURL((u) => u.hostname === 'auth.weft.test');
    const text = (await page.textContent('body'))!;
    expect(text).toContain('does not have a group, role or other claim allowed to access this share');
    expect(text).not.toContain('admins');
  });

  it('Google Workspace domain: a Workspace account enters, a consumer account is refused', async () => {
    gg.signInAs('1001');
    await page.goto(fe.shareUrl('workspace', '/w'));
    await page.waitForURL(fe.shareUrl('workspace', '/w'));
    expect((await echoed()).headers['svc-auth-email']).toBe('ann@corp.example');

    await browser.context.clearCookies();
    gg.signInAs('1002');
    await page.goto(fe.shareUrl('workspace', '/w'));
    await page.waitForURL((u) => u.hostname === 'auth.weft.test');
    expect(await page.textContent('body')).toContain('your Google account is not in a Google Workspace domain allowed to access this share');
  });

  it('a custom domain on the http frontend: found by its Host name, logged in through the OAuth endpoint', async () => {
    gh.signInAs('octo');
    const port = fe.handle.publicAddress.port;
    const original = `http://app.custom.test:${port}/deep?x=1`;
    await page.goto(original);
    await page.waitForURL(original);
    const seen = await echoed();
    expect(seen.url).toBe('/deep?x=1');
    expect(seen.headers['svc-auth-email']).toBe('octo@example.test');
    // the session cookie is the custom host's own
    const cookies = await browser.context.cookies(original);
    expect(cookies.some((c) => c.domain === 'app.custom.test')).toBe(true);
  });

  it("a custom domain on the https frontend is served with the share's own certificate (SNI)", async () => {
    const res = await page.goto(`https://secure.custom.test:${tlsFe.handle.publicAddress.port}/x`);
    expect(res!.status()).toBe(200);
    expect((await res!.securityDetails())!.subjectName).toBe('secure.custom.test');
    expect((await echoed()).url).toBe('/x');
  });

  it('the web backend answers byte ranges: a video plays from the middle, a download resumes', async () => {
    const port = fe.handle.publicAddress.port;
    await page.goto(`http://videos.custom.test:${port}/`);
    expect(await page.title()).toBe('videos');
    const parts = await page.evaluate(async () => {
      const part = await fetch('/movie.mp4', { headers: { Range: 'bytes=1000-1009' } });
      const tail = await fetch('/movie.mp4', { headers: { Range: 'bytes=-6' } });
      return {
        status: part.status,
        range: part.headers.get('content-range'),
        bytes: [...new Uint8Array(await part.arrayBuffer())],
        tailStatus: tail.status,
        tail: [...new Uint8Array(await tail.arrayBuffer())],
      };
    });
    expect(parts.status).toBe(206);
    expect(parts.range).toBe(`bytes 1000-1009/${movie.length}`);
    expect(parts.bytes).toEqual([...movie.subarray(1000, 1010)]);
    expect(parts.tailStatus).toBe(206);
    expect(parts.tail).toEqual([...movie.subarray(movie.length - 6)]);
  });
});
