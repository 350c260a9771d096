import type { Store } from '../store/db';
import { compileFilter, type CompileOptions, type QueryFields, type TextIndex } from './compile';

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
 * fetching and re-checking that many candidates. The compiler asks synchronously, so the answers for the needles
 * of `filter` (compiled over `fields` with `tagsSql`, as the list will compile it) are looked up first, in the order
 * the compiler asks for them; pass the result as `useTextIndex` when compiling that filter.
 */
export async function textIndexChooser(
  store: Store,
  filter: string | undefined,
  fields: QueryFields,
  options: Pick<CompileOptions, 'tagsSql' | 'refs'> = {},
): Promise<(index: TextIndex, needle: string) => boolean> {
  // the FTS5 tables are SQLite's; PostgreSQL scans (its trigram GIN indexes serve ILIKE, not this)
  if (store.dialect !== 'sqlite') return () => false;
  // only `contains` / `icontains` terms ask: a filter without the word needs no look-ahead compile
  if (!filter || !/contains/i.test(filter)) return () => false;
  const asked: Array<[TextIndex, string]> = [];
  try {
    compileFilter(filter, fields, {
      ...options,
      useTextIndex: (index, needle) => {
        asked.push([index, needle]);
        return false;
      },
    });
  } catch {
    // the compile that follows reports it; the needles before it were collected
  }
  const answers = new Map<string, boolean>();
  for (const [index, needle] of asked) {
    const key = answerKey(index, needle);
    if (!answers.has(key)) answers.set(key, await usesIndex(store, index, needle));
  }
  return (index, needle) => answers.get(answerKey(index, needle)) ?? true;
}

const answerKey = (index: TextIndex, needle: string) => JSON.stringify([index.fts, index.column, needle]);

async function usesIndex(store: Store, index: TextIndex, needle: string): Promise<boolean> {
  const grams = trigrams(needle);
  if (!grams.length) return false;
  const table = index.fts.replace(/_fts$/, '');
  const rarest =
    (
      await store.getSql<{ n: number | null; missing: number }>(
        `SELECT min(coalesce(v.doc, 0)) AS n FROM ${store.sql.jsonEach('?', 'g')} LEFT JOIN ${index.fts}_vocab v ON v.term = g.value AND v.col = ?`,
        JSON.stringify(grams),
        index.column,
      )
    )?.n ?? 0;
  if (rarest <= 1000) return true;
  const rows = (await store.getSql<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
  return rarest * 8 <= rows;
}
