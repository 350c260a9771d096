import { describe, expect, it } from 'vitest';
import { backendUrl } from '../../src/main/frontend/proxyHttp';
import { contentTypeFor, safeSegments } from '../../src/main/frontend/webRoot';

describe('web root path checks', () => {
  it('decodes ordinary paths', () => {
    expect(safeSegments('/')).toEqual([]);
    expect(safeSegments('/a/b%20c/d.txt')).toEqual(['a', 'b c', 'd.txt']);
    expect(safeSegments('//a///b')).toEqual(['a', 'b']);
  });

  it('refuses traversal, dotfiles, backslashes, NUL and bad encoding', () => {
    for (const p of ['/../x', '/a/..', '/%2e%2e/x', '/%2E%2e%2fx', '/.env', '/a/.git/config', '/./a', '/a\\..\\b', '/%5c', '/a%00', '/%E0%A4%A']) {
      expect(safeSegments(p), p).toBeUndefined();
    }
  });

  it('maps content types', () => {
    expect(contentTypeFor('x.HTML')).toBe('text/html; charset=utf-8');
    expect(contentTypeFor('x.mjs')).toBe('text/javascript; charset=utf-8');
    expect(contentTypeFor('x.woff2')).toBe('font/woff2');
    expect(contentTypeFor('x')).toBe('application/octet-stream');
  });
});

describe('proxy backend URLs', () => {
  const target = new URL('http://127.0.0.1:3000/base');
  it('append path and query to the target path', () => {
    expect(backendUrl(target, '/x/y?z=1').href).toBe('http://127.0.0.1:3000/base/x/y?z=1');
    expect(backendUrl(new URL('http://127.0.0.1:3000/'), '/').href).toBe('http://127.0.0.1:3000/');
  });
  it('cannot leave the target path or host', () => {
    expect(backendUrl(target, '/../../etc').href).toBe('http://127.0.0.1:3000/base/etc');
    expect(backendUrl(target, '/%2e%2e/etc').href).toBe('http://127.0.0.1:3000/base/etc');
    expect(backendUrl(target, '//evil.test/x').href).toBe('http://127.0.0.1:3000/base/evil.test/x');
  });
});
