import { describe, expect, it } from 'vitest';
import { isAllowedLogoutRedirect, isUrlOfShare, shareTokenFromHost } from '../../src/main/frontend/redirects';

const DOMAIN = 'share.example.com';
const ENDPOINT = 'https://oauth.example.com';

describe('share hosts and redirect targets', () => {
  it('extracts one-label share tokens from Host', () => {
    expect(shareTokenFromHost('abc123.share.example.com', DOMAIN)).toBe('abc123');
    expect(shareTokenFromHost('ABC.Share.Example.com:8443', DOMAIN)).toBe('abc');
    expect(shareTokenFromHost('abc.share.example.com.', DOMAIN)).toBe('abc');
    expect(shareTokenFromHost('share.example.com', DOMAIN)).toBeUndefined();
    expect(shareTokenFromHost('a.b.share.example.com', DOMAIN)).toBeUndefined();
    expect(shareTokenFromHost('abc.share.example.com.evil.test', DOMAIN)).toBeUndefined();
    expect(shareTokenFromHost('-x.share.example.com', DOMAIN)).toBeUndefined();
    expect(shareTokenFromHost(undefined, DOMAIN)).toBeUndefined();
  });

  it('checks that an original URL is on its own share', () => {
    expect(isUrlOfShare('https://abc.share.example.com/p?q=1', DOMAIN, 'abc')).toBe(true);
    expect(isUrlOfShare('https://xyz.share.example.com/', DOMAIN, 'abc')).toBe(false);
    expect(isUrlOfShare('https://abc.share.example.com\\@evil.test/', DOMAIN, 'abc')).toBe(false);
    expect(isUrlOfShare('javascript://abc.share.example.com/%0aalert(1)', DOMAIN, 'abc')).toBe(false);
  });

  it('allows logout redirects to shares and the frontend only', () => {
    expect(isAllowedLogoutRedirect('https://abc.share.example.com/x', DOMAIN, ENDPOINT)).toBe(true);
    expect(isAllowedLogoutRedirect('https://oauth.example.com/github/login', DOMAIN, ENDPOINT)).toBe(true);
    for (const bad of [
      'https://evil.test',
      '//abc.share.example.com/',
      'javascript:alert(1)',
      'https://oauth.example.com.evil.test/',
      'http://oauth.example.com/',
      'https://a@abc.share.example.com/',
    ]) {
      expect(isAllowedLogoutRedirect(bad, DOMAIN, ENDPOINT), bad).toBe(false);
    }
  });

  it('allows the frontend only under the path of endpoint_url', () => {
    const endpoint = 'https://oauth.example.com/sso';
    expect(isAllowedLogoutRedirect('https://oauth.example.com/sso/github/login', DOMAIN, endpoint)).toBe(true);
    expect(isAllowedLogoutRedirect('https://oauth.example.com/sso', DOMAIN, endpoint)).toBe(true);
    for (const bad of ['https://oauth.example.com/', 'https://oauth.example.com/ssox', 'https://oauth.example.com/sso/../admin']) {
      expect(isAllowedLogoutRedirect(bad, DOMAIN, endpoint), bad).toBe(false);
    }
  });
});
