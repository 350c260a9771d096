import { quoteIdent as quote, type Row, type Store } from '../store/db';

export interface CopyReport {
  /** rows copied per table, in the order the tables were filled */
  tables: Array<{ table: string; rows: number }>;
}

const BATCH = 250;

/**
 * Copies every row of `from` into `to` (SQLite → PostgreSQL to move a lab onto servers, or back). Both must be at the
 * same schema version (migrate both first). The target must hold no network yet (no identity: a started Weft always
 * has its default admin); whatever rows its migrations wrote are replaced. One transaction on the target, with its
 * triggers off (`bulkLoad`): derived tables (the policy index, role classes) are copied as they are, not re-derived.
 * Reads go page by page in primary-key order, so no table is ever held in memory whole.
 */
export async function copyDatabase(from: Store, to: Store): Promise<CopyReport> {
  const version = async (s: Store) => (await s.getSql<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations'))?.v ?? 0;
  if ((await version(from)) !== (await version(to))) {
    throw new Error(`the databases are at different schema versions (${await version(from)} and ${await version(to)}): migrate both first`);
  }
  if (await to.getSql('SELECT 1 AS x FROM identities LIMIT 1')) throw new Error('the target already holds a network (it has identities)');
  const tables = await fillOrder(
    from,
    (await from.tables()).filter((t) => t !== 'schema_migrations'),
  );
  const report: CopyReport = { tables: [] };
  // one consistent snapshot of the source, even while a Weft still writes to it
  await from.read(() =>
    to.bulkLoad(async () => {
      for (const table of [...tables].reverse()) await to.runSql(`DELETE FROM ${quote(table)}`);
      for (const table of tables) report.tables.push({ table, rows: await copyTable(from, to, table) });
    }),
  );
  return report;
}

/** Parents before children (by foreign keys), so every reference is already there when a row arrives. */
async function fillOrder(store: Store, tables: string[]): Promise<string[]> {
  const parents = new Map<string, string[]>();
  for (const t of tables)
    parents.set(
      t,
      (await store.foreignKeys(t)).map((fk) => fk.table),
    );
  const out: string[] = [];
  const placed = new Set<string>();
  const visit = (t: string, path: Set<string>) => {
    if (placed.has(t) || path.has(t) || !parents.has(t)) return;
    path.add(t);
    for (const p of parents.get(t)!) visit(p, path);
    path.delete(t);
    placed.add(t);
    out.push(t);
  };
  for (const t of [...tables].sort()) visit(t, new Set());
  return out;
}

async function copyTable(from: Store, to: Store, table: string): Promise<number> {
  const columns = await from.columns(table);
  const names = columns.map((c) => c.name);
  const key = columns
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
  if (!key.length) throw new Error(`table ${table} has no primary key to page by`);
  const select = `SELECT ${names.map(quote).join(', ')} FROM ${quote(table)}`;
  const order = ` ORDER BY ${key.map(quote).join(', ')} LIMIT ${BATCH}`;
  const after = `(${key.map(quote).join(', ')}) > (${key.map(() => '?').join(', ')})`;
  let copied = 0;
  let last: unknown[] | undefined;
  for (;;) {
    const rows: Row[] = last ? await from.allSql(`${select} WHERE ${after}${order}`, ...last) : await from.allSql(select + order);
    if (!rows.length) return copied;
    const tuple = `(${names.map(() => '?').join(', ')})`;
    await to.runSql(
      `INSERT INTO ${quote(table)} (${names.map(quote).join(', ')}) VALUES ${rows.map(() => tuple).join(', ')}`,
      ...rows.flatMap((r) => names.map((n) => r[n])),
    );
    copied += rows.length;
    last = key.map((k) => rows[rows.length - 1]![k]);
  }
}
