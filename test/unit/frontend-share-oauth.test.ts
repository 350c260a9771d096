import { describe, expect, it } from 'vitest';
import { validateShareOAuth } from '../../src/main/frontend';
import type { FrontendConfig } from '../../src/main/frontend/config';
import { compileEmailMatcher } from '../../src/main/frontend/emailPatterns';

const config = {
  bind_address: '127.0.0.1:0',
  share_domain: 'share.example.com',
  oauth: {
    bind_address: '127.0.0.1:0',
    endpoint_url: 'https://oauth.example.com',
    cookie_name: 'c',
    cookie_domain: 'example.com',
    session_lifetime: '6h',
    intermediate_lifetime: '5m',
    signing_key: 's'.repeat(32),
    encryption_key: 'e'.repeat(24),
    providers: [
      { name: 'github', type: 'idp_a', client_id: 'a', client_secret: 'b' },
      { name: 'google', type: 'idp_b', client_id: 'a', client_secret: 'b' },
    ],
  },
} as FrontendConfig;

describe('validateShareOAuth', () => {
  it('defaults the check interval to 3h', () => {
    expect(validateShareOAuth(config, { provider: 'google', emailPatterns: ['*@example.com'] })).toEqual({
      provider: 'google',
      emailPatterns: ['*@example.com'],
      checkIntervalMs: 3 * 3_600_000,
    });
    expect(validateShareOAuth(config, { provider: 'github', emailPatterns: [], checkInterval: '15m' }).checkIntervalMs).toBe(900_000);
  });

  it('needs an oauth section', () => {
    const { oauth: _oauth, ...noOAuth } = config;
    expect(() => validateShareOAuth(noOAuth as FrontendConfig, { provider: 'github', emailPatterns: [] })).toThrow(/no "oauth" section/);
    expect(() => validateShareOAuth(undefined, { provider: 'github', emailPatterns: [] })).toThrow(/no "oauth" section/);
  });

  it('lists the known providers for an unknown name', () => {
    expect(() => validateShareOAuth(config, { provider: 'gitlab', emailPatterns: [] })).toThrow(
      'unknown OAuth provider "gitlab" (configured providers: github, google)',
    );
  });

  it('refuses bad patterns', () => {
    expect(() => validateShareOAuth(config, { provider: 'github', emailPatterns: [''] })).toThrow(/must not be empty/);
    expect(() => validateShareOAuth(config, { provider: 'github', emailPatterns: ['example.com'] })).toThrow(/did you mean "\*@example.com"/);
    expect(() => validateShareOAuth(config, { provider: 'github', emailPatterns: ['a b@x'] })).toThrow(/spaces/);
  });

  it('refuses bad and zero check intervals', () => {
    expect(() => validateShareOAuth(config, { provider: 'github', emailPatterns: [], checkInterval: '0' })).toThrow(/greater than zero/);
    expect(() => validateShareOAuth(config, { provider: 'github', emailPatterns: [], checkInterval: 'soon' })).toThrow(
      /check interval: invalid duration/,
    );
  });
});

describe('email patterns', () => {
  it('match case-insensitively as globs', () => {
    const m = compileEmailMatcher(['*@example.com', 'boss@*.org', 'team-?@corp.test']);
    expect(m('Alice@EXAMPLE.com')).toBe(true);
    expect(m('first.last@example.com')).toBe(true);
    expect(m('.dotted@example.com')).toBe(true);
    expect(m('alice@example.com.evil.test')).toBe(false);
    expect(m('alice@sub.example.com')).toBe(false);
    expect(m('BOSS@big.org')).toBe(true);
    expect(m('team-a@corp.test')).toBe(true);
    expect(m('team-ab@corp.test')).toBe(false);
  });

  it('accept any address when there are no patterns', () => {
    expect(compileEmailMatcher([])('anyone@anywhere.test')).toBe(true);
  });

  it('support braces for alternatives', () => {
    const m = compileEmailMatcher(['*@{a,b}.test']);
    expect(m('x@a.test')).toBe(true);
    expect(m('x@c.test')).toBe(false);
  });
});
