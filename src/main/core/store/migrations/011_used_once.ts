import type { MigrationTarget } from '../db';

/**
 * Single-use values (the OAuth frontend's login states) remembered until they expire, in the database, so each is
 * single-use across every node that shares it (core/auth/usedOnce.ts).
 */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE TABLE used_once (
  key TEXT PRIMARY KEY,
  expires_at TEXT NOT NULL
);
CREATE INDEX used_once_expires ON used_once(expires_at);`);
}
