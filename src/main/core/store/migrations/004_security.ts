import type Database from 'better-sqlite3';

/** MFA, external JWT signers, identity lifecycle, controller settings, operations. */
export function up(db: Database.Database): void {
  db.exec(`
`);
}
