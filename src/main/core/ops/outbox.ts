import type { Core, Ctx } from '../core';
import type { WriteSubscriber, WrittenType } from '../entities/writeGate';
import type { Row } from '../store/db';
import { decode } from '../store/rows';
import { controllerId } from './controllerNodes';
import { ROW_EVENT_TABLES } from '../store/migrations/015_events';

/** How long change events stay in the outbox for its readers (event streams) to take them. */
export const OUTBOX_RETENTION_MS = 60 * 60_000;

/**
 * Every write of a resource as a change event, in the outbox table, in the write's own transaction (the write gate):
 * no event for a write that rolled back, no committed write without its event. `seq` orders them across every node
 * of a database (every write holds the database's write lock, so `seq` is also commit order). A row's state is kept
 * as the API names and types its fields (never one it hides, e.g. secrets): the `initialState`/`finalState` of
 * OpenZiti's entityChange events. `node` is the controller that made the change, `author` who asked for it.
 */
export const outboxOnWrite: WriteSubscriber<Ctx> = async ({ ctx, def, op, id, before, after }) => {
  // recorded by the outbox triggers with the row (migration 015)
  if (ROW_EVENT_TABLES.has(def.table)) return;
  const caller = ctx.caller;
  // queued: on PostgreSQL it goes out with what follows (at the latest with COMMIT), in its place
  await ctx.core.store.queueSql(
    'INSERT INTO outbox (entity, op, entity_id, before_row, after_row, node, author, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    def.entity,
    op,
    id,
    stateOf(def, before),
    stateOf(def, after),
    await controllerId(ctx.core),
    JSON.stringify(caller.identityId === 'system' ? { type: 'controller' } : { type: 'identity', id: caller.identityId, name: caller.identityName }),
    ctx.core.clock.now().toISOString(),
  );
};

/** The fields of `row` the API presents, by their API names and decoded, as JSON (none: null). */
function stateOf(def: WrittenType, row: Row | undefined): string | null {
  if (!row) return null;
  const out: Record<string, unknown> = { id: row.id, createdAt: row.created_at, updatedAt: row.updated_at, tags: decode('json', row.tags) };
  for (const [field, c] of Object.entries(def.columns)) if (c.shown !== false && c.column in row) out[field] = decode(c.codec, row[c.column]);
  return JSON.stringify(out);
}

/** Drops change events older than the retention. */
export async function pruneOutbox(core: Core): Promise<void> {
  const cutoff = new Date(core.clock.now().getTime() - OUTBOX_RETENTION_MS).toISOString();
  await core.store.runSql('DELETE FROM outbox WHERE created_at < ?', cutoff);
}
