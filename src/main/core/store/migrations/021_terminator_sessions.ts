import type { MigrationTarget } from '../db';

/**
 * What a stock router's SDK terminator was bound with, kept with it rather than by the node that took the Bind: the
 * Bind session (the terminator goes when it does) and the host's peer data (its public key, handed to each dialer).
 * A router connected to several nodes may bind through one and have its dials go through another.
 */
export function up(db: MigrationTarget): void {
  db.exec(`
ALTER TABLE terminators ADD COLUMN session_id TEXT;
ALTER TABLE terminators ADD COLUMN peer_data TEXT NOT NULL DEFAULT '{}';
CREATE INDEX terminators_session ON terminators(session_id);`);
}
