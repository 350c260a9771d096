import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { ApiError, validationError } from '../errors';
import { applyDelete, applyUpdate, namesById, type ResourceDef } from './resource';
import { getRow, json, rowShape } from '../store/rows';

/**
 * Operations on many entities at once (the console's multi-select): each entity is its own write through the generic
 * resource path, so one that cannot change (a referenced config, the default admin) is reported and the others go
 * ahead. The permission is checked once, before anything is written.
 */

export const BULK_LIMIT = 500;

export interface BulkOutcome {
  id: string;
  name?: string;
  ok: boolean;
  error?: { code: string; message: string; field?: string; reason?: string };
}

export interface BulkResult {
  done: number;
  failed: number;
  outcomes: BulkOutcome[];
}

function checkIds(ids: string[]): string[] {
  const unique = [...new Set(ids)];
  if (!unique.length) throw validationError('ids', 'must name at least one entity', ids);
  if (unique.length > BULK_LIMIT) throw validationError('ids', `at most ${BULK_LIMIT} entities at a time`, unique.length);
  return unique;
}

/** Runs `op` for each of `ids` (at most BULK_LIMIT), reporting each outcome; an ApiError fails only its own entity. */
export async function eachEntity(ctx: Ctx, def: ResourceDef, ids: string[], op: (id: string) => Promise<void>): Promise<BulkResult> {
  const list = checkIds(ids);
  const names = await namesById(ctx.core.store, def.table, list);
  const outcomes: BulkOutcome[] = [];
  for (const id of list) {
    try {
      await op(id);
      outcomes.push({ id, name: names.get(id), ok: true });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      outcomes.push({
        id,
        name: names.get(id),
        ok: false,
        error: { code: e.code, message: e.message, field: e.fieldCause?.field, reason: e.fieldCause?.reason },
      });
    }
  }
  const done = outcomes.filter((o) => o.ok).length;
  return { done, failed: outcomes.length - done, outcomes };
}

export async function bulkDelete(ctx: Ctx, def: ResourceDef, ids: string[]): Promise<BulkResult> {
  requirePermission(ctx.caller, def.permission, 'delete');
  return eachEntity(ctx, def, ids, (id) => applyDelete(ctx, def, id));
}

const ROLE_ATTRIBUTES = rowShape({ role_attributes: json<string[]>('?') });
const cleanAttr = (a: string) => a.trim().replace(/^#/, '');

/** Adds and removes role attributes on entities that have them (identities, services, edge routers, posture checks). */
export async function bulkRoleAttributes(
  ctx: Ctx,
  def: ResourceDef,
  ids: string[],
  change: { add?: string[]; remove?: string[] },
): Promise<BulkResult> {
  requirePermission(ctx.caller, def.permission, 'update');
  if (!def.roleKind || !def.schemas.patch) throw validationError('resource', `${def.entity} have no role attributes`, def.entity);
  const add = [...new Set((change.add ?? []).map(cleanAttr).filter(Boolean))];
  const remove = new Set((change.remove ?? []).map(cleanAttr).filter(Boolean));
  if (!add.length && !remove.size) throw validationError('add', 'name an attribute to add or remove', null);
  const store = ctx.core.store;
  // read and written in one transaction: a change made meanwhile (another bulk change, a PATCH) is not lost
  return eachEntity(ctx, def, ids, (id) =>
    store.tx(async () => {
      const row = await getRow(store, ROLE_ATTRIBUTES, `SELECT role_attributes FROM ${def.table} WHERE id = ?`, id);
      if (!row) throw new ApiError('NOT_FOUND', 404, `The ${def.entity} requested was not found or is no longer available`);
      const current = row.role_attributes ?? [];
      const next = [...current.filter((a) => !remove.has(a)), ...add.filter((a) => !current.includes(a) && !remove.has(a))];
      if (next.length === current.length && next.every((a, i) => a === current[i])) return;
      await applyUpdate(ctx, def, id, { roleAttributes: next }, 'patch');
    }),
  );
}
