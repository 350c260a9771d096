import type { Core, Ctx } from '../core';
import type { Write, WriteSubscriber } from '../entities/writeGate';
import type { Caller } from '../permissions';
import { newId } from '../ids';
import { defineResource } from '../entities/define';

/**
 * The audit log: who changed what through the Management API or the console, and every login and MFA completion,
 * successful or not. Adapters record (REST: api/server.ts for every route it serves; the console: its tRPC mutation
 * path), the core stores and lists. Entries name the caller, the source address, the action and the entity, and the
 * outcome with the error code; never a secret — no passwords, tokens, codes or request bodies.
 */
export type AuditSource = 'management' | 'client' | 'fabric' | 'console';
export type AuditOutcome = 'success' | 'failure';

export interface AuditEntry {
  source: AuditSource;
  /** create | update | patch | delete (from the HTTP method, see `routeAction`), login, mfa, logout, read */
  action: string;
  entityType?: string;
  entityId?: string;
  /** the route template ("POST /identities/:id/disable") or the console procedure */
  route?: string;
  /** the identity and API session acting (for a login: the one that logged in) */
  caller?: Pick<Caller, 'identityId' | 'identityName' | 'apiSessionId'>;
  /** logins: what was tried — a username, a certificate fingerprint, a token subject */
  principal?: string;
  /** logins: password | cert | ext-jwt | link */
  authMethod?: string;
  sourceAddress?: string;
  outcome: AuditOutcome;
  errorCode?: string;
}

const MAX_TEXT = 256;
/** What was tried is recorded as text any store holds: bounded, NUL characters (PostgreSQL refuses them) shown as U+FFFD. */
const text = (v: string | undefined): string | null =>
  v === undefined || v === '' ? null : (v.length > MAX_TEXT ? v.slice(0, MAX_TEXT) : v).replace(/\u0000/g, '\uFFFD');

/**
 * Stores one entry. Never throws: an audit write that fails (e.g. the store is unavailable, in which case the
 * request failed as well) is logged, and the caller's answer stands.
 */
export async function recordAudit(core: Core, e: AuditEntry, id = newId()): Promise<void> {
  try {
    await insertAudit(core, id, e);
  } catch (err) {
    core.log.error({ err, action: e.action, entityType: e.entityType }, 'could not write an audit log entry');
  }
}

/**
 * A request's audit entry, written with its first write of the entity it names (through the write gate: in that
 * write's transaction, so the entry commits or rolls back with the change). `covers` tells that write; once the
 * request has succeeded, `settle` writes the entry unless that transaction committed it (a request that wrote
 * nothing through the gate, e.g. a snapshot, is recorded then).
 */
export class PendingAudit {
  readonly id = newId();
  private written = false;

  constructor(
    private readonly entry: AuditEntry,
    private readonly covers: (w: Write<Ctx>) => boolean,
  ) {}

  readonly onWrite: WriteSubscriber<Ctx> = async (w) => {
    if (this.written || !this.covers(w)) return;
    this.written = true;
    await insertAudit(w.ctx.core, this.id, { ...this.entry, entityId: this.entry.entityId ?? w.id, outcome: 'success' });
  };

  /** After the request succeeded: its entry as it ends (`entry`), unless the gate already committed it. */
  async settle(core: Core, entry: AuditEntry): Promise<void> {
    if (this.written && (await core.store.getSql('SELECT 1 FROM audit_log WHERE id = ?', this.id).catch(() => undefined))) return;
    await recordAudit(core, entry, this.id);
  }
}

/** Whether a write is the one a request names: of its entity type, the id it names (none: the create it makes). */
export function coversWrite(entityType: string, entityId: string | undefined): (w: Write<Ctx>) => boolean {
  const entity = entityType.split('/')[0];
  // Weft's own types are named for their path under /weft/
  return (w) => (w.def.entity === entity || w.def.entity === entityType) && (entityId === undefined ? w.op === 'create' : w.id === entityId);
}

/** Stores one entry (failing with the transaction it is part of). */
async function insertAudit(core: Core, id: string, e: AuditEntry): Promise<void> {
  const now = core.clock.now().toISOString();
  // the system itself (unauthenticated routes run as it) is no caller worth naming
  const caller = e.caller?.identityId === 'system' ? undefined : e.caller;
  // queued: inside a transaction, on PostgreSQL, it goes out with what follows (at the latest with COMMIT)
  await core.store.queueSql(
    `INSERT INTO audit_log (id, source, action, entity_type, entity_id, route, identity_id, identity_name, api_session_id, principal,
         auth_method, source_address, outcome, error_code, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    id,
    e.source,
    e.action,
    text(e.entityType),
    text(e.entityId),
    text(e.route),
    text(caller?.identityId),
    text(caller?.identityName),
    text(caller?.apiSessionId),
    text(e.principal),
    text(e.authMethod),
    text(e.sourceAddress),
    e.outcome,
    text(e.errorCode),
    now,
    now,
  );
}

const METHOD_ACTIONS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete', GET: 'read' };

/**
 * What a write route does, for the log: the action from the method (POST create, PUT update, PATCH patch, DELETE
 * delete) and the entity type from the route's literal segments (`/identities/:id` → identities,
 * `/identities/:id/disable` → identities/disable, `/database/snapshot` → database/snapshot); the entity id is the
 * route's `:id` (or the id a create answers with).
 */
export function routeAction(method: string, path: string): { action: string; entityType: string; route: string } {
  const literal = path.split('/').filter((s) => s && !s.startsWith(':'));
  return { action: METHOD_ACTIONS[method] ?? method.toLowerCase(), entityType: literal.join('/'), route: `${method} ${path}` };
}

/**
 * Keeps the log bounded: entries older than `retentionMs`, and the oldest beyond `maxEntries`, are deleted.
 * Returns how many went.
 */
export async function pruneAuditLog(core: Core, opts: { retentionMs: number; maxEntries: number }): Promise<number> {
  const store = core.store;
  const cutoff = new Date(core.clock.now().getTime() - opts.retentionMs).toISOString();
  let removed = (await store.runSql('DELETE FROM audit_log WHERE created_at < ?', cutoff)).changes;
  const oldestKept = await store.getSql<{ created_at: string; seq: number }>(
    'SELECT created_at, seq FROM audit_log ORDER BY created_at DESC, seq DESC LIMIT 1 OFFSET ?',
    opts.maxEntries - 1,
  );
  if (oldestKept) {
    removed += (
      await store.runSql(
        'DELETE FROM audit_log WHERE created_at < ? OR (created_at = ? AND seq < ?)',
        oldestKept.created_at,
        oldestKept.created_at,
        oldestKept.seq,
      )
    ).changes;
  }
  if (removed) core.log.info({ removed }, 'audit log pruned');
  return removed;
}

/**
 * `GET /audit-log` and `/audit-log/{id}` (a Weft extension: OpenZiti has no such resource) for administrators and
 * `ops` readers; read-only, paged and filtered with ZitiQL like every list, newest first.
 */
export const auditLog = defineResource({
  entity: 'audit-log',
  table: 'audit_log',
  permission: 'ops',
  writable: false,
  fields: {
    source: { codec: 'string', filter: true },
    action: { codec: 'string', filter: true },
    entityType: { codec: 'string', filter: true },
    entityId: { codec: 'string', filter: true },
    route: { codec: 'string', filter: true },
    identityId: { codec: 'string', filter: true },
    identityName: { codec: 'string', filter: true },
    apiSessionId: { codec: 'string', filter: true },
    principal: { codec: 'string', filter: true },
    authMethod: { codec: 'string', filter: true },
    sourceAddress: { codec: 'string', filter: true },
    outcome: { codec: 'string', filter: true },
    errorCode: { codec: 'string', filter: true },
  },
  defaultSort: 't.created_at DESC, t.seq DESC',
});
