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
 * Decides per needle whether the index pays, and with which trigrams: the rarest of its trigrams bounds the
 * candidates; when that is more than an eighth of the table, walking the table (which a page in name order can stop
 * early) is cheaper than fetching and re-checking that many candidates. Otherwise the index matches the needle's
 * MATCHED_TRIGRAMS rarest trigrams only: a long needle's common trigrams ("ide", "den", … of "identity-") hold most
 * rows, and intersecting their position lists cost more than the rest of the query; the exact predicate re-checks the
 * candidates. The compiler asks synchronously, so the answers for the needles of `filter` (compiled over `fields`
 * with `tagsSql`, as the list will compile it) are looked up first, in the order the compiler asks for them; pass the
 * result as `useTextIndex` when compiling that filter.
 */
export async function textIndexChooser(
  store: Store,
  filter: string | undefined,
  fields: QueryFields,
  options: Pick<CompileOptions, 'tagsSql' | 'refs'> = {},
): Promise<(index: TextIndex, needle: string) => boolean | readonly string[]> {
  // the FTS5 tables are SQLite's; on PostgreSQL the LIKE / ILIKE its pg_trgm indexes serve is always written, and its
  // planner (with the column's statistics) chooses between the index and a scan
  if (store.dialect !== 'sqlite') return () => true;
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
  const answers = new Map<string, false | readonly string[]>();
  for (const [index, needle] of asked) {
    const key = answerKey(index, needle);
    if (!answers.has(key)) answers.set(key, await indexTrigrams(store, index, needle));
  }
  return (index, needle) => answers.get(answerKey(index, needle)) ?? trigrams(needle);
}

/** How many of a needle's rarest trigrams the index matches (their intersection; the predicate re-checks). */
export const MATCHED_TRIGRAMS = 2;

const answerKey = (index: TextIndex, needle: string) => JSON.stringify([index.fts, index.column, needle]);

/**
 * Trigram counts per store, kept while the store's generation (its count of writes) stays the same: the counts only
 * choose a plan, and a needle's common trigrams are the same from one request to the next. Bounded.
 */
const trigramCounts = new WeakMap<Store, { generation: number; counts: Map<string, number> }>();
const MAX_COUNTS = 4096;

/**
 * The trigrams of `needle` to match in the index, rarest first; false: scan instead. Each trigram's candidates are
 * counted through the index up to an eighth of the table (beyond that the index does not pay; the vocabulary table
 * would read a common trigram's whole doclist to count it), and the counts kept while nothing is written.
 */
async function indexTrigrams(store: Store, index: TextIndex, needle: string): Promise<false | readonly string[]> {
  const grams = trigrams(needle);
  if (!grams.length) return false;
  let cache = trigramCounts.get(store);
  if (!cache || cache.generation !== store.generation || cache.counts.size > MAX_COUNTS) {
    cache = { generation: store.generation, counts: new Map() };
    trigramCounts.set(store, cache);
  }
  const table = index.fts.replace(/_fts$/, '');
  const rowsKey = `${table}\0`;
  let rows = cache.counts.get(rowsKey);
  if (rows === undefined) cache.counts.set(rowsKey, (rows = (await store.getSql<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n));
  const cap = Math.max(1000, Math.floor(rows / 8));
  const counts: Array<[string, number]> = [];
  for (const gram of grams) {
    const key = `${index.fts}\0${index.column}\0${gram}`;
    let n = cache.counts.get(key);
    if (n === undefined) {
      n = (await store.getSql<{ n: number }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM ${index.fts} WHERE ${index.fts} MATCH ? LIMIT ${cap + 1})`,
        `{${index.column}} : "${gram.replace(/"/g, '""')}"`,
      ))!.n;
      cache.counts.set(key, n);
    }
    counts.push([gram, n]);
  }
  counts.sort((a, b) => a[1] - b[1]);
  return counts[0]![1] > cap ? false : counts.slice(0, MATCHED_TRIGRAMS).map(([g]) => g);
}
