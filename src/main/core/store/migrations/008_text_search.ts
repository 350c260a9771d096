import type { MigrationTarget } from '../db';

/**
 * Substring search (`contains` / `icontains` in ZitiQL) through trigram indexes: per table one external-content FTS5
 * table `<table>_fts` (tokenizer `trigram`, case-folding) over the listed text columns, kept in step by triggers,
 * plus an `fts5vocab` table `<table>_fts_vocab` (per-column document counts of each trigram) that the query compiler
 * consults to choose between the index and a scan. The FTS rows are keyed by the content table's rowid, which
 * SQLite keeps stable here (no VACUUM; snapshots use the backup API, which copies pages). Filters always re-check
 * the exact condition (core/query/compile.ts), so the index only narrows the candidates.
 * The runtime list of indexed columns is core/query/textIndex.ts (a test checks both agree).
 */
export const INDEXES: Readonly<Record<string, readonly string[]>> = {
  identities: ['name', 'external_id'],
  services: ['name'],
  edge_routers: ['name'],
  routers: ['name'],
  service_policies: ['name'],
  edge_router_policies: ['name'],
  service_edge_router_policies: ['name'],
  configs: ['name'],
  posture_checks: ['name'],
  authenticators: ['username'],
};

export function up(db: MigrationTarget): void {
  // FTS5 is SQLite's: PostgreSQL's trigram indexes are pg_trgm's (018_text_search_postgres)
  if (db.dialect !== 'sqlite') return;
  for (const [table, columns] of Object.entries(INDEXES)) {
    const fts = `${table}_fts`;
    const cols = columns.join(', ');
    const values = (row: 'new' | 'old') => columns.map((c) => `${row}.${c}`).join(', ');
    db.exec(`
CREATE VIRTUAL TABLE ${fts} USING fts5(${cols}, content='${table}', content_rowid='rowid', tokenize='trigram case_sensitive 0');
CREATE VIRTUAL TABLE ${fts}_vocab USING fts5vocab(${fts}, 'col');
CREATE TRIGGER ${fts}_insert AFTER INSERT ON ${table} BEGIN
  INSERT INTO ${fts}(rowid, ${cols}) VALUES (new.rowid, ${values('new')});
END;
CREATE TRIGGER ${fts}_delete AFTER DELETE ON ${table} BEGIN
  INSERT INTO ${fts}(${fts}, rowid, ${cols}) VALUES ('delete', old.rowid, ${values('old')});
END;
CREATE TRIGGER ${fts}_update AFTER UPDATE OF ${cols} ON ${table} BEGIN
  INSERT INTO ${fts}(${fts}, rowid, ${cols}) VALUES ('delete', old.rowid, ${values('old')});
  INSERT INTO ${fts}(rowid, ${cols}) VALUES (new.rowid, ${values('new')});
END;
INSERT INTO ${fts}(${fts}) VALUES ('rebuild');
`);
  }
}
