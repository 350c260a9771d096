import type { MigrationTarget } from '../db';

/** The built-in edge router each controller node runs: when a node goes silent, its router is offline too. */
export function up(db: MigrationTarget): void {
  db.exec(`ALTER TABLE controllers ADD COLUMN router_id TEXT;`);
}
