import { createHash } from 'node:crypto';
import type { ProviderType } from './config';
import { checkEmailPattern, type EmailMatcherCache } from './emailPatterns';
import type { AccessRules, ClaimRule, ShareOAuth } from './types';

// Who may enter a share. The rules of one kind are alternatives (any listed organization, any listed claim); the
// kinds given are all required, each for the logins it can be checked for: email patterns for every login, GitHub
// organizations and teams for GitHub (idp_a) logins, claims for OpenID Connect (oidc) logins, Google Workspace
// domains for Google (idp_b) and oidc logins (the `hd` claim). A login for which the rules have org/team/claim/
// domain kinds but none it can be checked for is refused (fail closed): adding a provider never opens a share.

/** The kinds of rules beyond email patterns. */
export type RuleKind = 'github' | 'claim' | 'google_domain';

const APPLIES: Record<RuleKind, readonly ProviderType[]> = {
  github: ['idp_a'],
  claim: ['oidc'],
  google_domain: ['idp_b', 'oidc'],
};

/** Provider types a kind of rule can be checked for. */
export function ruleKindTypes(kind: RuleKind): readonly ProviderType[] {
  return APPLIES[kind];
}

export function ruleKinds(rules: AccessRules): RuleKind[] {
  const kinds: RuleKind[] = [];
  if (rules.githubOrgs?.length || rules.githubTeams?.length) kinds.push('github');
  if (rules.claims?.length) kinds.push('claim');
  if (rules.googleDomains?.length) kinds.push('google_domain');
  return kinds;
}

export function hasRules(rules: AccessRules): boolean {
  return !!rules.emailPatterns?.length || ruleKinds(rules).length > 0;
}

/** Why a signed-in user is refused (403 with a logout link). Named on the page by kind, never by the allowed values. */
export type Refusal =
  'no_email' | 'email_not_verified' | 'email_not_allowed' | 'github_membership' | 'claim_mismatch' | 'google_domain' | 'rule_not_applicable';

/** What a provider told about the user, for the rules. */
export interface LoginFacts {
  email: string;
  providerType: ProviderType;
  /** GitHub organization logins, lowercase (only when fetched) */
  githubOrgs?: string[];
  /** "org/slug", lowercase */
  githubTeams?: string[];
  /** ID token and userinfo claims (oidc) */
  claims?: Record<string, unknown>;
  /** Google Workspace domain (`hd`) */
  hostedDomain?: string;
}

/** The first rule the login fails, in the order email, GitHub, claim, Google domain; undefined = let in. */
export function evaluateRules(rules: AccessRules, facts: LoginFacts, emails: EmailMatcherCache): Refusal | undefined {
  if (rules.emailPatterns?.length && !emails.matches(rules.emailPatterns, facts.email)) return 'email_not_allowed';
  const kinds = ruleKinds(rules);
  const applicable = kinds.filter((k) => APPLIES[k].includes(facts.providerType));
  if (kinds.length && !applicable.length) return 'rule_not_applicable';
  for (const kind of applicable) {
    if (kind === 'github' && !githubMember(rules, facts)) return 'github_membership';
    if (kind === 'claim' && !(rules.claims ?? []).some((c) => claimMatches(facts.claims, c))) return 'claim_mismatch';
    if (kind === 'google_domain') {
      const hd = facts.hostedDomain?.toLowerCase();
      if (!hd || !(rules.googleDomains ?? []).some((d) => d.toLowerCase() === hd)) return 'google_domain';
    }
  }
  return undefined;
}

function githubMember(rules: AccessRules, facts: LoginFacts): boolean {
  const orgs = new Set(facts.githubOrgs ?? []);
  const teams = new Set(facts.githubTeams ?? []);
  return (rules.githubOrgs ?? []).some((o) => orgs.has(o.toLowerCase())) || (rules.githubTeams ?? []).some((t) => teams.has(t.toLowerCase()));
}

/** A claim by its name, or by a dotted path into objects when no claim has the whole name (realm_access.roles). */
function claimValue(claims: Record<string, unknown> | undefined, name: string): unknown {
  if (!claims) return undefined;
  if (Object.hasOwn(claims, name)) return claims[name];
  let v: unknown = claims;
  for (const part of name.split('.')) {
    if (!v || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

const scalar = (v: unknown) => (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);

/** A string (number, boolean) claim equal to the value, or a list claim containing it; exact, case-sensitive. */
export function claimMatches(claims: Record<string, unknown> | undefined, rule: ClaimRule): boolean {
  const v = claimValue(claims, rule.name);
  if (Array.isArray(v)) return v.some((item) => scalar(item) === rule.value);
  return scalar(v) === rule.value;
}

/** The sentence a refused user reads: the kind of rule that refused them, never the allowed values. */
export function refusalMessage(reason: Refusal, email: string | undefined, providerName?: string): string {
  switch (reason) {
    case 'no_email':
      return 'The identity provider did not share an email address for this account, so access to this share cannot be checked. Allow it to share your email address, or sign in with another account.';
    case 'email_not_verified':
      return `The provider has not verified the email address ${email}. Verify it with the provider and try again.`;
    case 'email_not_allowed':
      return `You are signed in as ${email}, which is not allowed to access this share.`;
    case 'github_membership':
      return `You are signed in as ${email}, but your GitHub account is not a member of an organization or team allowed to access this share.`;
    case 'claim_mismatch':
      return `You are signed in as ${email}, but your account${providerName ? ` at ${providerName}` : ''} does not have a group, role or other claim allowed to access this share.`;
    case 'google_domain':
      return `You are signed in as ${email}, but your Google account is not in a Google Workspace domain allowed to access this share.`;
    case 'rule_not_applicable':
      return `This share cannot check a sign-in with ${providerName ?? 'this provider'} against its access rules. Sign out and sign in another way.`;
  }
}

/** The same for a path with a stricter rule: the user may use the share, not this part of it. */
export function pathRefusalMessage(reason: Refusal, email: string | undefined, providerName?: string): string {
  return `This part of the share has a stricter rule than the rest. ${refusalMessage(reason, email, providerName).replace('access this share', 'access this part of it')}`;
}

/**
 * A fingerprint of what a session's verdicts depend on beyond email patterns (checked on every request): the
 * org/team/claim/domain rules and the path rules. A session checked against other rules is re-verified; '' when the
 * share has none (sessions of such shares carry no fingerprint).
 */
export function rulesFingerprint(oauth: ShareOAuth): string {
  const { githubOrgs, githubTeams, claims, googleDomains, pathRules } = oauth;
  if (!githubOrgs?.length && !githubTeams?.length && !claims?.length && !googleDomains?.length && !pathRules?.length) return '';
  const text = JSON.stringify([githubOrgs ?? [], githubTeams ?? [], claims ?? [], googleDomains ?? [], pathRules ?? []]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

/** What a provider must fetch at login for these rules. */
export interface RuleNeeds {
  githubOrgs: boolean;
  githubTeams: boolean;
  claims: boolean;
}

export function ruleNeeds(oauth: ShareOAuth): RuleNeeds {
  const all: AccessRules[] = [oauth, ...(oauth.pathRules ?? [])];
  return {
    githubOrgs: all.some((r) => !!r.githubOrgs?.length),
    githubTeams: all.some((r) => !!r.githubTeams?.length),
    claims: all.some((r) => !!r.claims?.length),
  };
}

// ---------------------------------------------------------------------------------------------
// Formats (checked by `weft share` and by the config write)

/** GitHub logins: 1-39 letters, digits or single hyphens, no hyphen first or last. */
const GITHUB_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
/** Team slugs as GitHub makes them from team names. */
const TEAM_SLUG = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,98}[A-Za-z0-9_])?$/;
const CLAIM_NAME = /^[\x21-\x3c\x3e-\x7e]{1,200}$/; // visible ASCII except "="
const DOMAIN_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

export function checkGithubOrg(org: string): void {
  if (!GITHUB_LOGIN.test(org)) {
    const hint = org.includes('/') ? ` (for a team use --oauth-github-team ${org})` : '';
    throw new Error(`"${org}" is not a GitHub organization name (1-39 letters, digits or single hyphens)${hint}`);
  }
}

export function checkGithubTeam(team: string): void {
  const [org, slug, ...rest] = team.split('/');
  if (rest.length || slug === undefined || !GITHUB_LOGIN.test(org!) || !TEAM_SLUG.test(slug)) {
    throw new Error(`"${team}" is not a GitHub team: write it as ORG/TEAM-SLUG, e.g. acme/platform`);
  }
}

/** "NAME=VALUE" → a claim rule (the first "=" separates them). */
export function parseClaimRule(text: string): ClaimRule {
  const eq = text.indexOf('=');
  const rule = { name: eq < 0 ? text : text.slice(0, eq), value: eq < 0 ? '' : text.slice(eq + 1) };
  checkClaimRule(rule);
  return rule;
}

export function checkClaimRule(rule: ClaimRule): void {
  const shown = `${rule.name}=${rule.value}`;
  if (!CLAIM_NAME.test(rule.name))
    throw new Error(`"${shown}" must be NAME=VALUE with a claim name (visible characters, no "="), e.g. groups=admins`);
  if (rule.value === '' || /[\u0000-\u001f\u007f]/.test(rule.value)) throw new Error(`"${shown}" must be NAME=VALUE with a non-empty value`);
}

export function checkGoogleDomain(domain: string): void {
  if (domain.length > 253 || !domain.includes('.') || !domain.split('.').every((l) => DOMAIN_LABEL.test(l))) {
    throw new Error(`"${domain}" is not a domain name such as example.com`);
  }
}

/** Checks every rule of a set; the error names the field ("githubTeams.1"). */
export function accessRulesIssue(rules: AccessRules): { field: string; reason: string } | undefined {
  const lists: Array<[keyof AccessRules, (v: never) => void]> = [
    ['emailPatterns', checkEmailPattern as (v: never) => void],
    ['githubOrgs', checkGithubOrg as (v: never) => void],
    ['githubTeams', checkGithubTeam as (v: never) => void],
    ['claims', checkClaimRule as (v: never) => void],
    ['googleDomains', checkGoogleDomain as (v: never) => void],
  ];
  for (const [field, check] of lists) {
    const values = (rules[field] ?? []) as never[];
    for (let i = 0; i < values.length; i++) {
      try {
        check(values[i]!);
      } catch (err) {
        return { field: `${field}.${i}`, reason: (err as Error).message };
      }
    }
  }
  return undefined;
}
