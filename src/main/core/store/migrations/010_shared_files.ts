import type { MigrationTarget } from '../db';

/**
 * Files of the data directory that every node of a network must hold the same (the CA certificates and keys, the key
 * that seals secrets at rest), sealed: on PostgreSQL the first node publishes its own and the others adopt them
 * (core/ops/sharedFiles.ts). Unused on SQLite, where one process owns one data directory.
 */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE TABLE shared_files (
  name TEXT PRIMARY KEY,
  -- sealed with the network's cluster.key (core/ops/sharedFiles.ts)
  content TEXT NOT NULL,
  created_at TEXT NOT NULL
);`);
}
