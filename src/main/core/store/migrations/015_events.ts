import type { MigrationTarget } from '../db';

/**
 * Event sources beside the write gate's change events (core/ops/events.ts): rows that change outside the generic write
 * path too (logins, expiry sweeps, cascades, the routers' online state) are recorded in the outbox by triggers, so a
 * committed change always has its event and a rolled-back one never does. Trigger rows are named `row:<table>`.
 * The write gate leaves the tables in ROW_EVENT_TABLES to them (their rows' entityChange events come from the trigger
 * rows too: one statement less on the busiest writes, Dial/Bind sessions).
 * `node`: the controller that wrote a gate row (events name it as their source); `author`: who made the change.
 * `event_cursors`: how far each node's event loggers have written (a restart goes on from there).
 */
type Op = 'create' | 'update' | 'delete';
const stamps = ['created_at', 'updated_at', 'tags'];
/** The tables whose rows' writes triggers record: the columns an event keeps, and which writes. */
const ROW_EVENTS: Readonly<Record<string, { noun: string; columns: string[]; ops: Op[] }>> = {
  api_sessions: { noun: 'api_session', columns: ['id', 'token', 'identity_id', 'ip_address', 'kind'], ops: ['create', 'delete'] },
  sessions: {
    noun: 'session',
    columns: ['id', 'token', 'api_session_id', 'identity_id', 'service_id', 'type', ...stamps],
    ops: ['create', 'delete'],
  },
  terminators: {
    noun: 'terminator',
    columns: ['id', 'service_id', 'router_id', 'binding', 'address', 'identity', 'cost', 'precedence', ...stamps],
    ops: ['create', 'update', 'delete'],
  },
};

/** Tables whose every write the triggers record (the write gate writes no outbox row for them). */
export const ROW_EVENT_TABLES: ReadonlySet<string> = new Set(Object.keys(ROW_EVENTS));

const PAST: Record<Op, string> = { create: 'created', update: 'updated', delete: 'deleted' };
const STATEMENT: Record<Op, string> = { create: 'INSERT', update: 'UPDATE', delete: 'DELETE' };

export function up(db: MigrationTarget): void {
  const row = (table: string, op: string, on: 'NEW' | 'OLD', columns: string[]) => {
    const state = db.sql.jsonObject(Object.fromEntries(columns.map((c) => [c, `${on}.${c}`])));
    const [before, after] = on === 'OLD' ? [state, 'NULL'] : ['NULL', state];
    return `INSERT INTO outbox (entity, op, entity_id, before_row, after_row, created_at) VALUES ('row:${table}', ${op}, ${on}.id, ${before}, ${after}, ${db.sql.now()});`;
  };
  const trigger = (name: string, when: string, body: string) => `CREATE TRIGGER ${name} ${when} BEGIN\n  ${body}\nEND;`;
  const triggers = Object.entries(ROW_EVENTS).flatMap(([table, { noun, columns, ops }]) =>
    ops.map((op) =>
      trigger(`outbox_${noun}_${PAST[op]}`, `AFTER ${STATEMENT[op]} ON ${table}`, row(table, `'${op}'`, op === 'delete' ? 'OLD' : 'NEW', columns)),
    ),
  );
  triggers.push(
    trigger(
      'outbox_router_online',
      'AFTER UPDATE OF is_online ON edge_routers WHEN OLD.is_online <> NEW.is_online',
      row('edge_routers', "CASE WHEN NEW.is_online = 1 THEN 'online' ELSE 'offline' END", 'NEW', ['id']),
    ),
  );
  db.exec(`
ALTER TABLE outbox ADD COLUMN node TEXT;
ALTER TABLE outbox ADD COLUMN author TEXT;
CREATE TABLE event_cursors (
  node TEXT NOT NULL,
  logger TEXT NOT NULL,
  seq INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (node, logger)
);
${triggers.join('\n')}`);
}
