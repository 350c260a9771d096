import { isAbsolute } from 'node:path';
import { parseDuration } from '../../../shared/duration';
import type { Ctx } from '../context';
import type { Core } from '../core';
import { SVC_PROXY_CONFIG_TYPE_ID } from '../entities/builtinConfigTypes';
import { validationError } from '../errors';
import type { SqlDialect } from '../store/sqlDialect';
import type { ShareCheckData, ShareClaimRule, ShareFieldIssue, ShareOAuthCheck, ShareOAuthData, SharePathRule } from './oauth';

export type { ShareAccessRules, ShareCheckData, ShareClaimRule, ShareFieldIssue, ShareOAuthCheck, ShareOAuthData, SharePathRule } from './oauth';

/**
 * Public shares. A share is a config of type svc.proxy.v1 plus a service carrying it; it is live only while
 * such a service exists. The frontend resolves `<token>.<share domain>` through `findLiveShare`.
 */

/** Tag set on the config and service of shares created by `weft share public`. */
export const SHARE_TAG = 'weft.share';
/** Used when a share config has OAuth but no checkInterval (the seed's default). */
export const DEFAULT_SHARE_CHECK_INTERVAL = '3h';

/** Name of the config and of the service of the share with this token. */
export const shareResourceName = (token: string) => `share-${token}`;

/** svc.proxy.v1 config data as stored (its JSON schema is schema.ts). */
export interface ShareConfigData {
  token: string;
  backendMode: 'proxy' | 'web';
  /** http(s) URL for `proxy`, absolute directory for `web` (on the machine that serves it) */
  target: string;
  /**
   * Overlay mode: the frontend dials the share's service through the built-in edge router and a `weft share`
   * process, which binds the service, serves the backend (here or on another machine). Absent: local mode, the
   * frontend proxies to the target (or serves the directory) itself.
   */
  overlay?: boolean;
  /** host names the share also answers at (lowercase DNS names), besides `<token>.<share domain>` */
  domains?: string[];
  /** the certificate and private key (PEM) the https frontend presents for `domains` */
  domainTls?: { cert: string; key: string };
  oauth?: ShareOAuthData;
}

/** A live share as the frontend serves it (structurally the frontend's PublicShare). */
export interface LiveShare {
  token: string;
  backendMode: 'proxy' | 'web';
  target: string;
  /** overlay mode: the service the frontend dials */
  overlay?: { serviceId: string };
  oauth?: {
    provider: string;
    providers?: string[];
    emailPatterns: string[];
    checkIntervalMs: number;
    githubOrgs?: string[];
    githubTeams?: string[];
    claims?: ShareClaimRule[];
    googleDomains?: string[];
    skipPaths?: string[];
    pathRules?: SharePathRule[];
  };
  domains?: string[];
  domainTls?: { cert: string; key: string };
}

export const NO_FRONTEND_OAUTH_CHECK: ShareOAuthCheck = () => ({
  field: '',
  reason: 'OAuth is not available: this Weft has no frontend configured',
});

/** The providers of a share's OAuth options, in order: `providers`, else `provider`. */
export function shareOAuthProviders(oauth: ShareOAuthData): string[] {
  return oauth.providers?.length ? oauth.providers : oauth.provider ? [oauth.provider] : [];
}

/** Share tokens are the first DNS label of the share's host name. */
export const SHARE_TOKEN = /^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/;

// The literal type id (and the index's own expression) lets the store use the partial expression index
// configs_share_token (migration 005).
const SHARE_BY_TOKEN = (sql: SqlDialect) => `SELECT c.id, c.name FROM configs c
  WHERE c.config_type_id = '${SVC_PROXY_CONFIG_TYPE_ID}' AND ${sql.jsonExtract('c.data', '$.token')} = ? AND c.id <> ? LIMIT 1`;
const LIVE_SHARE_BY_TOKEN = (sql: SqlDialect) => `SELECT c.data, sc.service_id FROM configs c JOIN service_configs sc ON sc.config_id = c.id
  WHERE c.config_type_id = '${SVC_PROXY_CONFIG_TYPE_ID}' AND ${sql.jsonExtract('c.data', '$.token')} = ?
  ORDER BY sc.service_id LIMIT 1`;
// Custom domains: the candidates hold the name as a JSON string somewhere (case-insensitively; DNS names have no LIKE
// wildcards), then the parsed `domains` decide.
const SHARES_MENTIONING = (sql: SqlDialect) => `SELECT c.id, c.name, c.data FROM configs c
  WHERE c.config_type_id = '${SVC_PROXY_CONFIG_TYPE_ID}' AND ${sql.like('c.data', '?')} AND c.id <> ?`;
const LIVE_SHARES_MENTIONING = (sql: SqlDialect) => `SELECT c.data, sc.service_id FROM configs c JOIN service_configs sc ON sc.config_id = c.id
  WHERE c.config_type_id = '${SVC_PROXY_CONFIG_TYPE_ID}' AND ${sql.like('c.data', '?')} ORDER BY sc.service_id`;
const mentioning = (domain: string) => `%"${domain}"%`;

/**
 * What the JSON schema cannot say about a svc.proxy.v1 config: the token is a DNS label no other share uses,
 * the target fits the backend mode, the OAuth options name providers of the running frontend with valid rules
 * (globs, GitHub names, claims, regular expressions) and a positive check interval, and custom domains are DNS names
 * no other share uses, outside the share domain, with a certificate that covers them (required on an https
 * frontend). Runs inside the config write's transaction.
 */
export async function validateShareConfig(ctx: Ctx, data: Record<string, unknown>, configId: string | undefined): Promise<void> {
  const share = data as unknown as ShareConfigData;
  if (!SHARE_TOKEN.test(share.token)) {
    throw validationError('data.token', 'must be 3-63 lowercase letters, digits or "-", and start and end with a letter or digit', share.token);
  }
  const taken = await ctx.core.store.getSql<{ id: string; name: string }>(SHARE_BY_TOKEN(ctx.core.store.sql), share.token, configId ?? '');
  if (taken) throw validationError('data.token', `is already used by the share config "${taken.name}"`, share.token);
  if (share.backendMode === 'proxy' && !isProxyTarget(share.target)) {
    throw validationError('data.target', 'must be an absolute http or https URL without credentials for backend mode proxy', share.target);
  }
  if (share.backendMode === 'web' && !isAbsolute(share.target)) {
    throw validationError('data.target', 'must be an absolute directory path for backend mode web', share.target);
  }
  const domains = Array.isArray(share.domains) ? share.domains : [];
  if (share.oauth && !shareOAuthProviders(share.oauth).length) {
    throw validationError('data.oauth.provider', 'is required (or providers)', undefined);
  }
  const check = ctx.core.config.checkShareOAuth as ShareOAuthCheck | undefined;
  let issue: ShareFieldIssue | undefined;
  if (check?.share) {
    const checked: ShareCheckData = { oauth: share.oauth, domains: share.domains, domainTls: share.domainTls };
    issue = check.share(checked);
  } else if (share.oauth) {
    const found = (check ?? NO_FRONTEND_OAUTH_CHECK)({ ...share.oauth, provider: shareOAuthProviders(share.oauth)[0]! });
    issue = found && { field: found.field ? `oauth.${found.field}` : 'oauth', reason: found.reason };
  } else if (domains.length) {
    issue = { field: 'domains', reason: 'custom domains need a frontend: this Weft has no frontend configured' };
  }
  if (issue) {
    const field = issue.field ? `data.${issue.field}` : 'data';
    throw validationError(field, issue.reason, redacted(issue.field, valueAt(share as unknown as Record<string, unknown>, issue.field)));
  }
  for (let i = 0; i < domains.length; i++) {
    const domain = String(domains[i]).toLowerCase();
    const rows = await ctx.core.store.allSql<{ id: string; name: string; data: string }>(
      SHARES_MENTIONING(ctx.core.store.sql),
      mentioning(domain),
      configId ?? '',
    );
    const other = rows.find((r) => ((JSON.parse(r.data) as ShareConfigData).domains ?? []).some((d) => d.toLowerCase() === domain));
    if (other) throw validationError(`data.domains.${i}`, `is already used by the share config "${other.name}"`, domains[i]);
  }
}

/** A private key is never echoed in an error. */
function redacted(field: string, value: unknown): unknown {
  return field.startsWith('domainTls') ? '<redacted>' : value;
}

/** The share with this token if a service carries its config, in the shape the frontend serves. */
export async function findLiveShare(core: Core, token: string): Promise<LiveShare | undefined> {
  const row = await core.store.getSql<{ data: string; service_id: string }>(LIVE_SHARE_BY_TOKEN(core.store.sql), token);
  return row ? shareFromData(core, token, row.data, row.service_id) : undefined;
}

/** The live share answering at this custom domain (a lowercase host name), if any. */
export async function findLiveShareByDomain(core: Core, domain: string): Promise<LiveShare | undefined> {
  const host = domain.toLowerCase();
  if (!/^[a-z0-9.-]{1,253}$/.test(host)) return undefined;
  const rows = await core.store.allSql<{ data: string; service_id: string }>(LIVE_SHARES_MENTIONING(core.store.sql), mentioning(host));
  for (const row of rows) {
    const data = JSON.parse(row.data) as ShareConfigData;
    if ((data.domains ?? []).some((d) => d.toLowerCase() === host)) return shareFromData(core, data.token, row.data, row.service_id);
  }
  return undefined;
}

function shareFromData(core: Core, token: string, json: string, serviceId: string): LiveShare | undefined {
  const data = JSON.parse(json) as ShareConfigData;
  const share: LiveShare = { token: data.token, backendMode: data.backendMode, target: data.target };
  if (data.overlay) share.overlay = { serviceId };
  if (data.oauth) {
    let checkIntervalMs: number;
    try {
      checkIntervalMs = parseDuration(data.oauth.checkInterval ?? DEFAULT_SHARE_CHECK_INTERVAL);
    } catch {
      // Only data written before validation existed can get here; an OAuth share must never be served open.
      core.log.warn({ share: token }, 'share config has an invalid oauth.checkInterval; not serving it');
      return undefined;
    }
    const providers = shareOAuthProviders(data.oauth);
    if (!providers.length) {
      core.log.warn({ share: token }, 'share config has no oauth provider; not serving it');
      return undefined;
    }
    const o = data.oauth;
    share.oauth = { provider: providers[0]!, emailPatterns: o.emailPatterns ?? [], checkIntervalMs };
    if (providers.length > 1) share.oauth.providers = providers;
    if (o.githubOrgs?.length) share.oauth.githubOrgs = o.githubOrgs;
    if (o.githubTeams?.length) share.oauth.githubTeams = o.githubTeams;
    if (o.claims?.length) share.oauth.claims = o.claims;
    if (o.googleDomains?.length) share.oauth.googleDomains = o.googleDomains;
    if (o.skipPaths?.length) share.oauth.skipPaths = o.skipPaths;
    if (o.pathRules?.length) share.oauth.pathRules = o.pathRules;
  }
  if (data.domains?.length) share.domains = data.domains.map((d) => d.toLowerCase());
  if (data.domainTls) share.domainTls = data.domainTls;
  return share;
}

const RESOLVER_CACHE_SIZE = 4096;
// Writers outside Weft are not counted by the store's generation (which other Weft nodes' writes do advance);
// answers are never older than this.
const MAX_ANSWER_AGE_MS = 1000;

/**
 * The frontend's ShareResolver, backed by the store. Answers (misses too) are cached until the store changes,
 * so a deleted service stops its share on the very next request, while an unchanged store costs no statement at all.
 */
export function createShareResolver(core: Core): {
  resolve(token: string): Promise<LiveShare | undefined>;
  resolveDomain(host: string): Promise<LiveShare | undefined>;
} {
  const cache = new Map<string, LiveShare | undefined>();
  let cachedChanges = -1;
  let cachedAtMs = 0;
  const cached = async (key: string, find: () => Promise<LiveShare | undefined>): Promise<LiveShare | undefined> => {
    const changes = core.store.generation;
    const nowMs = performance.now();
    if (changes !== cachedChanges || nowMs - cachedAtMs > MAX_ANSWER_AGE_MS) {
      cache.clear();
      cachedChanges = changes;
      cachedAtMs = nowMs;
    }
    if (cache.has(key)) return cache.get(key);
    const share = await find();
    // the store changed, or a newer cache began, while this answer was read: not cached
    if (core.store.generation !== changes || cachedChanges !== changes || cachedAtMs > nowMs) return share;
    if (cache.size >= RESOLVER_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(key, share);
    return share;
  };
  return {
    resolve: (token) => cached(token, () => findLiveShare(core, token)),
    // tokens never hold "@", so the two kinds of keys cannot meet
    resolveDomain: (host) => cached(`@${host}`, () => findLiveShareByDomain(core, host)),
  };
}

function isProxyTarget(target: string): boolean {
  if (!URL.canParse(target)) return false;
  const url = new URL(target);
  return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && url.hostname !== '';
}

function valueAt(data: Record<string, unknown>, field: string): unknown {
  let v: unknown = data;
  for (const p of field.split('.').filter(Boolean)) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}
