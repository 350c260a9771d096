// Negative: client-sent svc-auth-* headers never reach a backend; the frontend's own values do.
import net from 'node:net';
import { WebSocket } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COOKIE_NAME, HttpUserAgent, loopbackDispatcher } from '../support/browser';
import { startGithubScenario, type GithubScenario } from '../support/fakeGithub';

const SPOOFED = {
  'svc-auth-email': 'ceo@example.test',
  'Svc-Auth-Provider': 'github',
  'SVC-AUTH-EXPIRES': '2999-01-01T00:00:00Z',
  'svc-auth-anything': 'x',
};

// Spellings that CGI/WSGI, PHP and the like read as svc-auth-*: they map "_" and "-" alike.
const UNDERSCORED = [
  'svc_auth_email: u1@evil.test',
  'SVC_Auth-Email: u2@evil.test',
  'svc-auth_provider: evil',
  'Svc_Auth_Expires: 2999-01-01T00:00:00Z',
  'X_Forwarded_For: 6.6.6.6',
];

/** One request written byte for byte on a TCP connection (no client library normalises the header names). */
async function rawRequest(url: string, headerLines: string[]): Promise<string> {
  const u = new URL(url);
  const socket = net.connect(Number(u.port), '127.0.0.1');
  socket.write([`GET ${u.pathname} HTTP/1.1`, `Host: ${u.host}`, 'Accept: text/html', 'Connection: close', ...headerLines, '', ''].join('\r\n'));
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const authHeaderNames = (headers: Record<string, unknown>) => Object.keys(headers).filter((k) => k.replaceAll('_', '-').startsWith('svc-auth-'));

describe('negative: spoofed svc-auth-* headers', () => {
  let s: GithubScenario;
  const dispatcher = loopbackDispatcher();
  beforeAll(async () => {
    s = await startGithubScenario();
  });
  afterAll(async () => {
    await dispatcher.close();
    await s?.close();
  });

  it('strips them on a share without OAuth', async () => {
    const res = await new HttpUserAgent().request(s.fe.shareUrl('open', '/'), { headers: SPOOFED });
    const h = res.json().headers;
    expect(Object.keys(h).filter((k) => k.startsWith('svc-auth-'))).toEqual([]);
  });

  it("replaces them on a protected share with the session's values", async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    const res = await agent.request(s.fe.shareUrl('app', '/'), { headers: SPOOFED });
    const h = res.json().headers;
    expect(h['svc-auth-email']).toBe('octo@example.test');
    expect(h['svc-auth-provider']).toBe('github');
    expect(h['svc-auth-expires']).not.toBe('2999-01-01T00:00:00Z');
    expect(h['svc-auth-anything']).toBeUndefined();
    expect(h.cookie ?? '').not.toContain(COOKIE_NAME);
  });

  it('strips "_" and "-" variants in any case, sent over raw TCP', async () => {
    const before = s.backend.requests.length;
    const open = await rawRequest(s.fe.shareUrl('open', '/raw'), [...UNDERSCORED, 'x_custom_name: kept']);
    expect(open).toMatch(/^HTTP\/1\.1 200 /);
    const seen = s.backend.requests[before].headers;
    expect(seen.x_custom_name).toBe('kept'); // underscores do reach the backend: only the spoofed names are dropped
    expect(authHeaderNames(seen)).toEqual([]);
    expect(seen.x_forwarded_for).toBeUndefined();

    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    const cookie = `Cookie: ${COOKIE_NAME}_app=${agent.cookie(`${COOKIE_NAME}_app`)!.value}`;
    const protectedRes = await rawRequest(s.fe.shareUrl('app', '/raw'), [...UNDERSCORED, cookie]);
    expect(protectedRes).toMatch(/^HTTP\/1\.1 200 /);
    const h = s.backend.requests.at(-1)!.headers;
    expect(authHeaderNames(h).sort()).toEqual(['svc-auth-email', 'svc-auth-expires', 'svc-auth-provider']);
    expect(h['svc-auth-email']).toBe('octo@example.test');
  });

  it('replaces them on WebSocket upgrades too', async () => {
    const agent = new HttpUserAgent();
    await s.login(agent, 'app');
    const cookie = `${COOKIE_NAME}_app=${agent.cookie(`${COOKIE_NAME}_app`)!.value}; theme=1`;
    const ws = new WebSocket(s.fe.shareUrl('app', '/ws').replace(/^http/, 'ws'), { dispatcher, headers: { ...SPOOFED, cookie } });
    const hello = await new Promise<any>((resolve, reject) => {
      ws.onmessage = (e) => resolve(JSON.parse(String(e.data)));
      ws.onerror = () => reject(new Error('websocket failed'));
    });
    ws.close();
    expect(hello.headers['svc-auth-email']).toBe('octo@example.test');
    expect(hello.headers['svc-auth-anything']).toBeUndefined();
    expect(hello.headers.cookie).toBe('theme=1');
  });
});
