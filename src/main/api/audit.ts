import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { Caller } from '../core/auth/index';
import type { Core } from '../core/context';
import { coversWrite, PendingAudit, recordAudit, routeAction, type AuditEntry } from '../core/ops/index';
import type { ApiName, ApiRequest, RouteDef } from './registry';

/**
 * What the REST adapter records in the audit log (core/ops/audit.ts): every Management and Fabric API write (POST,
 * PUT, PATCH, DELETE, whatever the route: e.g. ending a circuit) and every authentication (POST /authenticate, /authenticate/mfa) on either API,
 * successful or not. Decided once per route when it is registered; undefined = not recorded.
 */
export interface RestAuditTarget {
  kind: 'write' | 'login' | 'mfa';
  action: string;
  entityType: string;
  route: string;
}

const LOGIN_METHODS = new Set(['password', 'cert', 'ext-jwt']);

export function auditTarget(api: ApiName, route: RouteDef): RestAuditTarget | undefined {
  const described = routeAction(route.method, route.path);
  if (route.method === 'POST' && route.path === '/authenticate') return { ...described, kind: 'login', action: 'login', entityType: 'api-sessions' };
  if (route.method === 'POST' && route.path === '/authenticate/mfa') return { ...described, kind: 'mfa', action: 'mfa', entityType: 'api-sessions' };
  if (api === 'client' || route.method === 'GET') return undefined;
  return { ...described, kind: 'write' };
}

/** One request's audit state: the target, then what the adapter learnt while serving it. */
export interface RestAudit {
  target: RestAuditTarget;
  api: ApiName;
  /** set once the route's handler is reached */
  request?: ApiRequest;
  caller?: Caller;
  recorded?: boolean;
  /** a write's entry, waiting for the write it names (see pendingRestAudit) */
  pending?: PendingAudit;
}

/**
 * A write route's entry, made before its handler runs and written by the core's write gate with the write the route
 * names, in that write's transaction; `recordRestAudit` settles it once the request has succeeded.
 */
export function pendingRestAudit(audit: RestAudit, req: ApiRequest): PendingAudit {
  const { target } = audit;
  const entry: AuditEntry = {
    source: audit.api,
    action: target.action,
    entityType: target.entityType,
    entityId: req.params.id,
    route: target.route,
    caller: audit.caller,
    sourceAddress: req.ip,
    outcome: 'success',
  };
  return (audit.pending = new PendingAudit(entry, coversWrite(target.entityType, req.params.id)));
}

/**
 * The login's principal as far as the request shows it, never a secret: the username (password), the SHA-1
 * fingerprint of the client certificate (cert), the subject of the bearer JWT, unverified (ext-jwt).
 */
function loginPrincipal(req: ApiRequest, method: string | undefined): string | undefined {
  try {
    if (method === 'password') {
      const username = (req.body as { username?: unknown } | undefined)?.username;
      return typeof username === 'string' ? username : undefined;
    }
    if (method === 'cert') {
      const leaf = req.peerCertificates[0];
      return leaf && createHash('sha1').update(leaf).digest('hex');
    }
    if (method === 'ext-jwt') {
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''))?.[1];
      const sub = bearer ? decodeJwt(bearer).sub : undefined;
      return typeof sub === 'string' ? sub : undefined;
    }
  } catch {
    // an unreadable certificate or token names no one
  }
  return undefined;
}

function methodOf(req: ApiRequest): string | undefined {
  const m = req.query.method;
  const method = Array.isArray(m) ? m[m.length - 1] : m;
  return method && LOGIN_METHODS.has(method) ? method : undefined;
}

/**
 * Records the outcome of a request: `data` is the reply's (a create's new id, a login's API session), `errorCode` the
 * failure's. `req` is absent when the request failed before the route's handler (e.g. a body that does not parse).
 */
export async function recordRestAudit(
  core: Core,
  audit: RestAudit,
  outcome: { status?: number; data?: unknown; errorCode?: string },
  req: ApiRequest | undefined,
  ip: string,
): Promise<void> {
  if (audit.recorded) return;
  audit.recorded = true;
  const { target } = audit;
  const data = (outcome.data ?? undefined) as { id?: unknown; identity?: { id?: unknown; name?: unknown } } | undefined;
  const entry: AuditEntry = {
    source: audit.api,
    action: target.action,
    entityType: target.entityType,
    route: target.route,
    caller: audit.caller,
    sourceAddress: ip,
    outcome: outcome.errorCode ? 'failure' : 'success',
    errorCode: outcome.errorCode,
  };
  if (target.kind === 'login') {
    const method = req && methodOf(req);
    entry.authMethod = method;
    entry.principal = req && loginPrincipal(req, method);
    if (!outcome.errorCode && typeof data?.id === 'string') {
      entry.entityId = data.id;
      entry.caller = { identityId: String(data.identity?.id ?? ''), identityName: String(data.identity?.name ?? ''), apiSessionId: data.id };
    }
  } else if (target.kind === 'mfa') {
    entry.entityId = audit.caller?.apiSessionId;
  } else {
    entry.entityId = req?.params.id ?? (outcome.status === 201 && typeof data?.id === 'string' ? data.id : undefined);
  }
  if (audit.pending && !outcome.errorCode) await audit.pending.settle(core, entry);
  else await recordAudit(core, entry);
}

/**
 * Records a step of an OIDC login (api/routes/oidc.ts) as POST /authenticate's are: a primary login (`login`, with
 * its method and principal) or the TOTP step (`mfa`); `done` names the identity and API session on success.
 */
export async function recordOidcAudit(
  core: Core,
  req: ApiRequest,
  step: {
    action: 'login' | 'mfa';
    route: string;
    method?: string;
    done?: { identityId: string; identityName: string; apiSessionId: string };
    errorCode?: string;
  },
): Promise<void> {
  await recordAudit(core, {
    source: 'client',
    action: step.action,
    entityType: 'api-sessions',
    entityId: step.done?.apiSessionId,
    route: step.route,
    caller: step.done,
    authMethod: step.method,
    principal: step.action === 'login' ? loginPrincipal(req, step.method) : undefined,
    sourceAddress: req.ip,
    outcome: step.errorCode ? 'failure' : 'success',
    errorCode: step.errorCode,
  });
}
