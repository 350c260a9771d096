// The frontend's hot path takes shortcuts (verified session cookies are remembered, plain request targets skip
// URL parsing, parsed globs are reused, responses are relayed through undici's dispatch handler); none of them
// may change an answer.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startFrontend } from '../../src/main/frontend';
import { EmailMatcherCache } from '../../src/main/frontend/emailPatterns';
import { deriveKeys } from '../../src/main/frontend/keys';
import { backendRequestTarget, backendUrl } from '../../src/main/frontend/proxyHttp';
import { SessionCodec } from '../../src/main/frontend/sessions';

const keys = deriveKeys('cache-signing-key-0123456789abcdef-xyz', 'cache-encryption-key-0123');
const NOW = Date.UTC(2031, 5, 1, 12, 0, 0, 250);
const HOUR = 3_600_000;

const newCodec = () => new SessionCodec(keys, { cookieName: 'sess', cookieDomain: 'example.com', secure: true });

async function cookie(codec: SessionCodec, share = 'abc'): Promise<{ header: string; value: string; expiresAtMs: number }> {
  const expiresAtMs = NOW + HOUR;
  const setCookie = await codec.issue({ provider: 'corp', share, email: 'a@example.com', expiresAtMs, checkedAtMs: NOW, tokens: {} }, NOW);
  const pair = setCookie.split(';')[0]!;
  return { header: pair, value: pair.slice(pair.indexOf('=') + 1), expiresAtMs: Math.ceil(expiresAtMs / 1000) * 1000 };
}

describe('verified session cookies', () => {
  it('expire at the same instant whether or not they were seen before', async () => {
    const warm = newCodec();
    const { header, expiresAtMs } = await cookie(warm);
    expect(await warm.find(header, 'abc', 'corp', NOW)).toBeDefined(); // now remembered
    for (const at of [expiresAtMs - 1001, expiresAtMs - 1, expiresAtMs, expiresAtMs + 1]) {
      const cold = await newCodec().find(header, 'abc', 'corp', at);
      const remembered = await warm.find(header, 'abc', 'corp', at);
      expect(remembered === undefined, `at exp ${at - expiresAtMs} ms`).toBe(cold === undefined);
    }
    expect(await warm.find(header, 'abc', 'corp', expiresAtMs - 1001)).toBeDefined();
    expect(await warm.find(header, 'abc', 'corp', expiresAtMs)).toBeUndefined();
    // Expired sessions are still listed for logout.
    expect(await warm.all(header, expiresAtMs + HOUR)).toHaveLength(1);
  });

  it('a remembered value does not let tampered values, other shares or other providers through', async () => {
    const codec = newCodec();
    const { header, value } = await cookie(codec);
    expect(await codec.find(header, 'abc', 'corp', NOW)).toBeDefined();
    const flipped = value.slice(0, -2) + (value.at(-2) === 'A' ? 'B' : 'A') + value.at(-1);
    expect(await codec.find(`sess_abc=${flipped}`, 'abc', 'corp', NOW)).toBeUndefined();
    expect(await codec.find(`sess_xyz=${value}`, 'xyz', 'corp', NOW)).toBeUndefined();
    expect(await codec.find(header, 'abc', 'other', NOW)).toBeUndefined();
    expect(await codec.find(header, 'abc', 'corp', NOW)).toMatchObject({ share: 'abc', email: 'a@example.com' });
  });

  it('cookies sealed with other keys are refused even by a codec that remembers', async () => {
    const other = new SessionCodec(deriveKeys('another-signing-key-0123456789abcdef', 'another-encryption-key-01'), {
      cookieName: 'sess',
      cookieDomain: 'example.com',
      secure: true,
    });
    const foreign = await cookie(other);
    const codec = newCodec();
    await codec.find((await cookie(codec)).header, 'abc', 'corp', NOW);
    expect(await codec.find(foreign.header, 'abc', 'corp', NOW)).toBeUndefined();
  });
});

describe('backend request targets', () => {
  const targets = [
    'http://127.0.0.1:3000',
    'http://127.0.0.1:3000/',
    'http://127.0.0.1:3000/base',
    'http://127.0.0.1:3000/base/',
    'http://h.test/b?fixed=1',
    'https://h.test:8443/a/b/',
  ];
  const expected = (target: URL, path: string) => {
    const url = backendUrl(target, path);
    return { origin: url.origin, path: `${url.pathname}${url.search}` };
  };

  it('plain paths and the tricky ones give what URL parsing gives', () => {
    const samples = [
      '/',
      '/x',
      '/x/',
      '/x/y.z?q=1&r=two',
      '/a//b',
      '/./a',
      '/a/./b',
      '/a/../b',
      '/..',
      '/%2e%2E/x',
      '/%2fx',
      '/%zz',
      '/a%20b',
      "/it's",
      '/a b',
      '/a?',
      '/a?b?c',
      '/a?x=%2e',
      '/ä',
      '/a\\b',
      '//evil.test/x',
      '/a#frag',
      '/a?q="x"',
      '/.well-known/x',
      '/a.',
      '/a..b',
    ];
    for (const t of targets) for (const p of samples) expect(backendRequestTarget(new URL(t), p), `${t} + ${p}`).toEqual(expected(new URL(t), p));
  });

  it('random request targets agree too', () => {
    const alphabet = [
      'a',
      'Z',
      '0',
      '-',
      '_',
      '~',
      '.',
      '..',
      '/',
      '//',
      '%2e',
      '%2E',
      '%41',
      '%',
      '?',
      '&',
      '=',
      "'",
      '"',
      '<',
      '@',
      ':',
      '+',
      ' ',
      '\\',
      '#',
      'é',
      '!',
      '$',
      '(',
      '*',
      ',',
      ';',
    ];
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 3000; i++) {
      let p = '/';
      const n = next() % 12;
      for (let j = 0; j < n; j++) p += alphabet[next() % alphabet.length];
      const t = new URL(targets[next() % targets.length]!);
      expect(backendRequestTarget(t, p), `${t.href} + ${p}`).toEqual(expected(t, p));
    }
  });
});

describe('email pattern matchers', () => {
  it('answer the same whether found by list identity or by content', () => {
    const cache = new EmailMatcherCache();
    const patterns = ['*@Example.com'];
    expect(cache.matches(patterns, 'a@example.com')).toBe(true);
    expect(cache.matches(patterns, 'a@other.com')).toBe(false);
    expect(cache.matches(['*@other.com'], 'a@other.com')).toBe(true);
    expect(cache.matches([], 'anyone@anywhere.test')).toBe(true);
  });
});

describe('response relay', () => {
  it('streams a large body intact, and a client leaving mid-body closes the backend response', async () => {
    const chunk = Buffer.alloc(256 * 1024, 'x');
    const backendClosed: Array<Promise<unknown>> = [];
    const backend = http.createServer((req, res) => {
      backendClosed.push(once(res, 'close').then(() => res.writableFinished));
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      if (req.url === '/big') {
        let sent = 0;
        const pump = () => {
          while (sent < 64) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      } else res.write(chunk); // /hang: one chunk, then nothing
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    const fe = await startFrontend({
      config: { bind_address: '127.0.0.1:0', share_domain: 'share.weft.test' },
      resolver: { resolve: (token) => (token === 'relay' ? { token, backendMode: 'proxy', target } : undefined) },
      logger: pino({ level: 'silent' }),
    });
    const get = (path: string) =>
      new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get({ host: '127.0.0.1', port: fe.publicAddress.port, path, headers: { host: 'relay.share.weft.test' } }, resolve).on('error', reject),
      );
    try {
      const big = await get('/big');
      let bytes = 0;
      big.on('data', (c: Buffer) => (bytes += c.length));
      await once(big, 'end');
      expect(bytes).toBe(64 * chunk.length);
      expect(await backendClosed[0]).toBe(true);

      const hang = await get('/hang');
      await once(hang, 'data');
      hang.destroy();
      expect(await backendClosed[1]).toBe(false); // the frontend aborted its backend request
    } finally {
      await fe.close();
      backend.closeAllConnections();
      await new Promise<void>((resolve) => backend.close(() => resolve()));
    }
  });
});
