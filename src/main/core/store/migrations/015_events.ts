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
/** Tables whose every write the triggers below record (the write gate writes no outbox row for them). */
export const ROW_EVENT_TABLES: ReadonlySet<string> = new Set(['api_sessions', 'sessions', 'terminators']);

export function up(db: MigrationTarget): void {
  const json = db.sql.jsonObject;
  const now = db.sql.now();
  const row = (table: string, op: string, on: 'NEW' | 'OLD', columns: string[]) => {
    const state = json(Object.fromEntries(columns.map((c) => [c, `${on}.${c}`])));
    const [before, after] = on === 'OLD' ? [state, 'NULL'] : ['NULL', state];
    return `INSERT INTO outbox (entity, op, entity_id, before_row, after_row, created_at) VALUES ('row:${table}', ${op}, ${on}.id, ${before}, ${after}, ${now});`;
  };
  const apiSession = ['id', 'token', 'identity_id', 'ip_address', 'kind'];
  const stamps = ['created_at', 'updated_at', 'tags'];
  const session = ['id', 'token', 'api_session_id', 'identity_id', 'service_id', 'type', ...stamps];
  const terminator = ['id', 'service_id', 'router_id', 'binding', 'address', 'identity', 'cost', 'precedence', ...stamps];
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
CREATE TRIGGER outbox_api_session_created AFTER INSERT ON api_sessions BEGIN
  ${row('api_sessions', "'create'", 'NEW', apiSession)}
END;
CREATE TRIGGER outbox_api_session_deleted AFTER DELETE ON api_sessions BEGIN
  ${row('api_sessions', "'delete'", 'OLD', apiSession)}
END;
CREATE TRIGGER outbox_session_created AFTER INSERT ON sessions BEGIN
  ${row('sessions', "'create'", 'NEW', session)}
END;
CREATE TRIGGER outbox_session_deleted AFTER DELETE ON sessions BEGIN
  ${row('sessions', "'delete'", 'OLD', session)}
END;
CREATE TRIGGER outbox_terminator_created AFTER INSERT ON terminators BEGIN
  ${row('terminators', "'create'", 'NEW', terminator)}
END;
CREATE TRIGGER outbox_terminator_updated AFTER UPDATE ON terminators BEGIN
  ${row('terminators', "'update'", 'NEW', terminator)}
END;
CREATE TRIGGER outbox_terminator_deleted AFTER DELETE ON terminators BEGIN
  ${row('terminators', "'delete'", 'OLD', terminator)}
END;
CREATE TRIGGER outbox_router_online AFTER UPDATE OF is_online ON edge_routers WHEN OLD.is_online <> NEW.is_online BEGIN
  ${row('edge_routers', "CASE WHEN NEW.is_online = 1 THEN 'online' ELSE 'offline' END", 'NEW', ['id'])}
END;`);
}
