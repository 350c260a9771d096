// The public listener as a reverse proxy: routing by Host, health, streaming both ways,
// hop-by-hop and forwarded headers, 502 when the backend is down, WebSockets.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COOKIE_NAME,
  freePort,
  HttpUserAgent,
  loopbackDispatcher,
  startEchoBackend,
  startTestFrontend,
  type EchoBackend,
  type TestFrontend,
} from '../support/browser';

describe('frontend: proxy backend', () => {
  let backend: EchoBackend;
  let streaming: http.Server;
  let release: () => void = () => undefined;
  let requestChunkSeen: Promise<void>;
  let fe: TestFrontend;
  const agent = new HttpUserAgent();
  const dispatcher = loopbackDispatcher();

  beforeAll(async () => {
    backend = await startEchoBackend();
    // /download writes one chunk, then waits for the test before finishing (response streaming);
    // /upload answers as soon as the first request chunk arrives (request streaming).
    let seen: () => void = () => undefined;
    requestChunkSeen = new Promise((resolve) => (seen = resolve));
    streaming = http.createServer((req, res) => {
      if (req.url === '/download') {
        res.writeHead(200, { 'Content-Type': 'text/plain', Connection: 'x-backend-hop', 'X-Backend-Hop': '1', 'X-Backend': 'yes' });
        res.write('first-');
        release = () => res.end('second');
      } else {
        req.once('data', () => seen());
        req.on('end', () => res.end('uploaded'));
        req.resume();
      }
    });
    await new Promise<void>((resolve) => streaming.listen(0, '127.0.0.1', resolve));
    const deadPort = await freePort();
    // OAuth is configured (so the frontend owns cookies), but none of these shares uses it.
    fe = await startTestFrontend({
      providers: [{ name: 'gh', type: 'idp_a', client_id: 'id', client_secret: 'secret' }],
      shares: [
        { token: 'echo', backendMode: 'proxy', target: `${backend.url}/base/` },
        { token: 'stream', backendMode: 'proxy', target: `http://127.0.0.1:${(streaming.address() as AddressInfo).port}` },
        { token: 'dead', backendMode: 'proxy', target: `http://127.0.0.1:${deadPort}` },
      ],
    });
  });

  afterAll(async () => {
    await dispatcher.close();
    await fe?.close();
    await backend?.close();
    streaming?.closeAllConnections();
    await new Promise<void>((resolve) => streaming.close(() => resolve()));
  });

  it('answers /health on hosts that are not shares, 404 otherwise', async () => {
    const base = `http://127.0.0.1:${fe.handle.publicAddress.port}`;
    const health = await agent.request(`${base}/health`);
    expect(health.status).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    expect((await agent.request(`${base}/other`)).status).toBe(404);
  });

  it('gives 404 for an unknown share token', async () => {
    const res = await agent.request(fe.shareUrl('nosuchshare', '/'));
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toContain('text/html');
  });

  it('prints share URLs with the real port', () => {
    expect(fe.handle.shareUrl('abc')).toBe(`http://abc.share.weft.test:${fe.handle.publicAddress.port}`);
  });

  it('appends path and query to the target path and forwards method and body', async () => {
    const res = await agent.request(fe.shareUrl('echo', '/api/items?limit=5&q=a%20b'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"hello":"world"}',
    });
    expect(res.status).toBe(200);
    const echoed = res.json();
    expect(echoed.method).toBe('POST');
    expect(echoed.url).toBe('/base/api/items?limit=5&q=a%20b');
    expect(echoed.body).toBe('{"hello":"world"}');
  });

  it('cannot climb above the target path with dot segments', async () => {
    for (const rawPath of ['/a/../../secret', '/%2e%2e/secret', '/..%2f..%2fsecret', '//127.0.0.1:1/secret', '/..\\secret']) {
      const echoed = (await agent.request(fe.shareUrl('echo'), { rawPath })).json();
      expect(echoed.url, rawPath).toMatch(/^\/base\//);
    }
  });

  it('strips hop-by-hop headers, sets X-Forwarded-*, and strips svc-auth-* and frontend cookies', async () => {
    const res = await agent.request(fe.shareUrl('echo', '/h'), {
      headers: {
        connection: 'keep-alive, x-hop-custom',
        'keep-alive': 'timeout=5',
        'x-hop-custom': 'drop me',
        te: 'trailers',
        'proxy-authorization': 'Basic Zm9vOmJhcg==',
        'x-forwarded-for': '203.0.113.9',
        'x-forwarded-host': 'evil.example',
        'svc-auth-email': 'spoofed@evil.test',
        'SVC-AUTH-Provider': 'spoofed',
        'svc-auth-expires': '2999-01-01T00:00:00Z',
        cookie: `theme=dark; ${COOKIE_NAME}_echo=stolen; ${COOKIE_NAME}.flow.abc=x; ${COOKIE_NAME}_other=y; sid=1`,
        'x-app': 'kept',
      },
    });
    const h = res.json().headers;
    for (const name of ['keep-alive', 'x-hop-custom', 'te', 'proxy-authorization', 'svc-auth-email', 'svc-auth-provider', 'svc-auth-expires']) {
      expect(h[name], name).toBeUndefined();
    }
    expect(h['x-app']).toBe('kept');
    expect(h['x-forwarded-for']).toBe('127.0.0.1');
    expect(h['x-forwarded-proto']).toBe('http');
    expect(h['x-forwarded-host']).toBe(new URL(fe.shareUrl('echo')).host);
    expect(h.cookie).toBe('theme=dark; sid=1');
    expect(res.headers['set-cookie']).toEqual(['backend=1; Path=/']);
  });

  it('streams response bodies', async () => {
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const u = new URL(fe.shareUrl('stream', '/download'));
      http.get({ hostname: '127.0.0.1', port: u.port, path: u.pathname, headers: { host: u.host } }, resolve).on('error', reject);
    });
    expect(res.headers['x-backend']).toBe('yes');
    expect(res.headers['x-backend-hop']).toBeUndefined(); // named in the backend's Connection header
    const [first] = (await once(res, 'data')) as [Buffer];
    expect(first.toString()).toBe('first-'); // arrived while the backend is still holding the response
    release();
    let rest = '';
    for await (const chunk of res) rest += chunk;
    expect(rest).toBe('second');
  });

  it('streams request bodies', async () => {
    const u = new URL(fe.shareUrl('stream', '/upload'));
    const req = http.request({
      hostname: '127.0.0.1',
      port: u.port,
      path: u.pathname,
      method: 'PUT',
      headers: { host: u.host, 'transfer-encoding': 'chunked' },
    });
    const response = once(req, 'response');
    req.write('chunk-1');
    await requestChunkSeen; // the backend saw the first chunk before the request ended
    req.end('chunk-2');
    const [res] = (await response) as [http.IncomingMessage];
    let body = '';
    for await (const chunk of res) body += chunk;
    expect(res.statusCode).toBe(200);
    expect(body).toBe('uploaded');
  });

  it('answers 502 with a page when the backend is down', async () => {
    const res = await agent.request(fe.shareUrl('dead', '/'));
    expect(res.status).toBe(502);
    expect(res.body).toContain('Bad gateway');
  });

  it('proxies WebSockets, stripping spoofed svc-auth-* headers', async () => {
    const ws = new WebSocket(fe.shareUrl('echo', '/ws?room=1').replace(/^http/, 'ws'), {
      dispatcher,
      headers: { 'svc-auth-email': 'spoofed@evil.test', cookie: `${COOKIE_NAME}_echo=x; keep=1` },
    });
    const messages: string[] = [];
    const two = new Promise<void>((resolve, reject) => {
      ws.onmessage = (e) => {
        messages.push(String(e.data));
        if (messages.length === 1) ws.send('hi');
        if (messages.length === 2) resolve();
      };
      ws.onerror = () => reject(new Error('websocket failed'));
    });
    await two;
    ws.close();
    const hello = JSON.parse(messages[0]);
    expect(hello.url).toBe('/base/ws?room=1');
    expect(hello.headers['svc-auth-email']).toBeUndefined();
    expect(hello.headers.cookie).toBe('keep=1');
    expect(hello.headers['x-forwarded-proto']).toBe('http');
    expect(JSON.parse(messages[1])).toEqual({ type: 'echo', data: 'hi' });
  });

  it('refuses a WebSocket to a dead backend with 502', async () => {
    const u = new URL(fe.shareUrl('dead', '/ws'));
    const req = http.request({
      hostname: '127.0.0.1',
      port: u.port,
      path: '/ws',
      headers: {
        host: u.host,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    req.end();
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    expect(res.statusCode).toBe(502);
    res.resume();
  });
});
