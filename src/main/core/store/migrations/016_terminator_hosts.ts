import type { MigrationTarget } from '../db';

/** The identity hosting a terminator (OpenZiti's hostId: the SDK that bound, or the router hosting a service itself). */
export function up(db: MigrationTarget): void {
  db.exec(`ALTER TABLE terminators ADD COLUMN host_id TEXT NOT NULL DEFAULT ''`);
}
