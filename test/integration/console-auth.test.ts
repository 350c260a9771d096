// The console's sign-in and request rules: one-time links, password login, sessions (expiry, logout, MFA),
// CSRF and Host checks, static files. Talks HTTP to the real console server of a real app.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, tempDir, type TestApp, ADMIN_PASSWORD, ADMIN_USER } from '../support/app';
import { ManualClock, MINUTE } from '../support/clock';
import { epochSeconds, secretOf, totp, totpStepStart } from '../support/users';

const CSRF = { 'x-weft-console': '1' };

interface Reply {
  status: number;
  body: any;
  setCookie: string | undefined;
  location: string | undefined;
}

/** A browser-like client of the console: keeps its cookie, speaks tRPC's HTTP format. */
class ConsoleAgent {
  cookie: string | undefined;
  constructor(readonly base: string) {}

  async send(path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
    const res = await fetch(this.base + path, {
      method: init.method ?? 'GET',
      body: init.body,
      redirect: 'manual',
      headers: { ...(this.cookie ? { cookie: this.cookie } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    });
    const setCookie = res.headers.get('set-cookie') ?? undefined;
    if (setCookie) this.cookie = /Max-Age=0/.test(setCookie) ? undefined : setCookie.split(';')[0];
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body, setCookie, location: res.headers.get('location') ?? undefined };
  }

  query(path: string, input?: unknown, headers: Record<string, string> = CSRF) {
    const q = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    return this.send(`/trpc/${path}${q}`, { headers });
  }

  mutate(path: string, input?: unknown, headers: Record<string, string> = CSRF) {
    return this.send(`/trpc/${path}`, { method: 'POST', body: JSON.stringify(input ?? null), headers });
  }
}

const data = (r: Reply) => r.body?.result?.data;
const errorOf = (r: Reply) => r.body?.error?.data as { code: string; ziti?: { code: string; cause?: { field: string } } } | undefined;

describe('console sign-in, sessions and request checks', () => {
  let app: TestApp;
  const clock = new ManualClock(totpStepStart());
  const rendererDir = tempDir('weft-renderer-');

  beforeAll(async () => {
    mkdirSync(join(rendererDir, 'assets'));
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(join(rendererDir, 'assets', 'app-1234.js'), 'console.log(1)');
    app = await startTestApp({ clock, consoleAddress: '127.0.0.1:0', consoleRendererDir: rendererDir });
  });
  afterAll(() => app?.stop());

  it('a one-time link signs the default admin in once; the cookie is HttpOnly, SameSite=Strict, Path=/', async () => {
    const agent = new ConsoleAgent(app.urls.console!);
    const link = app.console!.createLoginLink();
    expect(link).toMatch(new RegExp(`^${app.urls.console}/login/link\\?token=[A-Za-z0-9_-]{43}$`));
    const r = await agent.send(link.slice(app.urls.console!.length));
    expect(r.status).toBe(303);
    expect(r.location).toBe('/');
    expect(r.setCookie).toMatch(/^weft-console-\d+=[^;]+; HttpOnly; SameSite=Strict; Path=\/$/);
    const me = data(await agent.query('session.me'));
    expect(me.identity).toMatchObject({ name: 'Default Admin', isAdmin: true });
    expect(me.partial).toBe(false);
    // the cookie carries a real API session: it is listed like any other
    expect(await app.core.store.getSql('SELECT 1 FROM api_sessions WHERE token = ?', agent.cookie!.split('=')[1])).toBeTruthy();

    const again = new ConsoleAgent(app.urls.console!);
    const reuse = await again.send(link.slice(app.urls.console!.length));
    expect(reuse.status).toBe(303);
    expect(reuse.location).toBe('/?login=link-invalid');
    expect(reuse.setCookie).toBeUndefined();
  });

  it('links expire, unknown tokens fail, and only GET is accepted', async () => {
    const agent = new ConsoleAgent(app.urls.console!);
    const link = app.console!.createLoginLink().slice(app.urls.console!.length);
    clock.advance(16 * MINUTE);
    expect((await agent.send(link)).location).toBe('/?login=link-invalid');
    expect((await agent.send('/login/link?token=not-a-token-at-all-but-long-enough')).location).toBe('/?login=link-invalid');
    expect((await agent.send('/login/link')).location).toBe('/?login=link-invalid');
    expect((await agent.send(app.console!.createLoginLink().slice(app.urls.console!.length), { method: 'POST' })).status).toBe(405);
  });

  it('password login, wrong passwords and logout behave as the REST API', async () => {
    const agent = new ConsoleAgent(app.urls.console!);
    expect(data(await agent.query('session.me'))).toBeNull();
    const bad = await agent.mutate('session.login', { username: ADMIN_USER, password: 'wrong-password' });
    expect(bad.status).toBe(401);
    expect(errorOf(bad)?.ziti?.code).toBe('INVALID_AUTH');
    expect(agent.cookie).toBeUndefined();
    const invalid = await agent.mutate('session.login', { username: '', password: 'x' });
    expect(invalid.status).toBe(400);
    expect(errorOf(invalid)?.ziti?.cause?.field).toBe('username');

    const ok = await agent.mutate('session.login', { username: ADMIN_USER, password: ADMIN_PASSWORD });
    expect(ok.status).toBe(200);
    expect(data(ok).identity.isAdmin).toBe(true);
    const token = agent.cookie!.split('=')[1];
    expect((await agent.query('resources.list', { resource: 'identities' })).status).toBe(200);

    const out = await agent.mutate('session.logout');
    expect(out.setCookie).toMatch(/Max-Age=0/);
    expect(await app.core.store.getSql('SELECT 1 FROM api_sessions WHERE token = ?', token)).toBeUndefined();
    // the old cookie is worthless now
    agent.cookie = `${ok.setCookie!.split('=')[0]}=${token}`;
    const after = await agent.query('resources.list', { resource: 'identities' });
    expect(after.status).toBe(401);
    expect(errorOf(after)?.code).toBe('UNAUTHORIZED');
  });

  it('sessions expire after the API session timeout; the dead cookie is cleared', async () => {
    const agent = new ConsoleAgent(app.urls.console!);
    await agent.mutate('session.login', { username: ADMIN_USER, password: ADMIN_PASSWORD });
    clock.advance(29 * MINUTE);
    expect((await agent.query('dashboard.overview')).status).toBe(200);
    clock.advance(31 * MINUTE);
    const r = await agent.query('dashboard.overview');
    expect(r.status).toBe(401);
    expect(r.setCookie).toMatch(/Max-Age=0/);
  });

  it('refuses tRPC calls without the CSRF header, from other origins or cross-site, and unknown Host names', async () => {
    const agent = new ConsoleAgent(app.urls.console!);
    await agent.mutate('session.login', { username: ADMIN_USER, password: ADMIN_PASSWORD });
    const input = { resource: 'identities' };
    expect((await agent.query('resources.list', input, {})).status).toBe(403);
    expect((await agent.query('resources.list', input, { 'x-weft-console': '0' })).status).toBe(403);
    expect((await agent.query('resources.list', input, { ...CSRF, origin: 'http://evil.example' })).status).toBe(403);
    expect((await agent.query('resources.list', input, { ...CSRF, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await agent.mutate('session.logout', undefined, { origin: app.urls.console! })).status).toBe(403);
    expect((await agent.query('resources.list', input, { ...CSRF, origin: app.urls.console!, 'sec-fetch-site': 'same-origin' })).status).toBe(200);

    // DNS rebinding: a page of another name that resolves to 127.0.0.1 gets nothing
    const rebound = await request(`${app.urls.console}/`, { headers: { host: 'evil.example:1281' } });
    expect(rebound.statusCode).toBe(421);
    await rebound.body.text();
    const port = new URL(app.urls.console!).port;
    const viaLocalhost = await request(`${app.urls.console}/`, { headers: { host: `localhost:${port}` } });
    expect(viaLocalhost.statusCode).toBe(200);
    await viaLocalhost.body.text();
  });

  it('serves the renderer with content types, a strict CSP and no way out of its directory', async () => {
    const agent = new ConsoleAgent(app.urls.console!);
    const res = await fetch(`${app.urls.console}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const js = await fetch(`${app.urls.console}/assets/app-1234.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toContain('immutable');
    // deep links of the single-page app get index.html; missing assets are 404
    expect((await agent.send('/identities/abc')).body).toContain('<title>console</title>');
    expect((await agent.send('/assets/missing.js')).status).toBe(404);
    for (const path of ['/..%2f..%2fpackage.json', '/%2e%2e/%2e%2e/package.json', '/assets/..%5c..%5cpackage.json', '/%00.js']) {
      const r = await agent.send(path);
      expect(r.status === 404 || r.status === 400).toBe(true);
      expect(String(r.body)).not.toContain('"name": "weft"');
    }
    expect((await agent.send('/', { method: 'DELETE' })).status).toBe(405);
  });

  describe('with MFA enrolled', () => {
    let secret: string;
    const code = (offsetSteps = 0) => totp(secret, epochSeconds(clock) + offsetSteps * 30);

    it('enrolls the signed-in admin: provisioning URL, recovery codes, then a TOTP code', async () => {
      const agent = new ConsoleAgent(app.urls.console!);
      await agent.mutate('session.login', { username: ADMIN_USER, password: ADMIN_PASSWORD });
      expect(data(await agent.query('security.mfa.status'))).toBeNull();
      const started = data(await agent.mutate('security.mfa.enroll'));
      expect(started.isVerified).toBe(false);
      expect(started.recoveryCodes).toHaveLength(20);
      secret = secretOf(started.provisioningUrl);
      const wrong = await agent.mutate('security.mfa.verify', { code: '000000' === code() ? '111111' : '000000' });
      expect(wrong.status).toBe(401);
      expect(errorOf(wrong)?.ziti?.code).toBe('INVALID_MFA_TOKEN');
      expect((await agent.mutate('security.mfa.verify', { code: code() })).status).toBe(200);
      expect(data(await agent.query('security.mfa.status')).isVerified).toBe(true);
    });

    it('a new login is partial until a code is given; partial sessions reach no data', async () => {
      clock.advance(30_000);
      const agent = new ConsoleAgent(app.urls.console!);
      const login = data(await agent.mutate('session.login', { username: ADMIN_USER, password: ADMIN_PASSWORD }));
      expect(login.partial).toBe(true);
      expect(login.authQueries[0]).toMatchObject({ typeId: 'MFA', isTotpEnrolled: true });
      const blocked = await agent.query('resources.list', { resource: 'identities' });
      expect(blocked.status).toBe(401);
      expect(blocked.body.error.message).toMatch(/Multi-factor/);
      expect((await agent.mutate('session.mfaCode', { code: code() })).status).toBe(200);
      expect(data(await agent.query('session.me')).partial).toBe(false);
      expect((await agent.query('resources.list', { resource: 'identities' })).status).toBe(200);
    });

    it('the one-time link does not skip MFA', async () => {
      clock.advance(30_000);
      const agent = new ConsoleAgent(app.urls.console!);
      await agent.send(app.console!.createLoginLink().slice(app.urls.console!.length));
      expect(data(await agent.query('session.me')).partial).toBe(true);
      expect((await agent.query('dashboard.overview')).status).toBe(401);
      expect((await agent.mutate('session.mfaCode', { code: code() })).status).toBe(200);
      expect((await agent.query('dashboard.overview')).status).toBe(200);
    });
  });
});
