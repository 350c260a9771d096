import { createPrivateKey, X509Certificate } from 'node:crypto';
import { parseDuration } from '../../shared/duration';
import { accessRulesIssue, hasRules, ruleKinds, ruleKindTypes, type RuleKind } from './accessRules';
import { isDomainName } from './address';
import type { FrontendConfig, ProviderType } from './config';
import { checkPathPattern } from './pathRules';
import type { AccessRules, PathRule, ShareOAuth } from './types';

export const DEFAULT_CHECK_INTERVAL = '3h';

/** A share's OAuth options as stored in its svc.proxy.v1 config (`oauth`). */
export interface ShareOAuthOptions extends AccessRules {
  /** one provider (configs written before several were possible, and the first of `providers`) */
  provider?: string;
  providers?: string[];
  checkInterval?: string;
  skipPaths?: string[];
  pathRules?: PathRule[];
}

/** What the running frontend offers to shares (the checks below need nothing else of it). */
export interface ShareCheckContext {
  /** undefined: no `oauth` section */
  providers?: Array<{ name: string; type?: ProviderType }>;
  shareDomain?: string;
  /** the host of oauth.endpoint_url */
  oauthHost?: string;
  /** whether the public listener serves https (custom domains then need their certificate) */
  tls?: boolean;
}

/** A problem with a share, `field` relative to the part checked ('' = that part as a whole). */
export interface ShareIssue {
  field: string;
  reason: string;
}

const KIND_TEXT: Record<RuleKind, string> = {
  github: 'GitHub organization and team rules',
  claim: 'claim rules',
  google_domain: 'Google Workspace domain rules',
};

/** The providers a share's options name, in order (`providers`, else `provider`). */
export function optionProviders(oauth: ShareOAuthOptions): string[] {
  return oauth.providers?.length ? oauth.providers : oauth.provider !== undefined ? [oauth.provider] : [];
}

/**
 * The first problem with a share's OAuth options given what the frontend offers, naming the offending field
 * (relative to `oauth`); undefined when they are fine.
 */
export function shareOAuthIssue(offer: ShareCheckContext['providers'] | string[] | undefined, oauth: ShareOAuthOptions): ShareIssue | undefined {
  const providers = offer?.map((p) => (typeof p === 'string' ? { name: p } : p));
  if (!providers?.length) return { field: '', reason: 'OAuth is not available: the frontend configuration has no "oauth" section' };
  const configured = providers.map((p) => p.name);
  const names = optionProviders(oauth);
  if (!names.length) return { field: 'provider', reason: 'is required (the provider to sign in with)' };
  const fieldOf = (i: number) => (oauth.providers?.length ? `providers.${i}` : 'provider');
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    if (typeof name !== 'string' || !configured.includes(name)) {
      return { field: fieldOf(i), reason: `unknown OAuth provider "${String(name)}" (configured providers: ${configured.join(', ')})` };
    }
    if (names.indexOf(name) !== i) return { field: fieldOf(i), reason: `provider "${name}" is listed twice` };
  }
  if (oauth.provider !== undefined && oauth.providers?.length && !oauth.providers.includes(oauth.provider)) {
    return { field: 'provider', reason: `"${oauth.provider}" must be one of providers (${oauth.providers.join(', ')})` };
  }
  const rulesIssue = accessRulesIssue(oauth);
  if (rulesIssue) return rulesIssue;
  try {
    parseDuration(oauth.checkInterval ?? DEFAULT_CHECK_INTERVAL);
  } catch (err) {
    return { field: 'checkInterval', reason: `OAuth check interval: ${(err as Error).message}` };
  }
  for (let i = 0; i < (oauth.skipPaths ?? []).length; i++) {
    try {
      checkPathPattern(oauth.skipPaths![i]!);
    } catch (err) {
      return { field: `skipPaths.${i}`, reason: (err as Error).message };
    }
  }
  const pathRules = oauth.pathRules ?? [];
  for (let i = 0; i < pathRules.length; i++) {
    const rule = pathRules[i]!;
    try {
      checkPathPattern(rule.path);
    } catch (err) {
      return { field: `pathRules.${i}.path`, reason: (err as Error).message };
    }
    if (!hasRules(rule))
      return { field: `pathRules.${i}`, reason: 'needs at least one condition (email, GitHub organization or team, claim, Google domain)' };
    const issue = accessRulesIssue(rule);
    if (issue) return { field: `pathRules.${i}.${issue.field}`, reason: issue.reason };
  }
  // Rules a provider cannot be checked for (only when the provider types are known)
  const types = names.map((n) => providers.find((p) => p.name === n)?.type);
  if (types.every((t) => t !== undefined)) {
    const kinds = ruleKinds(oauth);
    if (kinds.length) {
      for (let i = 0; i < names.length; i++) {
        if (kinds.some((k) => ruleKindTypes(k).includes(types[i]!))) continue;
        return {
          field: fieldOf(i),
          reason:
            `nobody signing in with "${names[i]}" (${types[i]}) could pass: ${kinds.map((k) => `${KIND_TEXT[k]} can only be checked for ${ruleKindTypes(k).join(' and ')} providers`).join('; ')}. ` +
            'Give the share a rule this provider can be checked against, or leave the provider out',
        };
      }
    }
    for (let i = 0; i < pathRules.length; i++) {
      const ruleKindsOf = ruleKinds(pathRules[i]!);
      if (ruleKindsOf.length && !types.some((t) => ruleKindsOf.some((k) => ruleKindTypes(k).includes(t!)))) {
        return {
          field: `pathRules.${i}`,
          reason: `nobody could reach these paths: ${ruleKindsOf.map((k) => `${KIND_TEXT[k]} can only be checked for ${ruleKindTypes(k).join(' and ')} providers`).join('; ')}, and the share has none`,
        };
      }
    }
  }
  return undefined;
}

/** The first problem with a share's custom domains and their certificate (fields relative to the config data). */
export function shareDomainsIssue(
  offer: Omit<ShareCheckContext, 'providers'>,
  share: { domains?: string[]; domainTls?: { cert: string; key: string } },
  nowMs = Date.now(),
): ShareIssue | undefined {
  const domains = share.domains ?? [];
  for (let i = 0; i < domains.length; i++) {
    const d = domains[i]!;
    if (typeof d !== 'string' || !isDomainName(d) || !d.includes('.') || d !== d.toLowerCase()) {
      return { field: `domains.${i}`, reason: `"${String(d)}" is not a lowercase DNS name such as app.example.com (no scheme, port or path)` };
    }
    const sd = offer.shareDomain?.toLowerCase();
    if (sd && (d === sd || d.endsWith(`.${sd}`))) {
      return { field: `domains.${i}`, reason: `${d} is inside the share domain ${sd}, whose names belong to share tokens` };
    }
    if (offer.oauthHost && d === offer.oauthHost.toLowerCase()) return { field: `domains.${i}`, reason: `${d} is the OAuth endpoint's host` };
    if (domains.indexOf(d) !== i) return { field: `domains.${i}`, reason: `${d} is listed twice` };
  }
  const tls = share.domainTls;
  if (tls && !domains.length) return { field: 'domainTls', reason: 'a certificate is only used with custom domains' };
  if (domains.length && !tls && offer.tls) {
    return {
      field: 'domainTls',
      reason: `is required: this frontend serves https and presents each custom domain's own certificate (SNI); give the certificate and key for ${domains.join(', ')}`,
    };
  }
  if (!tls) return undefined;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(tls.cert);
  } catch {
    return { field: 'domainTls.cert', reason: 'is not a PEM certificate' };
  }
  let key;
  try {
    key = createPrivateKey(tls.key);
  } catch {
    return { field: 'domainTls.key', reason: 'is not an unencrypted PEM private key' };
  }
  if (!cert.checkPrivateKey(key)) return { field: 'domainTls.key', reason: 'does not belong to the certificate' };
  if (Date.parse(cert.validTo) <= nowMs) return { field: 'domainTls.cert', reason: `expired on ${new Date(cert.validTo).toISOString()}` };
  for (const d of domains) {
    if (!cert.checkHost(d)) {
      return { field: 'domainTls.cert', reason: `does not cover ${d} (it names ${cert.subjectAltName ?? cert.subject.replace(/\n/g, ', ')})` };
    }
  }
  return undefined;
}

/** Everything the frontend checks of a share config's data: its custom domains, and `oauth` (fields prefixed). */
export function shareConfigIssue(
  offer: ShareCheckContext | undefined,
  data: { oauth?: ShareOAuthOptions; domains?: string[]; domainTls?: { cert: string; key: string } },
  nowMs = Date.now(),
): ShareIssue | undefined {
  if (!offer && data.oauth) {
    return {
      field: 'oauth',
      reason: 'OAuth is not available: this Weft has no frontend configured (add a "frontend" section with "oauth" to the configuration)',
    };
  }
  if (!offer && data.domains?.length) return { field: 'domains', reason: 'custom domains need a frontend: this Weft has no frontend configured' };
  const domains = shareDomainsIssue(offer ?? {}, data, nowMs);
  if (domains) return domains;
  if (!data.oauth) return undefined;
  const issue = shareOAuthIssue(offer?.providers, data.oauth);
  return issue ? { field: issue.field ? `oauth.${issue.field}` : 'oauth', reason: issue.reason } : undefined;
}

/** Validates a share's OAuth options against the frontend configuration; throws with a clear message. */
export function validateShareOAuth(config: FrontendConfig | undefined, oauth: ShareOAuthOptions): ShareOAuth {
  const issue = shareOAuthIssue(
    config?.oauth?.providers.map((p) => ({ name: p.name, type: p.type })),
    oauth,
  );
  if (issue) throw new Error(issue.reason);
  const names = optionProviders(oauth);
  const share: ShareOAuth = {
    provider: names[0]!,
    emailPatterns: [...(oauth.emailPatterns ?? [])],
    checkIntervalMs: parseDuration(oauth.checkInterval ?? DEFAULT_CHECK_INTERVAL),
  };
  if (names.length > 1) share.providers = names;
  for (const key of ['githubOrgs', 'githubTeams', 'claims', 'googleDomains', 'skipPaths', 'pathRules'] as const) {
    if (oauth[key]?.length) (share as unknown as Record<string, unknown>)[key] = oauth[key];
  }
  return share;
}
