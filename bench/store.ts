import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyDatabase } from '../src/main/core/ops/databaseCopy';
import { SCHEMA_MIGRATIONS } from '../src/main/core/registry';
import { PostgresStore } from '../src/main/core/store/postgres';
import { SqliteStore } from '../src/main/core/store/sqlite';
import { postgresBinDir, startPostgres } from '../test/support/postgres';
import { login, seedIdentities } from './foundation';
import { benchConfigFile, checkRow, interleaved, medianRatio, printTable, rowOf, startChild, weftNodeArgs, type Row } from './lib';

/** Issue 27's goal: Weft on PostgreSQL at least this fraction of Weft on SQLite for uncached lists and for creates. */
const GOAL_RATIO = 0.7;

/**
 * The same network on both stores, side by side: SQLite (the default) and PostgreSQL (Debian's server on loopback,
 * the network moved there with `weft db copy`'s function). Reads (repeated, and every request a miss) and creates
 * through the Management API; the PostgreSQL rows carry their ratio to SQLite's, and the uncached lists and the
 * create a check of it against issue 27's goal (≥ 0.7×).
 */
export async function storeBench(workDir: string, opts: { identities: number; durationMs: number; rounds: number }): Promise<Row[]> {
  try {
    postgresBinDir();
  } catch (e) {
    return [{ scenario: 'PostgreSQL store', target: 'skipped', note: (e as Error).message }];
  }
  const sqliteDir = join(workDir, 'store-sqlite');
  console.log(`seeding ${opts.identities} identities through the core (store scenario)…`);
  await seedIdentities(sqliteDir, opts.identities);
  const server = await startPostgres();
  const rows: Row[] = [];
  try {
    const url = await server.createDatabase();
    const from = new SqliteStore(join(sqliteDir, 'weft.db'));
    const to = new PostgresStore(url);
    try {
      await to.migrate(SCHEMA_MIGRATIONS);
      await copyDatabase(from, to);
    } finally {
      await from.close();
      await to.close();
    }
    const pgDir = join(workDir, 'store-postgres');
    const config = benchConfigFile(workDir);
    const nodes = {
      sqlite: await startChild(new URL('./weftServer.ts', import.meta.url).pathname, [sqliteDir, config], {}, weftNodeArgs()),
      postgres: await startChild(
        new URL('./weftServer.ts', import.meta.url).pathname,
        [pgDir, benchConfigFile(workDir, `store:\n  url: ${url}\nrouter:\n  name: er-postgres\n`)],
        {},
        weftNodeArgs(),
      ),
    };
    try {
      const target = (name: keyof typeof nodes, dir: string) => {
        const ca = readFileSync(join(dir, 'pki', 'ca-bundle.pem'), 'utf8');
        return { origin: nodes[name].info.origin as string, ca };
      };
      const t = { sqlite: target('sqlite', sqliteDir), postgres: target('postgres', pgDir) };
      const tokens = { sqlite: await login(t.sqlite.origin, t.sqlite.ca), postgres: await login(t.postgres.origin, t.postgres.ca) };
      let n = 0;
      const cases: Array<{ name: string; checked?: boolean; spec: (store: 'sqlite' | 'postgres') => Parameters<typeof interleaved>[0][string] }> = [
        { name: 'GET /version', spec: (s) => ({ ...t[s], path: '/edge/client/v1/version' }) },
        {
          name: 'list identities limit=10, every request a miss',
          checked: true,
          spec: (s) => ({
            ...t[s],
            path: '',
            next: () => ({ path: `/edge/management/v1/identities?limit=10&bench-miss=${n++}`, headers: { 'zt-session': tokens[s] } }),
          }),
        },
        {
          name: 'list identities limit=10 (name = …), every request a miss',
          checked: true,
          spec: (s) => ({
            ...t[s],
            path: '',
            next: () => ({
              path: `/edge/management/v1/identities?limit=10&filter=${encodeURIComponent(`name = "identity-${String(n++ % opts.identities).padStart(6, '0')}"`)}`,
              headers: { 'zt-session': tokens[s] },
            }),
          }),
        },
        {
          // the trigram indexes: FTS5 on SQLite, pg_trgm GIN on PostgreSQL (a needle of ~10 rows)
          name: 'list identities limit=10 (name icontains …), every request a miss',
          checked: true,
          spec: (s) => ({
            ...t[s],
            path: '',
            next: () => ({
              path: `/edge/management/v1/identities?limit=10&filter=${encodeURIComponent(`name icontains "Ity-${String(n++ % Math.floor(opts.identities / 10)).padStart(5, '0')}"`)}`,
              headers: { 'zt-session': tokens[s] },
            }),
          }),
        },
        {
          name: 'create a service (POST /services)',
          checked: true,
          spec: (s) => ({
            ...t[s],
            path: '',
            connections: 4,
            next: () => ({
              path: '/edge/management/v1/services',
              method: 'POST' as const,
              headers: { 'zt-session': tokens[s], 'content-type': 'application/json' },
              body: JSON.stringify({ name: `bench-${s}-${n++}`, encryptionRequired: true }),
            }),
          }),
        },
      ];
      for (const c of cases) {
        const m = await interleaved({ sqlite: c.spec('sqlite'), postgres: c.spec('postgres') }, { rounds: opts.rounds, durationMs: opts.durationMs });
        const ratio = medianRatio(m.rounds.postgres, m.rounds.sqlite);
        rows.push(rowOf(c.name, 'weft on SQLite', m.combined.sqlite));
        rows.push(rowOf(c.name, 'weft on PostgreSQL', m.combined.postgres, `${ratio.toFixed(2)}× SQLite's rate`));
        if (c.checked) rows.push(checkRow(c.name, `PostgreSQL ${ratio.toFixed(2)}× SQLite`, `≥ ${GOAL_RATIO}×`, ratio >= GOAL_RATIO));
      }
    } finally {
      await Promise.all(Object.values(nodes).map((c) => c.stop()));
    }
  } finally {
    await server.stop();
  }
  printTable(`Store: the same network (${opts.identities} identities) on SQLite and on PostgreSQL`, rows);
  return rows;
}
