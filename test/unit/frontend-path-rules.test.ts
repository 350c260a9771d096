// Path rules: anchored regular expressions checked when a share is made, and the readings of a request path they are
// matched against, so that a skip rule can never expose a path a backend reads as protected (traversal, encoded
// slashes and dots, backslashes, "//", ";params", double encoding, case, trailing dots).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPathPattern, compilePathRules, isSkipped, MAX_PATH, normalise, readPath, strictRulesFor } from '../../src/main/frontend/pathRules';
import type { ShareOAuth } from '../../src/main/frontend/types';

const oauth: ShareOAuth = {
  provider: 'github',
  emailPatterns: [],
  checkIntervalMs: 60_000,
  skipPaths: ['^/healthz$', '/public/.*', '/static/[^/]+\\.css'],
  pathRules: [{ path: '/admin(/.*)?', githubTeams: ['acme/platform'] }],
};
const rules = compilePathRules(oauth);

function verdict(p: string): { skipped: boolean; strict: boolean } | number {
  const reading = readPath(p);
  if (!reading.ok) return reading.status;
  return { skipped: isSkipped(rules, reading), strict: strictRulesFor(rules, reading).length > 0 };
}

describe('path rules: checked when the share is made', () => {
  it('accepts ordinary expressions, anchored or not', () => {
    for (const p of ['^/healthz$', '/healthz', '/api/v[0-9]+/status', '/static/.*\\.(css|js)', '(?:/a|/b)'])
      expect(() => checkPathPattern(p)).not.toThrow();
  });

  it('refuses invalid expressions with the reason', () => {
    expect(() => checkPathPattern('^/admin(')).toThrow(/"\^\/admin\(" is not a valid regular expression: Unterminated group/);
    expect(() => checkPathPattern('[z-a]')).toThrow(/not a valid regular expression: Range out of order/);
    expect(() => checkPathPattern('(?i)/admin')).toThrow(/not a valid regular expression/);
    expect(() => checkPathPattern('')).toThrow(/must not be empty/);
  });

  it('refuses groups repeated without bound that repeat themselves (catastrophic backtracking)', () => {
    expect(() => checkPathPattern('/(a+)+$')).toThrow(/repeats a group that itself repeats \(\(a\+\)\+\)/);
    expect(() => checkPathPattern('/((ab)*)*')).toThrow(/exponential time/);
    expect(() => checkPathPattern('/(\\w+-?){2,}')).toThrow(/exponential time/);
    // bounded or unrepeated groups are fine, as are quantified atoms next to each other and [(+)] in classes
    for (const p of ['/(a+)?', '/(ab)+', '/(a+){1}', '/[(+)]+', '/\\(a+\\)+', '/a+b+']) expect(() => checkPathPattern(p)).not.toThrow();
  });

  it('anchors the expression: it must match the whole path', () => {
    expect(verdict('/healthz')).toEqual({ skipped: true, strict: false });
    expect(verdict('/healthz/')).toEqual({ skipped: false, strict: false });
    expect(verdict('/x/healthz')).toEqual({ skipped: false, strict: false });
    expect(verdict('/public/a/b.txt')).toEqual({ skipped: true, strict: false });
    expect(verdict('/public')).toEqual({ skipped: false, strict: false });
    expect(verdict('/admin')).toEqual({ skipped: false, strict: true });
    expect(verdict('/administrator')).toEqual({ skipped: false, strict: false });
  });
});

describe('path rules: how a request path is read', () => {
  it('normalises "//", "." and ".." without climbing above the root', () => {
    expect(normalise('//a///b/./c/../d/')).toBe('/a/b/d/');
    expect(normalise('/../../etc/passwd')).toBe('/etc/passwd');
    expect(normalise('/a/..')).toBe('/');
    expect(normalise('/a/b/..')).toBe('/a/');
  });

  // Each trick aims at /admin (stricter rule) through a skip rule; none may be skipped, each gets the stricter rule.
  const tricks = [
    '/public/../admin',
    '/public/./../admin',
    '/public/%2e%2e/admin',
    '/public/%2E%2E/admin',
    '/public/.%2e/admin',
    '/public%2F..%2Fadmin',
    '/public%2f..%2fadmin',
    '/public/..%2Fadmin',
    '/public/%2e%2e%2fadmin',
    '/public\\..\\admin',
    '/public/..%5Cadmin',
    '/public/..;/admin',
    '/public/%252e%252e/admin',
    '/public/%252e%252e%252fadmin',
    '/public//../admin',
  ];
  for (const trick of tricks) {
    it(`${trick}: needs the login and gets the stricter rule`, () => {
      expect(verdict(trick)).toEqual({ skipped: false, strict: true });
    });
  }

  it('reads the stricter rule case-insensitively and through "//", ";params", encodings and trailing dots', () => {
    for (const p of [
      '/ADMIN',
      '/Admin/x',
      '//admin',
      '/./admin',
      '/admin;jsessionid=1',
      '/%61dmin',
      '/admin.',
      '/admin%20',
      '/admin/..%2fadmin',
      '/x/../admin',
    ]) {
      expect(verdict(p), p).toEqual({ skipped: false, strict: true });
    }
  });

  it('skips only canonical paths (no encoded "/", "\\", "%", ";", dot segments, empty segments, trailing dots) and case-sensitively', () => {
    for (const p of [
      '/public/a%2Fb',
      '/public/a%5Cb',
      '/public/a%25b',
      '/public/a;b',
      '/public//a',
      '/public/a/.',
      '/public/a.',
      '/public/%0a',
      '/HEALTHZ',
      '/Public/a',
    ]) {
      expect(verdict(p), p).toMatchObject({ skipped: false });
    }
    // harmless encodings of ordinary characters stay canonical
    expect(verdict('/public/my%20file.txt')).toEqual({ skipped: true, strict: false });
    expect(verdict('/static/site.css')).toEqual({ skipped: true, strict: false });
    expect(verdict('/%68ealthz')).toEqual({ skipped: true, strict: false });
  });

  it('refuses paths it cannot read (bad encoding, NUL: 400) and overlong ones (414)', () => {
    expect(verdict('/public/%zz')).toBe(400);
    expect(verdict('/public/%E2%2F')).toBe(400);
    expect(verdict('/public/a%00b')).toBe(400);
    expect(verdict(`/public/${'a'.repeat(MAX_PATH)}`)).toBe(414);
  });

  // What a backend might make of a path: a skipped path must read the same (the path the skip rule matched) in each.
  const backendReadings: Array<[string, (p: string) => string]> = [
    ['WHATWG URL', (p) => new URL(p, 'http://x.invalid').pathname],
    ['decode + posix normalise', (p) => path.posix.normalize(decodeURIComponent(p))],
    ['backslash as slash', (p) => path.posix.normalize(decodeURIComponent(p).replace(/\\/g, '/'))],
    ['strip ;params', (p) => path.posix.normalize(decodeURIComponent(p).replace(/;[^/]*/g, ''))],
    ['decode twice', (p) => path.posix.normalize(decodeURIComponent(decodeURIComponent(p)))],
  ];
  it('a skipped path reads the same to every model backend', () => {
    const candidates = [...tricks, '/public/a', '/public/a%20b', '/healthz', '/%68ealthz', '/static/a.css', '/public/%7e', '/public/a/b/c'];
    for (const p of candidates) {
      const reading = readPath(p);
      if (!reading.ok || !isSkipped(rules, reading)) continue;
      for (const [name, read] of backendReadings) {
        let seen: string;
        try {
          seen = decodeURIComponent(read(p));
        } catch {
          continue;
        }
        expect(seen, `${name} of ${p}`).toBe(reading.canonical);
      }
    }
  });
});
