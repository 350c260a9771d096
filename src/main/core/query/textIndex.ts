import type { Store } from '../store/db';
import type { QueryFields, TextIndex } from './compile';

/**
 * The trigram indexes that serve `contains` / `icontains` (created by migration 008_text_search, which a test keeps
 * in agreement with this list): table -> indexed columns. The FTS table of `<table>` is `<table>_fts`, its
 * per-column term statistics `<table>_fts_vocab`.
 */
export const TEXT_INDEXES: Readonly<Record<string, readonly string[]>> = {
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

const COLUMN = /^t\.([a-z_]+)$/;

/** The fields of a list over `table` (alias t), with the string fields that have a trigram index marked so. */
export function withTextIndexes(table: string, fields: QueryFields): QueryFields {
  const indexed = TEXT_INDEXES[table];
  if (!indexed) return fields;
  const out: QueryFields = {};
  for (const [name, f] of Object.entries(fields)) {
    const column = f.kind === 'scalar' && f.type === 'string' ? COLUMN.exec(f.sql)?.[1] : undefined;
    out[name] = column && indexed.includes(column) ? ({ ...f, text: { fts: `${table}_fts`, column, rowid: 't.rowid' } } as typeof f) : f;
  }
  return out;
}

/** The trigrams the index holds for a needle (folded as the tokenizer folds ASCII; anything else left as is). */
export function trigrams(needle: string): string[] {
  const chars = [...needle].map((c) => {
    const l = c.toLowerCase();
    return l.length === c.length ? l : c;
  });
  const out = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(''));
  return [...out];
}

/**
 * Decides per needle whether the index pays: the rarest of its trigrams bounds the candidates; when that is more
 * than an eighth of the table, walking the table (which a page in name order can stop early) is cheaper than
 * fetching and re-checking that many candidates.
 */
export function textIndexChooser(store: Store): (index: TextIndex, needle: string) => boolean {
  // the FTS5 tables are SQLite's; PostgreSQL scans (its trigram GIN indexes serve ILIKE, not this)
  if (store.dialect !== 'sqlite') return () => false;
  return (index, needle) => {
    const grams = trigrams(needle);
    if (!grams.length) return false;
    const table = index.fts.replace(/_fts$/, '');
    const rarest =
      store.getSql<{ n: number | null; missing: number }>(
        `SELECT min(coalesce(v.doc, 0)) AS n FROM json_each(?) g LEFT JOIN ${index.fts}_vocab v ON v.term = g.value AND v.col = ?`,
        JSON.stringify(grams),
        index.column,
      )?.n ?? 0;
    if (rarest <= 1000) return true;
    const rows = store.getSql<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)!.n;
    return rarest * 8 <= rows;
  };
}
