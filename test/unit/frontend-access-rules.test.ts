// Who may enter a share beyond a verified email: GitHub organizations and teams, claims, Google Workspace domains,
// combined with email patterns; each kind checked for the providers it applies to, failing closed for the others;
// refusals named by kind, never by the allowed values.
import { describe, expect, it } from 'vitest';
import {
  checkGithubOrg,
  checkGithubTeam,
  claimMatches,
  evaluateRules,
  parseClaimRule,
  pathRefusalMessage,
  refusalMessage,
  rulesFingerprint,
  type LoginFacts,
  type Refusal,
} from '../../src/main/frontend/accessRules';
import { EmailMatcherCache } from '../../src/main/frontend/emailPatterns';
import type { AccessRules, ShareOAuth } from '../../src/main/frontend/types';

const emails = new EmailMatcherCache();
const gh = (facts: Partial<LoginFacts> = {}): LoginFacts => ({
  email: 'octo@acme.test',
  providerType: 'idp_a',
  githubOrgs: [],
  githubTeams: [],
  ...facts,
});
const oidc = (claims: Record<string, unknown>, facts: Partial<LoginFacts> = {}): LoginFacts => ({
  email: 'alice@corp.test',
  providerType: 'oidc',
  claims,
  ...facts,
});

describe('access rules', () => {
  it('no rules: any verified email', () => {
    expect(evaluateRules({}, gh(), emails)).toBeUndefined();
  });

  it('GitHub: a member of any listed organization or team (case-insensitive)', () => {
    const rules: AccessRules = { githubOrgs: ['Acme'], githubTeams: ['partner/Platform'] };
    expect(evaluateRules(rules, gh({ githubOrgs: ['acme'] }), emails)).toBeUndefined();
    expect(evaluateRules(rules, gh({ githubTeams: ['partner/platform'] }), emails)).toBeUndefined();
    expect(evaluateRules(rules, gh({ githubOrgs: ['partner'], githubTeams: ['acme/platform'] }), emails)).toBe('github_membership');
    expect(evaluateRules(rules, gh(), emails)).toBe('github_membership');
  });

  it('combines kinds: every kind given must be met (email patterns and organizations)', () => {
    const rules: AccessRules = { emailPatterns: ['*@acme.test'], githubOrgs: ['acme'] };
    expect(evaluateRules(rules, gh({ githubOrgs: ['acme'] }), emails)).toBeUndefined();
    expect(evaluateRules(rules, gh({ email: 'octo@home.test', githubOrgs: ['acme'] }), emails)).toBe('email_not_allowed');
    expect(evaluateRules(rules, gh({ githubOrgs: ['other'] }), emails)).toBe('github_membership');
  });

  it('claims: a string claim equal to the value, or a list claim containing it; dotted names reach into objects', () => {
    expect(claimMatches({ groups: ['staff', 'admins'] }, parseClaimRule('groups=admins'))).toBe(true);
    expect(claimMatches({ groups: 'admins' }, parseClaimRule('groups=admins'))).toBe(true);
    expect(claimMatches({ groups: ['Admins'] }, parseClaimRule('groups=admins'))).toBe(false);
    expect(claimMatches({ level: 3 }, parseClaimRule('level=3'))).toBe(true);
    expect(claimMatches({ realm_access: { roles: ['ops'] } }, parseClaimRule('realm_access.roles=ops'))).toBe(true);
    expect(claimMatches({ 'https://example.com/roles': ['ops'] }, parseClaimRule('https://example.com/roles=ops'))).toBe(true);
    expect(claimMatches({ groups: [{ name: 'admins' }] }, parseClaimRule('groups=admins'))).toBe(false);
    expect(claimMatches({}, parseClaimRule('groups=admins'))).toBe(false);
    // the first "=" separates name and value
    expect(parseClaimRule('tag=a=b')).toEqual({ name: 'tag', value: 'a=b' });
    expect(() => parseClaimRule('groups')).toThrow(/NAME=VALUE/);
    expect(() => parseClaimRule('=admins')).toThrow(/NAME=VALUE/);
    expect(() => parseClaimRule('groups=')).toThrow(/non-empty value/);
  });

  it('claims and Google Workspace domains on OIDC logins', () => {
    const rules: AccessRules = {
      claims: [
        { name: 'groups', value: 'admins' },
        { name: 'dept', value: 'ops' },
      ],
      googleDomains: ['Corp.test'],
    };
    expect(evaluateRules(rules, oidc({ groups: ['admins'] }, { hostedDomain: 'corp.test' }), emails)).toBeUndefined();
    expect(evaluateRules(rules, oidc({ dept: 'ops' }, { hostedDomain: 'corp.test' }), emails)).toBeUndefined();
    expect(evaluateRules(rules, oidc({ groups: ['staff'] }, { hostedDomain: 'corp.test' }), emails)).toBe('claim_mismatch');
    expect(evaluateRules(rules, oidc({ groups: ['admins'] }), emails)).toBe('google_domain');
  });

  it('each kind is checked for the providers it applies to; a login none applies to is refused (fail closed)', () => {
    const rules: AccessRules = { githubOrgs: ['acme'], claims: [{ name: 'groups', value: 'admins' }] };
    // GitHub logins meet the organization rule, OIDC logins the claim rule
    expect(evaluateRules(rules, gh({ githubOrgs: ['acme'] }), emails)).toBeUndefined();
    expect(evaluateRules(rules, oidc({ groups: ['admins'] }), emails)).toBeUndefined();
    // a Google login can be checked against neither
    const google: LoginFacts = { email: 'a@b.test', providerType: 'idp_b', hostedDomain: 'b.test' };
    expect(evaluateRules(rules, google, emails)).toBe('rule_not_applicable');
    expect(evaluateRules({ googleDomains: ['b.test'] }, google, emails)).toBeUndefined();
    expect(evaluateRules({ googleDomains: ['b.test'] }, gh(), emails)).toBe('rule_not_applicable');
  });

  it('refusals name the kind of rule, never the allowed values', () => {
    const reasons: Refusal[] = ['email_not_allowed', 'github_membership', 'claim_mismatch', 'google_domain', 'rule_not_applicable'];
    const texts = reasons.map((r) => refusalMessage(r, 'octo@home.test', 'corp'));
    expect(texts[1]).toBe(
      'You are signed in as octo@home.test, but your GitHub account is not a member of an organization or team allowed to access this share.',
    );
    expect(texts[2]).toContain('does not have a group, role or other claim allowed');
    expect(texts[3]).toContain('not in a Google Workspace domain allowed');
    expect(texts[4]).toContain('cannot check a sign-in with corp against its access rules');
    expect(pathRefusalMessage('github_membership', 'octo@home.test')).toBe(
      'This part of the share has a stricter rule than the rest. You are signed in as octo@home.test, but your GitHub account is not a member of an organization or team allowed to access this part of it.',
    );
    for (const t of texts) expect(t).not.toMatch(/acme|admins|corp\.test|\*@/);
  });

  it('names of organizations and teams are checked', () => {
    expect(() => checkGithubOrg('acme-inc')).not.toThrow();
    expect(() => checkGithubOrg('acme/platform')).toThrow(
      '"acme/platform" is not a GitHub organization name (1-39 letters, digits or single hyphens) (for a team use --oauth-github-team acme/platform)',
    );
    for (const bad of ['-acme', 'acme-', 'ac--me', 'a'.repeat(40), 'acme corp', ''])
      expect(() => checkGithubOrg(bad), bad).toThrow(/not a GitHub organization name/);
    expect(() => checkGithubTeam('acme/platform-team')).not.toThrow();
    for (const bad of ['acme', 'acme/', '/platform', 'acme/platform/x', 'ac me/platform'])
      expect(() => checkGithubTeam(bad), bad).toThrow(/ORG\/TEAM-SLUG/);
  });

  it('the fingerprint changes with the rules beyond email patterns, and is empty without them', () => {
    const base: ShareOAuth = { provider: 'github', emailPatterns: ['*@a.test'], checkIntervalMs: 1 };
    expect(rulesFingerprint(base)).toBe('');
    const withOrg = rulesFingerprint({ ...base, githubOrgs: ['acme'] });
    expect(withOrg).toMatch(/^[\w-]{16}$/);
    expect(rulesFingerprint({ ...base, githubOrgs: ['acme'], emailPatterns: [] })).toBe(withOrg);
    expect(rulesFingerprint({ ...base, githubOrgs: ['acme2'] })).not.toBe(withOrg);
    expect(rulesFingerprint({ ...base, pathRules: [{ path: '/a', emailPatterns: ['x@y'] }] })).not.toBe('');
  });
});
