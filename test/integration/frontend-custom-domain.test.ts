// A share at its own host name besides <token>.<share domain>: found by the Host name (http) and, on an https
// listener, presented with its own certificate (SNI). Its logins go through the OAuth endpoint and come back with a
// single-use ticket bound to the browser that started them; its session cookie is host-only; its logout is on the
// host itself.
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COOKIE_NAME,
  HttpUserAgent,
  SHARE_DOMAIN,
  startEchoBackend,
  startTestFrontend,
  type EchoBackend,
  type TestFrontend,
} from '../support/browser';
import { selfSignedCert, writeCert, type TestCert } from '../support/certs';
import { startFakeGithub, type FakeGithub } from '../support/fakeGithub';

const GH = { clientId: 'Iv1.domains', clientSecret: 'domains-github-secret-0123456789' };
const HOUR = 3_600_000;

describe('frontend: custom domains', () => {
  let gh: FakeGithub;
  let backend: EchoBackend;
  let fe: TestFrontend;
  let port: number;
  const at = (host: string, p = '/') => `http://${host}:${port}${p}`;

  beforeAll(async () => {
    gh = await startFakeGithub(GH);
    gh.setUser('octo', [{ email: 'octo@example.test', primary: true, verified: true, visibility: null }]);
    gh.setUser('eve', [{ email: 'eve@elsewhere.test', primary: true, verified: true, visibility: null }]);
    backend = await startEchoBackend();
    const oauth = { provider: 'github', emailPatterns: ['*@example.test'], checkIntervalMs: HOUR };
    fe = await startTestFrontend({
      providers: [{ name: 'github', type: 'idp_a', client_id: GH.clientId, client_secret: GH.clientSecret, ...gh.endpoints }],
      shares: [
        { token: 'app', backendMode: 'proxy', target: backend.url, domains: ['app.custom.test'], oauth },
        { token: 'other', backendMode: 'proxy', target: backend.url, domains: ['other.custom.test'], oauth },
        { token: 'open', backendMode: 'proxy', target: backend.url, domains: ['open.custom.test'] },
      ],
    });
    port = fe.handle.publicAddress.port;
  });

  afterAll(async () => {
    await fe?.close();
    await backend?.close();
    await gh?.close();
  });

  /** Runs a login on the custom host up to the ticket redirect; returns the agent and the ticket URL. */
  async function toTicket(user: string, host = 'app.custom.test', p = '/deep?x=1') {
    const agent = new HttpUserAgent();
    gh.signInAs(user);
    const first = await agent.request(at(host, p));
    const start = await agent.request(first.location!);
    const callback = await agent.request((await agent.request(start.location!)).location!);
    return { agent, first, start, callback };
  }

  it('answers at its own host name; a share without OAuth too; unknown hosts get 404', async () => {
    const agent = new HttpUserAgent();
    const open = await agent.request(at('open.custom.test', '/hello?x=1'));
    expect(open.status).toBe(200);
    expect(open.json().url).toBe('/hello?x=1');
    expect(open.json().headers['x-forwarded-host']).toBe(`open.custom.test:${port}`);
    expect((await agent.request(at('nobody.custom.test'))).status).toBe(404);
    expect((await agent.request(at('OPEN.Custom.Test', '/'))).status).toBe(200);
  });

  it('logs in through the OAuth endpoint and lands back with a host-only session cookie', async () => {
    const { agent, first, start, callback } = await toTicket('octo');
    // the custom host binds the login to this browser with a host-only cookie and starts it at the endpoint
    expect(first.status).toBe(302);
    expect(
      first.location!.startsWith(`${fe.endpointUrl}/github/auth/start?url=${encodeURIComponent(at('app.custom.test', '/deep?x=1'))}&bind=`),
    ).toBe(true);
    expect(first.setCookies).toHaveLength(1);
    expect(first.setCookies[0]).toMatch(new RegExp(`^${COOKIE_NAME}\\.host\\.[\\w-]{16}=`));
    expect(first.setCookies[0]).not.toContain('Domain=');
    expect(start.location!.startsWith(gh.endpoints.auth_url)).toBe(true);
    // the endpoint cannot set a cookie for the custom host: it sends a ticket there
    expect(callback.status).toBe(302);
    expect(callback.location!.startsWith(at('app.custom.test', '/.weft-auth/session?ticket='))).toBe(true);
    expect(callback.setCookies.some((c) => c.startsWith(`${COOKIE_NAME}_app=`) && !c.includes('Max-Age=0'))).toBe(false);
    const landed = await agent.request(callback.location!);
    expect(landed.status).toBe(302);
    expect(landed.location).toBe(at('app.custom.test', '/deep?x=1'));
    const session = landed.setCookies.find((c) => c.startsWith(`${COOKIE_NAME}_app=`))!;
    expect(session).toMatch(/HttpOnly; SameSite=Lax/);
    expect(session).not.toContain('Domain=');
    expect(landed.setCookies.some((c) => c.startsWith(`${COOKIE_NAME}.host.`) && c.includes('Max-Age=0'))).toBe(true);
    const echoed = (await agent.request(landed.location!)).json();
    expect(echoed.url).toBe('/deep?x=1');
    expect(echoed.headers['svc-auth-email']).toBe('octo@example.test');
    expect(echoed.headers.cookie ?? '').not.toContain(COOKIE_NAME);
    // host-only: the share's token host does not get this cookie
    expect((await agent.request(fe.shareUrl('app', '/'))).status).toBe(302);
  });

  it('a ticket is single-use, bound to the browser that started the login, and only good on its own host', async () => {
    const a = await toTicket('octo');
    const stranger = new HttpUserAgent();
    const unbound = await stranger.request(a.callback.location!);
    expect(unbound.status).toBe(400);
    expect(unbound.body).toContain('not started in this browser');
    expect(stranger.cookie(`${COOKIE_NAME}_app`)).toBeUndefined();
    const binding = a.agent.cookie(a.first.setCookies[0]!.split('=')[0]!)!;
    expect((await a.agent.request(a.callback.location!)).status).toBe(302);
    // the binding cookie is cleared with the first use; even with it back, the ticket is spent
    expect((await a.agent.request(a.callback.location!)).body).toContain('not started in this browser');
    a.agent.setCookie(binding);
    const replay = await a.agent.request(a.callback.location!);
    expect(replay.status).toBe(400);
    expect(replay.body).toContain('already been used');

    const b = await toTicket('octo');
    const elsewhere = b.callback.location!.replace('app.custom.test', 'other.custom.test');
    b.agent.setCookie({ ...b.agent.cookie(b.first.setCookies[0]!.split('=')[0]!)!, domain: 'other.custom.test' });
    expect((await b.agent.request(elsewhere)).status).toBe(400);
    expect((await b.agent.request(at('app.custom.test', '/.weft-auth/session?ticket=forged'))).status).toBe(400);
    expect((await b.agent.request(at('app.custom.test', '/.weft-auth/other'))).status).toBe(404);
  });

  it('the start route needs the host binding for a custom domain', async () => {
    const agent = new HttpUserAgent();
    const start = (q: string) => agent.request(`${fe.endpointUrl}/github/auth/start?${q}`);
    expect((await start(`url=${encodeURIComponent(at('app.custom.test'))}`)).status).toBe(400);
    expect((await start(`url=${encodeURIComponent(at('app.custom.test'))}&bind=short`)).status).toBe(400);
    expect((await start(`url=${encodeURIComponent(at('open.custom.test'))}&bind=${'a'.repeat(43)}`)).status).toBe(400);
  });

  it('a refused user on a custom domain gets the 403 page, and signs out on the host itself', async () => {
    const refused = await toTicket('eve');
    expect(refused.callback.status).toBe(403);
    const { agent, callback } = await toTicket('octo');
    await agent.request((await agent.request(callback.location!)).location!);
    const out = await agent.request(at('app.custom.test', '/.weft-auth/logout'));
    expect(out.status).toBe(302);
    expect(out.location).toBe(at('app.custom.test', '/'));
    expect(out.setCookies.some((c) => c.startsWith(`${COOKIE_NAME}_app=;`) && c.includes('Max-Age=0') && !c.includes('Domain='))).toBe(true);
    expect(gh.revokedTokens.length).toBeGreaterThan(0);
    expect((await agent.request(at('app.custom.test'), { headers: { accept: 'application/json' } })).status).toBe(401);
  });

  it('logout at the endpoint may redirect to a custom domain of a share, not to other hosts', async () => {
    const agent = new HttpUserAgent();
    const to = async (target: string) => (await agent.request(`${fe.endpointUrl}/github/logout?redirect_url=${encodeURIComponent(target)}`)).location;
    expect(await to(at('app.custom.test', '/bye'))).toBe(at('app.custom.test', '/bye'));
    expect(await to(at('evil.test', '/'))).toBe(`${fe.endpointUrl}/github/login`);
  });
});

describe('frontend: custom domains on an https listener (SNI)', () => {
  let dir: string;
  let fe: TestFrontend;
  let own: TestCert;
  let custom: TestCert;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-sni-'));
    own = selfSignedCert([`*.${SHARE_DOMAIN}`, 'auth.weft.test']);
    custom = selfSignedCert(['app.custom.test']);
    fe = await startTestFrontend({
      tls: writeCert(dir, own),
      oauth: { endpoint_url: 'https://auth.weft.test' },
      providers: [{ name: 'github', type: 'idp_a', client_id: 'id', client_secret: 'secret' }],
      shares: [
        {
          token: 'app',
          backendMode: 'proxy',
          target: 'http://127.0.0.1:9',
          domains: ['app.custom.test'],
          domainTls: { cert: custom.cert, key: custom.key },
          oauth: { provider: 'github', emailPatterns: [], checkIntervalMs: HOUR },
        },
        { token: 'plain', backendMode: 'proxy', target: 'http://127.0.0.1:9', domains: ['plain.custom.test'] },
      ],
    });
  });

  afterAll(async () => {
    await fe?.close();
    await rm(dir, { recursive: true, force: true });
  });

  function servedCert(servername: string): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: fe.handle.publicAddress.port, servername, rejectUnauthorized: false }, () => {
        const cert = socket.getPeerX509Certificate();
        socket.end();
        resolve(cert?.subjectAltName);
      });
      socket.on('error', reject);
    });
  }

  it("presents the share's own certificate for its domain, the listener's for anything else", async () => {
    expect(await servedCert('app.custom.test')).toBe('DNS:app.custom.test');
    expect(await servedCert('APP.custom.test')).toBe('DNS:app.custom.test');
    expect(await servedCert(`app.${SHARE_DOMAIN}`)).toBe(`DNS:*.${SHARE_DOMAIN}, DNS:auth.weft.test`);
    expect(await servedCert('plain.custom.test')).toBe(`DNS:*.${SHARE_DOMAIN}, DNS:auth.weft.test`); // no certificate of its own
    expect(await servedCert('unknown.test')).toBe(`DNS:*.${SHARE_DOMAIN}, DNS:auth.weft.test`);
  });

  it('a client that checks certificates accepts the custom domain with its certificate, and logs in through https', async () => {
    const res = await new Promise<{ status: number; location?: string; cookie?: string }>((resolve, reject) => {
      https
        .get(
          {
            host: '127.0.0.1',
            port: fe.handle.publicAddress.port,
            servername: 'app.custom.test',
            path: '/x',
            headers: { host: `app.custom.test:${fe.handle.publicAddress.port}`, accept: 'text/html' },
            ca: custom.cert,
          },
          (r) => {
            r.resume();
            resolve({ status: r.statusCode!, location: r.headers.location, cookie: r.headers['set-cookie']?.[0] });
          },
        )
        .on('error', reject);
    });
    expect(res.status).toBe(302);
    expect(res.location!.startsWith('https://auth.weft.test/github/auth/start?url=')).toBe(true);
    expect(res.cookie).toMatch(/; Secure$/);
  });
});
