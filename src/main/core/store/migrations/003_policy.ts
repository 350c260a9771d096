import type Database from 'better-sqlite3';

/** Services, policies, sessions and posture. */
export function up(db: Database.Database): void {
  db.exec(`
`);
}
