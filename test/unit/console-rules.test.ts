// Pure rules of the console server: one-time links, CSRF, cookies, Host names, static paths and the
// policy advice sentence.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adviceSentence, type AdviceFacts } from '../../src/main/console/adviceSentence';
import { allowedHosts, csrfProblem, expiredCookie, LoginLinks, readCookie, sessionCookie, sessionCookieName } from '../../src/main/console/auth';
import { contentTypeOf, staticFileFor } from '../../src/main/console/static';
import { ManualClock, MINUTE } from '../support/clock';

describe('one-time login links', () => {
  it('work once, only until they expire', () => {
    const clock = new ManualClock();
    const links = new LoginLinks(clock, 15 * MINUTE);
    const a = links.issue();
    const b = links.issue();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(links.consume(a)).toBe(true);
    expect(links.consume(a)).toBe(false);
    clock.advance(15 * MINUTE);
    expect(links.consume(b)).toBe(false);
    expect(links.size).toBe(0);
  });
  it('refuse junk and keep a bounded number outstanding', () => {
    const links = new LoginLinks(new ManualClock(), MINUTE, 3);
    for (const junk of [undefined, null, 42, '', 'short', 'x'.repeat(500)]) expect(links.consume(junk)).toBe(false);
    const first = links.issue();
    for (let i = 0; i < 3; i++) links.issue();
    expect(links.size).toBe(3);
    expect(links.consume(first)).toBe(false);
  });
});

describe('request checks and cookies', () => {
  const host = '127.0.0.1:1281';
  it('CSRF: the custom header is required; Origin and Sec-Fetch-Site must be same-origin when sent', () => {
    expect(csrfProblem({}, host)).toMatch(/header is missing/);
    expect(csrfProblem({ 'x-weft-console': 'yes' }, host)).toMatch(/header is missing/);
    expect(csrfProblem({ 'x-weft-console': '1' }, host)).toBeUndefined();
    expect(csrfProblem({ 'x-weft-console': '1', origin: 'http://127.0.0.1:1281' }, host)).toBeUndefined();
    expect(csrfProblem({ 'x-weft-console': '1', origin: 'http://localhost:1281' }, host)).toMatch(/cross-origin/);
    expect(csrfProblem({ 'x-weft-console': '1', origin: 'null' }, host)).toMatch(/cross-origin/);
    expect(csrfProblem({ 'x-weft-console': '1', 'sec-fetch-site': 'same-site' }, host)).toMatch(/cross-site/);
  });
  it('answers only to its loopback names', () => {
    expect([...allowedHosts('127.0.0.1', 1281)].sort()).toEqual(['127.0.0.1:1281', 'localhost:1281']);
    expect(allowedHosts('::1', 9)).toContain('[::1]:9');
  });
  it('session cookies are HttpOnly, SameSite=Strict, Path=/ and named by port', () => {
    expect(sessionCookieName(1281)).toBe('weft-console-1281');
    expect(sessionCookie('c', 't')).toBe('c=t; HttpOnly; SameSite=Strict; Path=/');
    expect(expiredCookie('c')).toMatch(/Max-Age=0/);
    expect(readCookie('a=1; weft-console-1281=tok; b=2', 'weft-console-1281')).toBe('tok');
    expect(readCookie('weft-console-12810=x', 'weft-console-1281')).toBeUndefined();
    expect(readCookie(undefined, 'c')).toBeUndefined();
  });
});

describe('static files', () => {
  const root = '/srv/renderer';
  it('maps paths inside the root; extension-less paths are the app', () => {
    expect(staticFileFor(root, '/')).toBe(join(root, 'index.html'));
    expect(staticFileFor(root, '/identities/abc')).toBe(join(root, 'index.html'));
    expect(staticFileFor(root, '/assets/index-1.js')).toBe(join(root, 'assets/index-1.js'));
  });
  it('never leaves the root', () => {
    expect(staticFileFor(root, '/../etc/passwd')).toBe(join(root, 'index.html'));
    for (const p of ['/../etc/passwd.txt', '/..%2f..%2fetc%2fpasswd.txt', '/%2e%2e/x.js', '/a%00.js', '/%E0%A4%A.js', '/..\\x.js']) {
      expect(staticFileFor(root, p)).toBeUndefined();
    }
  });
  it('names content types', () => {
    expect(contentTypeOf('a.html')).toBe('text/html; charset=utf-8');
    expect(contentTypeOf('a.js')).toBe('text/javascript; charset=utf-8');
    expect(contentTypeOf('a.css')).toBe('text/css; charset=utf-8');
    expect(contentTypeOf('a.bin')).toBe('application/octet-stream');
  });
});

describe('policy advice sentence', () => {
  const base: AdviceFacts = {
    identity: { name: 'alice' },
    service: { name: 'web' },
    isDialAllowed: true,
    isBindAllowed: false,
    identityRouterCount: 2,
    serviceRouterCount: 1,
    commonRouters: [{ name: 'er1', isOnline: true }],
  };
  it('explains access and what is missing', () => {
    expect(adviceSentence(base)).toBe('Identity "alice" can dial service "web" through er1 (online).');
    expect(
      adviceSentence({
        ...base,
        commonRouters: [
          { name: 'er-builtin', isOnline: true },
          { name: 'er2', isOnline: false },
        ],
      }),
    ).toBe('Identity "alice" can dial service "web" through er-builtin (online) and er2 (offline).');
    expect(adviceSentence({ ...base, isDialAllowed: false })).toMatch(
      /^Identity "alice" can neither dial nor bind service "web": no service policy grants it/,
    );
    // both links missing: the sentence names both, not only the grant
    expect(adviceSentence({ ...base, isDialAllowed: false, commonRouters: [] })).toMatch(
      /no service policy grants it\. Nor do they have an edge router in common: add a Dial or Bind service policy matching both, and an edge router both may use/,
    );
    expect(adviceSentence({ ...base, isBindAllowed: true })).toMatch(/can dial and bind/);
    expect(adviceSentence({ ...base, identityRouterCount: 0, commonRouters: [] })).toMatch(
      /no edge router policy gives the identity any edge router/,
    );
    expect(adviceSentence({ ...base, serviceRouterCount: 0, commonRouters: [] })).toMatch(/no service edge router policy lets the service use any/);
    expect(adviceSentence({ ...base, identityRouterCount: 0, serviceRouterCount: 0, commonRouters: [] })).toMatch(/Add both/);
    expect(adviceSentence({ ...base, commonRouters: [] })).toMatch(
      /the 2 edge routers the identity may use and the 1 edge router the service may use have none in common/,
    );
    expect(
      adviceSentence({
        ...base,
        commonRouters: [
          { name: 'a', isOnline: false },
          { name: 'b', isOnline: false },
        ],
      }),
    ).toBe('Identity "alice" may dial service "web" through 2 common edge routers (a and b), but none of them is online.');
  });
});

describe('console configuration', () => {
  it('defaults to enabled on the default address with 15-minute links; only loopback addresses are accepted', async () => {
    const { configSchema } = await import('../../src/main/config');
    expect(configSchema.parse({}).console).toEqual({ enabled: true, login_link_ttl: '15m' });
    for (const address of ['127.0.0.1:0', '127.0.0.2:1281', 'localhost:9000', '[::1]:1281']) {
      expect(configSchema.safeParse({ console: { address } }).success, address).toBe(true);
    }
    for (const address of ['0.0.0.0:1281', '192.168.1.2:1281', 'example.com:1281', '[::]:1281', '127.0.0.1']) {
      expect(configSchema.safeParse({ console: { address } }).success, address).toBe(false);
    }
    expect(configSchema.safeParse({ console: { login_link_ttl: 'soon' } }).success).toBe(false);
  });
});
