import type { Core, Ctx } from '../core';
import type { WriteSubscriber, WrittenType } from '../entities/writeGate';
import type { Row } from '../store/db';

/** How long change events stay in the outbox for its readers (event streams) to take them. */
export const OUTBOX_RETENTION_MS = 60 * 60_000;

/**
 * Every write of a resource as a change event, in the outbox table, in the write's own transaction (the write gate):
 * no event for a write that rolled back, no committed write without its event. `seq` orders them across every node
 * of a database. The rows are kept as the API presents their columns (never a column it hides, e.g. secrets).
 */
export const outboxOnWrite: WriteSubscriber<Ctx> = async ({ ctx, def, op, id, before, after }) => {
  await ctx.core.store.runSql(
    'INSERT INTO outbox (entity, op, entity_id, before_row, after_row, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    def.entity,
    op,
    id,
    shown(def, before),
    shown(def, after),
    ctx.core.clock.now().toISOString(),
  );
};

/** The columns of `row` the API presents, as JSON (none: null). */
function shown(def: WrittenType, row: Row | undefined): string | null {
  if (!row) return null;
  const out: Row = { id: row.id, created_at: row.created_at, updated_at: row.updated_at, tags: row.tags };
  for (const c of Object.values(def.columns)) if (c.shown !== false && c.column in row) out[c.column] = row[c.column];
  return JSON.stringify(out);
}

/** Drops change events older than the retention. */
export async function pruneOutbox(core: Core): Promise<void> {
  const cutoff = new Date(core.clock.now().getTime() - OUTBOX_RETENTION_MS).toISOString();
  await core.store.runSql('DELETE FROM outbox WHERE created_at < ?', cutoff);
}
