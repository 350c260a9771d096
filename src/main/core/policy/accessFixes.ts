import type { Ctx } from '../context';
import { createResource, updateResource, type ResourceDef } from '../entities/resource';
import { requirePermission } from '../permissions';
import type { Store } from '../store/db';
import { classFor } from './access';
import type { FixChange, FixResource } from './accessExplain';
import { edgeRouterPolicies } from './edgeRouterPolicies';
import { identities } from './identities';
import { serviceEdgeRouterPolicies } from './serviceEdgeRouterPolicies';
import { servicePolicies } from './servicePolicies';

/**
 * Applying a fix of the "why" chain (accessExplain.ts): every write of it in one transaction, through the generic
 * write path (each checked for the caller); and its preview, the same writes in a transaction rolled back, telling
 * which identities would newly reach the service (a Dial — or Bind — grant and an edge router in common) and which
 * would lose it.
 */

const DEFS: Record<FixResource, ResourceDef> = {
  'service-policies': servicePolicies,
  'edge-router-policies': edgeRouterPolicies,
  'service-edge-router-policies': serviceEdgeRouterPolicies,
  identities,
};
/** Identities a preview names (the counts are exact). */
const MAX_NAMED = 20;
/** Identities a preview compares at most (a larger network gets the counts of the first ones). */
const MAX_COMPARED = 20_000;

type Named = { id: string; name: string };

/** Identities that reach the service: a grant of the type, and an edge router in common. */
async function reaching(store: Store, serviceClass: number, type: 'Dial' | 'Bind'): Promise<Map<string, string>> {
  const rows = await store.allSql<Named>(
    `SELECT i.id, i.name FROM identities i
     JOIN role_class_members m ON m.kind = 'identity' AND m.entity_id = i.id
     JOIN service_access a ON a.identity_class = m.class_id AND a.service_class = ? AND a.${type === 'Dial' ? 'dial' : 'bind'} > 0
     WHERE EXISTS (SELECT 1 FROM identity_router_access ira
                   JOIN service_router_access sra ON sra.router_class = ira.router_class AND sra.service_class = ?
                   WHERE ira.identity_class = m.class_id)
     ORDER BY i.name LIMIT ${MAX_COMPARED}`,
    serviceClass,
    serviceClass,
  );
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** One write, checked for the caller. */
async function write(ctx: Ctx, c: FixChange): Promise<string> {
  const def = DEFS[c.resource];
  if (c.op === 'create') return createResource(ctx, def, c.body);
  await updateResource(ctx, def, c.id!, c.body, 'patch');
  return c.id!;
}

/** Every write of a fix, in one transaction: all of them or none. Returns the ids written. */
export async function applyAccessFix(ctx: Ctx, changes: FixChange[]): Promise<string[]> {
  return ctx.core.store.tx(async () => {
    const ids: string[] = [];
    for (const c of changes) ids.push(await write(ctx, c));
    return ids;
  });
}

export interface FixPreview {
  /** identities that would newly reach the service (the first MAX_NAMED by name) and how many in all */
  gains: Named[];
  gainCount: number;
  /** identities that would no longer reach it */
  losses: Named[];
  lossCount: number;
}

class RolledBack extends Error {
  constructor(readonly preview: FixPreview) {
    super('preview');
  }
}

/** Who would newly reach (or lose) the service if the fix were applied: its writes in a transaction rolled back. */
export async function previewAccessFix(ctx: Ctx, serviceId: string, type: 'Dial' | 'Bind', changes: FixChange[]): Promise<FixPreview> {
  requirePermission(ctx.caller, 'identity', 'read');
  requirePermission(ctx.caller, 'service', 'read');
  const store = ctx.core.store;
  try {
    return await store.tx(async () => {
      const before = await reaching(store, await classFor(ctx.core, 'service', serviceId), type);
      for (const c of changes) await write(ctx, c);
      const after = await reaching(store, await classFor(ctx.core, 'service', serviceId), type);
      const gains = [...after].filter(([id]) => !before.has(id)).map(([id, name]) => ({ id, name }));
      const losses = [...before].filter(([id]) => !after.has(id)).map(([id, name]) => ({ id, name }));
      throw new RolledBack({
        gains: gains.slice(0, MAX_NAMED),
        gainCount: gains.length,
        losses: losses.slice(0, MAX_NAMED),
        lossCount: losses.length,
      });
    });
  } catch (e) {
    if (e instanceof RolledBack) return e.preview;
    throw e;
  }
}
