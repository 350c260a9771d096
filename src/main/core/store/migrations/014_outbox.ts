import type { MigrationTarget } from '../db';

/**
 * The outbox: every write of a resource as a change event, written in the write's transaction (core/ops/outbox.ts).
 * `seq` is assigned in commit order on SQLite and in insertion order on PostgreSQL (an identity column).
 */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE TABLE outbox (
  seq INTEGER PRIMARY KEY,
  entity TEXT NOT NULL,
  op TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  before_row TEXT,
  after_row TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX outbox_created ON outbox(created_at);`);
}
