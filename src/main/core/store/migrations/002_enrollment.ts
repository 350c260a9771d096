import type Database from 'better-sqlite3';

/** PKI and enrollment: CAs, enrollments, edge routers and routers, API-session certificates. */
export function up(db: Database.Database): void {
  db.exec(`
`);
}
