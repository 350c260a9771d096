import { describe, expect, it } from 'vitest';
import { validateShareOAuth } from '../../src/main/frontend';
import { shareDomainsIssue, shareOAuthIssue, type ShareOAuthOptions } from '../../src/main/frontend/shareOAuth';
import { selfSignedCert } from '../support/certs';
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

describe('share options of round 2: several providers, rules, path rules, custom domains', () => {
  const providers = [
    { name: 'github', type: 'idp_a' as const },
    { name: 'google', type: 'idp_b' as const },
    { name: 'corp', type: 'oidc' as const },
  ];
  const issue = (oauth: ShareOAuthOptions) => shareOAuthIssue(providers, oauth);

  it('several providers: each must be configured, none twice; `provider` (older configs) alone still works', () => {
    expect(issue({ providers: ['github', 'corp'] })).toBeUndefined();
    expect(issue({ provider: 'github' })).toBeUndefined();
    expect(issue({ provider: 'corp', providers: ['github', 'corp'] })).toBeUndefined();
    expect(issue({ providers: ['github', 'gitlab'] })).toEqual({
      field: 'providers.1',
      reason: 'unknown OAuth provider "gitlab" (configured providers: github, google, corp)',
    });
    expect(issue({ providers: ['github', 'github'] })).toEqual({ field: 'providers.1', reason: 'provider "github" is listed twice' });
    expect(issue({ provider: 'google', providers: ['github', 'corp'] })?.field).toBe('provider');
    expect(issue({})).toEqual({ field: 'provider', reason: 'is required (the provider to sign in with)' });
    expect(validateShareOAuth(config, { providers: ['github', 'google'] })).toMatchObject({ provider: 'github', providers: ['github', 'google'] });
  });

  it('rule formats name their field', () => {
    expect(issue({ provider: 'github', githubOrgs: ['acme', 'acme/platform'] })).toEqual({
      field: 'githubOrgs.1',
      reason: expect.stringContaining('for a team use --oauth-github-team acme/platform'),
    });
    expect(issue({ provider: 'github', githubTeams: ['platform'] })?.field).toBe('githubTeams.0');
    expect(issue({ provider: 'corp', claims: [{ name: 'groups', value: '' }] })?.field).toBe('claims.0');
    expect(issue({ provider: 'google', googleDomains: ['example'] })?.field).toBe('googleDomains.0');
    expect(issue({ provider: 'github', skipPaths: ['^/ok$', '^/bad('] })).toEqual({
      field: 'skipPaths.1',
      reason: expect.stringMatching(/^"\^\/bad\(" is not a valid regular expression/),
    });
    expect(issue({ provider: 'github', pathRules: [{ path: '/admin(', githubOrgs: ['acme'] }] })?.field).toBe('pathRules.0.path');
    expect(issue({ provider: 'github', pathRules: [{ path: '/admin' }] })).toEqual({
      field: 'pathRules.0',
      reason: 'needs at least one condition (email, GitHub organization or team, claim, Google domain)',
    });
    expect(issue({ provider: 'github', pathRules: [{ path: '/admin', githubTeams: ['x'] }] })?.field).toBe('pathRules.0.githubTeams.0');
  });

  it('refuses a provider none of the org/team/claim/domain rules can be checked for: adding a provider never opens a share', () => {
    expect(issue({ providers: ['github', 'google'], githubOrgs: ['acme'] })).toEqual({
      field: 'providers.1',
      reason: expect.stringContaining(
        'nobody signing in with "google" (idp_b) could pass: GitHub organization and team rules can only be checked for idp_a providers',
      ),
    });
    expect(issue({ provider: 'corp', githubOrgs: ['acme'] })?.field).toBe('provider');
    // each provider has a rule it can be checked for: fine
    expect(
      issue({ providers: ['github', 'corp', 'google'], githubOrgs: ['acme'], claims: [{ name: 'groups', value: 'a' }], googleDomains: ['x.test'] }),
    ).toBeUndefined();
    // email patterns apply to every provider
    expect(issue({ providers: ['github', 'google'], emailPatterns: ['*@x.test'] })).toBeUndefined();
    // a path nobody could reach
    expect(issue({ providers: ['google'], pathRules: [{ path: '/admin', githubOrgs: ['acme'] }] })).toEqual({
      field: 'pathRules.0',
      reason: expect.stringContaining('nobody could reach these paths'),
    });
    expect(issue({ providers: ['google', 'github'], pathRules: [{ path: '/admin', githubOrgs: ['acme'] }] })).toBeUndefined();
  });

  it('custom domains: DNS names outside the share domain, with a certificate that covers them (required on https)', () => {
    const offer = { shareDomain: 'share.example.com', oauthHost: 'auth.example.com', tls: true };
    const cert = selfSignedCert(['app.example.org', '*.apps.example.org']);
    const tls = { cert: cert.cert, key: cert.key };
    expect(shareDomainsIssue(offer, { domains: ['app.example.org', 'x.apps.example.org'], domainTls: tls })).toBeUndefined();
    expect(shareDomainsIssue(offer, { domains: ['app.example.org'] })).toEqual({
      field: 'domainTls',
      reason: expect.stringContaining('is required: this frontend serves https'),
    });
    expect(shareDomainsIssue({ ...offer, tls: false }, { domains: ['app.example.org'] })).toBeUndefined();
    expect(shareDomainsIssue(offer, { domains: ['x.share.example.com'], domainTls: tls })?.reason).toMatch(/inside the share domain/);
    expect(shareDomainsIssue(offer, { domains: ['auth.example.com'], domainTls: tls })?.reason).toMatch(/OAuth endpoint's host/);
    expect(shareDomainsIssue(offer, { domains: ['https://app.example.org'] })?.field).toBe('domains.0');
    expect(shareDomainsIssue(offer, { domains: ['App.example.org'] })?.field).toBe('domains.0');
    expect(shareDomainsIssue(offer, { domains: ['other.example.org'], domainTls: tls })).toEqual({
      field: 'domainTls.cert',
      reason: 'does not cover other.example.org (it names DNS:app.example.org, DNS:*.apps.example.org)',
    });
    const other = selfSignedCert(['app.example.org']);
    expect(shareDomainsIssue(offer, { domains: ['app.example.org'], domainTls: { cert: cert.cert, key: other.key } })).toEqual({
      field: 'domainTls.key',
      reason: 'does not belong to the certificate',
    });
    expect(shareDomainsIssue(offer, { domains: ['app.example.org'], domainTls: { cert: 'nope', key: cert.key } })?.field).toBe('domainTls.cert');
    const expired = selfSignedCert(['app.example.org'], { notBeforeMs: Date.now() - 2 * 86_400_000 });
    expect(shareDomainsIssue(offer, { domains: ['app.example.org'], domainTls: { cert: expired.cert, key: expired.key } })?.reason).toMatch(
      /^expired on /,
    );
  });
});
