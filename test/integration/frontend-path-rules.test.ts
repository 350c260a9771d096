// Path rules per share: paths that skip the login (anchored regular expressions on the decoded, normalised path,
// never through traversal tricks or encoded slashes) and paths with a stricter rule (a GitHub team here); WebSocket
// upgrades (a dev server's hot reload) pass through after login, checked with a real WebSocket client (ws).
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { COOKIE_NAME, HttpUserAgent, startEchoBackend, startTestFrontend, type EchoBackend, type TestFrontend } from '../support/browser';
import { startFakeGithub, type FakeGithub } from '../support/fakeGithub';

const GH = { clientId: 'Iv1.paths', clientSecret: 'paths-github-secret-0123456789' };

describe('frontend: skip paths, stricter path rules and WebSockets', () => {
  let gh: FakeGithub;
  let backend: EchoBackend;
  let fe: TestFrontend;
  let port: number;

  beforeAll(async () => {
    gh = await startFakeGithub(GH);
    for (const login of ['octo', 'lead']) gh.setUser(login, [{ email: `${login}@example.test`, primary: true, verified: true, visibility: null }]);
    gh.setTeams('lead', ['acme/platform']);
    backend = await startEchoBackend();
    fe = await startTestFrontend({
      providers: [{ name: 'github', type: 'idp_a', client_id: GH.clientId, client_secret: GH.clientSecret, ...gh.endpoints }],
      shares: [
        {
          token: 'app',
          backendMode: 'proxy',
          target: backend.url,
          oauth: {
            provider: 'github',
            emailPatterns: ['*@example.test'],
            checkIntervalMs: 3_600_000,
            skipPaths: ['^/healthz$', '/public/.*'],
            pathRules: [{ path: '/admin(/.*)?', githubTeams: ['acme/platform'] }],
          },
        },
      ],
    });
    port = fe.handle.publicAddress.port;
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await gh?.close();
  });

  const url = (p: string) => fe.shareUrl('app', p);
  /** The path sent byte for byte (no client-side normalisation). */
  const raw = (agent: HttpUserAgent, p: string, headers: Record<string, string> = {}) => agent.request(url('/'), { rawPath: p, headers });

  async function login(user: string): Promise<HttpUserAgent> {
    const agent = new HttpUserAgent();
    gh.signInAs(user);
    const start = await agent.request(url('/'));
    const callback = await agent.request((await agent.request(start.location!)).location!);
    expect(callback.status).toBe(302);
    return agent;
  }

  it('serves skip paths without a login, with no identity headers (client-sent ones stripped)', async () => {
    const agent = new HttpUserAgent();
    const res = await agent.request(url('/healthz?probe=1'), { headers: { 'svc-auth-email': 'forged@evil.test' } });
    expect(res.status).toBe(200);
    expect(res.json().url).toBe('/healthz?probe=1');
    expect(res.json().headers['svc-auth-email']).toBeUndefined();
    expect((await agent.request(url('/public/app.js'))).status).toBe(200);
    expect(agent.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
  });

  it('never skips through traversal, encoded dots or slashes, backslashes, ";" or case', async () => {
    const agent = new HttpUserAgent();
    const before = backend.requests.length;
    for (const p of [
      '/public/../admin',
      '/public/%2e%2e/admin',
      '/public/%2E%2E%2Fadmin',
      '/public%2F..%2Fadmin',
      '/public/..%2fadmin',
      '/public\\..\\admin',
      '/public/..;/admin',
      '/public/%252e%252e/admin',
      '/public/a%2Fb',
      '/HEALTHZ',
      '/healthz/',
      '//healthz',
    ]) {
      const res = await raw(agent, p);
      if (p.includes('\\')) {
        // Node's HTTP parser already refuses a backslash in the request target
        expect(res.status, p).toBe(400);
        continue;
      }
      expect(res.status, p).toBe(302);
      expect(res.location!.startsWith(gh.endpoints.auth_url), p).toBe(true);
      expect((await raw(agent, p, { accept: 'application/json' })).status, p).toBe(401);
    }
    expect(backend.requests.length).toBe(before);
  });

  it('refuses paths it cannot read on a share with path rules (400)', async () => {
    const agent = new HttpUserAgent();
    expect((await raw(agent, '/public/%zz')).status).toBe(400);
    expect((await raw(agent, '/public/a%00')).status).toBe(400);
  });

  it('a signed-in user without the team uses the share but not the stricter paths, whatever their spelling', async () => {
    const agent = await login('octo');
    expect((await agent.request(url('/'))).status).toBe(200);
    for (const p of ['/admin', '/admin/users', '/ADMIN', '/Admin/x', '//admin', '/admin;x=1', '/admin%2Fusers', '/x/../admin', '/%61dmin']) {
      const res = await raw(agent, p);
      expect(res.status, p).toBe(403);
      expect(res.body).toContain('This part of the share has a stricter rule than the rest.');
      expect(res.body).toContain('your GitHub account is not a member of an organization or team allowed to access this part of it');
      expect(res.body).not.toContain('platform');
    }
    const api = await raw(agent, '/admin/api', { accept: 'application/json' });
    expect(api.status).toBe(403);
    expect(api.json()).toEqual({ error: 'forbidden', reason: 'github_membership', scope: 'path', email: 'octo@example.test' });
    // the session stays: a refused path does not end it
    expect((await agent.request(url('/other'))).status).toBe(200);
  });

  it('a team member reaches the stricter paths', async () => {
    const agent = await login('lead');
    const res = await agent.request(url('/admin/users?page=2'));
    expect(res.status).toBe(200);
    expect(res.json().url).toBe('/admin/users?page=2');
    expect(res.json().headers['svc-auth-email']).toBe('lead@example.test');
  });

  function openSocket(path: string, cookie?: string): Promise<{ ws?: WebSocket; status?: number; messages: unknown[] }> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, 'vite-hmr', {
      headers: { host: `app.share.weft.test:${port}`, ...(cookie ? { cookie } : {}) },
    });
    const messages: unknown[] = [];
    ws.on('message', (data) => messages.push(JSON.parse(data.toString())));
    ws.on('error', () => undefined); // a refused upgrade is reported through unexpected-response
    return new Promise((resolve) => {
      ws.once('open', () => resolve({ ws, messages }));
      ws.once('unexpected-response', (_req, res) => {
        resolve({ status: res.statusCode, messages });
        res.resume();
        ws.terminate();
      });
    });
  }
  const cookieOf = (agent: HttpUserAgent) =>
    agent
      .cookiesFor(url('/'))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');

  it('WebSocket (ws client, vite-hmr subprotocol): through after login, with the identity headers; 401 without', async () => {
    const agent = await login('octo');
    const { ws, messages } = await openSocket('/__vite_hmr?token=x', cookieOf(agent));
    expect(ws).toBeDefined();
    expect(ws!.protocol).toBe('vite-hmr');
    if (!messages.length) await once(ws!, 'message');
    const hello = messages[0] as { url: string; headers: Record<string, string> };
    expect(hello.url).toBe('/__vite_hmr?token=x');
    expect(hello.headers['svc-auth-email']).toBe('octo@example.test');
    expect(hello.headers['sec-websocket-protocol']).toBe('vite-hmr');
    expect(hello.headers.cookie ?? '').not.toContain(COOKIE_NAME);
    ws!.send('update');
    await once(ws!, 'message');
    expect(messages[1]).toEqual({ type: 'echo', data: 'update' });
    ws!.close();
    expect((await openSocket('/__vite_hmr')).status).toBe(401);
  });

  it('WebSocket upgrades follow the path rules: skipped paths open without a login, stricter ones refuse', async () => {
    const open = await openSocket('/public/live');
    expect(open.ws).toBeDefined();
    if (!open.messages.length) await once(open.ws!, 'message');
    expect((open.messages[0] as { headers: Record<string, string> }).headers['svc-auth-email']).toBeUndefined();
    open.ws!.close();
    const agent = await login('octo');
    expect((await openSocket('/admin/live', cookieOf(agent))).status).toBe(403);
    const lead = await login('lead');
    const allowed = await openSocket('/admin/live', cookieOf(lead));
    expect(allowed.ws).toBeDefined();
    allowed.ws!.close();
  });
});
