import { isAbsolute } from 'node:path';
import { parseDuration } from '../../../shared/duration';
import type { Ctx } from '../context';
import type { Core } from '../core';
import { SVC_PROXY_CONFIG_TYPE_ID } from '../entities/builtinConfigTypes';
import { validationError } from '../errors';
import type { ShareOAuthCheck, ShareOAuthData } from './oauth';

export type { ShareFieldIssue, ShareOAuthCheck, ShareOAuthData } from './oauth';

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

/** svc.proxy.v1 config data as stored (its JSON schema is in entities/builtinConfigTypes.ts). */
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
  oauth?: ShareOAuthData;
}

/** A live share as the frontend serves it (structurally the frontend's PublicShare). */
export interface LiveShare {
  token: string;
  backendMode: 'proxy' | 'web';
  target: string;
  /** overlay mode: the service the frontend dials */
  overlay?: { serviceId: string };
  oauth?: { provider: string; emailPatterns: string[]; checkIntervalMs: number };
}

export const NO_FRONTEND_OAUTH_CHECK: ShareOAuthCheck = () => ({
  field: '',
  reason: 'OAuth is not available: this Weft has no frontend configured',
});

/** Share tokens are the first DNS label of the share's host name. */
export const SHARE_TOKEN = /^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/;

// The literal type id lets SQLite use the partial expression index configs_share_token (migration 005).
const SHARE_BY_TOKEN = `SELECT c.id, c.name FROM configs c
  WHERE c.config_type_id = '${SVC_PROXY_CONFIG_TYPE_ID}' AND json_extract(c.data, '$.token') = ? AND c.id <> ? LIMIT 1`;
const LIVE_SHARE_BY_TOKEN = `SELECT c.data, sc.service_id FROM configs c JOIN service_configs sc ON sc.config_id = c.id
  WHERE c.config_type_id = '${SVC_PROXY_CONFIG_TYPE_ID}' AND json_extract(c.data, '$.token') = ?
  ORDER BY sc.service_id LIMIT 1`;

/**
 * What the JSON schema cannot say about a svc.proxy.v1 config: the token is a DNS label no other share uses,
 * the target fits the backend mode, and the OAuth options name a provider of the running frontend with
 * valid email globs and a positive check interval. Runs inside the config write's transaction.
 */
export async function validateShareConfig(ctx: Ctx, data: Record<string, unknown>, configId: string | undefined): Promise<void> {
  const share = data as unknown as ShareConfigData;
  if (!SHARE_TOKEN.test(share.token)) {
    throw validationError('data.token', 'must be 3-63 lowercase letters, digits or "-", and start and end with a letter or digit', share.token);
  }
  const taken = await ctx.core.store.getSql<{ id: string; name: string }>(SHARE_BY_TOKEN, share.token, configId ?? '');
  if (taken) throw validationError('data.token', `is already used by the share config "${taken.name}"`, share.token);
  if (share.backendMode === 'proxy' && !isProxyTarget(share.target)) {
    throw validationError('data.target', 'must be an absolute http or https URL without credentials for backend mode proxy', share.target);
  }
  if (share.backendMode === 'web' && !isAbsolute(share.target)) {
    throw validationError('data.target', 'must be an absolute directory path for backend mode web', share.target);
  }
  if (share.oauth) {
    const issue = (ctx.core.config.checkShareOAuth ?? NO_FRONTEND_OAUTH_CHECK)(share.oauth);
    if (issue) {
      const field = issue.field ? `data.oauth.${issue.field}` : 'data.oauth';
      throw validationError(field, issue.reason, valueAt(share.oauth, issue.field));
    }
  }
}

/** The share with this token if a service carries its config, in the shape the frontend serves. */
export async function findLiveShare(core: Core, token: string): Promise<LiveShare | undefined> {
  const row = await core.store.getSql<{ data: string; service_id: string }>(LIVE_SHARE_BY_TOKEN, token);
  return row ? shareFromData(core, token, row.data, row.service_id) : undefined;
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
    share.oauth = { provider: data.oauth.provider, emailPatterns: data.oauth.emailPatterns ?? [], checkIntervalMs };
  }
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
export function createShareResolver(core: Core): { resolve(token: string): Promise<LiveShare | undefined> } {
  const cache = new Map<string, LiveShare | undefined>();
  let cachedChanges = -1;
  let cachedAtMs = 0;
  return {
    async resolve(token) {
      const changes = core.store.generation;
      const nowMs = performance.now();
      if (changes !== cachedChanges || nowMs - cachedAtMs > MAX_ANSWER_AGE_MS) {
        cache.clear();
        cachedChanges = changes;
        cachedAtMs = nowMs;
      }
      if (cache.has(token)) return cache.get(token);
      const share = await findLiveShare(core, token);
      // the store changed, or a newer cache began, while this answer was read: not cached
      if (core.store.generation !== changes || cachedChanges !== changes || cachedAtMs > nowMs) return share;
      if (cache.size >= RESOLVER_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(token, share);
      return share;
    },
  };
}

function isProxyTarget(target: string): boolean {
  if (!URL.canParse(target)) return false;
  const url = new URL(target);
  return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && url.hostname !== '';
}

function valueAt(oauth: ShareOAuthData, field: string): unknown {
  let v: unknown = oauth;
  for (const p of field.split('.').filter(Boolean)) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}
