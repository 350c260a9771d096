import type { Core } from './core';

/** This node's controller id once ops/controllerNodes has read it (start-up does, before any event is written). */
const nodeIds = new WeakMap<Core, string>();
export const knownNodeId = (core: Core): string | undefined => nodeIds.get(core);
export const rememberNodeId = (core: Core, id: string): void => void nodeIds.set(core, id);

/** An event that is no change of a row (a login, a circuit): OpenZiti's fields after namespace, source and time. */
export interface EventRow {
  namespace: string;
  /** what it was (success, created, …) */
  op: string;
  /** the id it is about (identity, circuit) */
  entityId: string;
  fields: Record<string, unknown>;
  /** when it happened (default: now, by the core's clock) */
  at?: Date;
}

/**
 * Writes events to the outbox as `event:<namespace>` rows, in one statement (core/ops/events.ts hands them on as they
 * are, under this node's id), in the caller's transaction if it has one.
 */
export async function recordEvents(core: Core, events: readonly EventRow[]): Promise<void> {
  if (!events.length) return;
  const node = knownNodeId(core) ?? null;
  const now = core.clock.now();
  const params = events.flatMap((e) => [`event:${e.namespace}`, e.op, e.entityId, JSON.stringify(e.fields), node, (e.at ?? now).toISOString()]);
  await core.store.runSql(
    `INSERT INTO outbox (entity, op, entity_id, after_row, node, created_at) VALUES ${events.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
    ...params,
  );
}
