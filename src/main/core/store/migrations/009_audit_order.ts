import type { MigrationTarget } from '../db';

/**
 * The audit log's insertion order as a column of its own (`seq`), where it was SQLite's rowid: the order among
 * entries of one millisecond, and what pruning keeps. PostgreSQL has no rowid: there a sequence numbers the rows.
 */
export function up(db: MigrationTarget): void {
  if (db.dialect === 'postgres') {
    db.native(`
CREATE SEQUENCE audit_log_seq;
ALTER TABLE audit_log ADD COLUMN seq BIGINT NOT NULL DEFAULT nextval('audit_log_seq');
ALTER SEQUENCE audit_log_seq OWNED BY audit_log.seq;
CREATE INDEX audit_log_created_seq ON audit_log(created_at, seq);`);
    return;
  }
  db.exec(`
ALTER TABLE audit_log ADD COLUMN seq INTEGER;
UPDATE audit_log SET seq = rowid;
CREATE INDEX audit_log_created_seq ON audit_log(created_at, seq);
CREATE TRIGGER audit_log_seq AFTER INSERT ON audit_log WHEN NEW.seq IS NULL BEGIN
  UPDATE audit_log SET seq = NEW.rowid WHERE rowid = NEW.rowid;
END;`);
}
