import { existsSync, mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { dirname } from 'node:path';
import { resolveConfig } from './app';
import { ConfigError } from './config';
import { SCHEMA_MIGRATIONS } from './core/registry';
import { copyDatabase } from './core/ops/databaseCopy';
import { openStore, redactStoreUrl, sqliteFile } from './core/store/open';
import type { Store } from './core/store/db';

type Out = (line: string) => void;

export const MIGRATE_HELP = `Usage: weft migrate [--database URL | --data-dir DIR] [--config FILE]

Creates the database's schema, or brings it up to this version of Weft, and exits (weft start does the same before
it serves; on PostgreSQL run it once before starting several nodes, or let the first node do it: migrations take a
lock, so nodes starting together wait for each other).`;

export const DB_HELP = `Usage: weft db copy --from SOURCE --to TARGET

Copies a whole network from one database to another: SOURCE and TARGET are SQLite files (./.weft/weft.db) or
PostgreSQL URLs (postgres://user@host/db). Both are migrated to this version first; the target must hold no network
yet (a database no Weft has started on). Stop the Weft using the source first.`;

/** `weft migrate`: exit code 0 when the schema is current. */
export async function runMigrate(argv: string[], out: Out, err: Out): Promise<number> {
  let values: { database?: string; 'data-dir'?: string; config?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { database: { type: 'string' }, 'data-dir': { type: 'string' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (e) {
    err(`weft migrate: ${(e as Error).message}`);
    return 2;
  }
  if (values.help) return (out(MIGRATE_HELP), 0);
  let url: string | undefined;
  let dataDir: string;
  try {
    const { config, dataDir: dir } = resolveConfig({ database: values.database, dataDir: values['data-dir'], configFile: values.config });
    url = config.store.url;
    dataDir = dir;
  } catch (e) {
    err(`weft migrate: ${e instanceof ConfigError ? e.message : (e as Error).message}`);
    return 2;
  }
  // a new SQLite network's directory, as weft start makes it
  const file = sqliteFile(url, dataDir);
  if (file) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  return reported('weft migrate', err, () =>
    withStore(url, dataDir, async (store, name) => {
      const applied = await store.migrate(SCHEMA_MIGRATIONS);
      const latest = Math.max(...SCHEMA_MIGRATIONS.map((m) => m.version));
      out(
        applied.length
          ? `${name}: applied migrations ${applied.join(', ')}; schema version ${latest}`
          : `${name}: schema version ${latest}, nothing to do`,
      );
    }),
  );
}

/** `weft db copy --from --to`. */
export async function runDb(argv: string[], out: Out, err: Out): Promise<number> {
  if (argv[0] !== 'copy') {
    if (argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') return (out(DB_HELP), 0);
    err(`weft db: unknown command "${argv[0] ?? ''}" (see weft db --help)`);
    return 2;
  }
  let values: { from?: string; to?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv.slice(1),
      options: { from: { type: 'string' }, to: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (e) {
    err(`weft db copy: ${(e as Error).message}`);
    return 2;
  }
  if (values.help) return (out(DB_HELP), 0);
  if (!values.from || !values.to) {
    err('weft db copy: --from and --to are both required (see weft db --help)');
    return 2;
  }
  const { from, to } = values;
  const fromFile = sqliteFile(from, '.');
  if (fromFile && !existsSync(fromFile)) {
    err(`weft db copy: ${from}: no such file`);
    return 1;
  }
  return reported('weft db copy', err, () =>
    withStore(from, '.', (source, sourceName) =>
      withStore(to, '.', async (target, targetName) => {
        await source.migrate(SCHEMA_MIGRATIONS);
        await target.migrate(SCHEMA_MIGRATIONS);
        const report = await copyDatabase(source, target);
        const rows = report.tables.reduce((n, t) => n + t.rows, 0);
        out(`copied ${rows} rows in ${report.tables.length} tables from ${sourceName} to ${targetName}`);
        for (const t of report.tables) if (t.rows) out(`  ${t.table.padEnd(34)} ${t.rows}`);
      }),
    ),
  );
}

/** The store a URL names, open while `fn` runs (its name for messages: a file path, or the URL without password). */
async function withStore(url: string | undefined, dataDir: string, fn: (store: Store, name: string) => Promise<void>): Promise<void> {
  const store = openStore(url, dataDir);
  try {
    await fn(store, sqliteFile(url, dataDir) ?? redactStoreUrl(url!));
  } finally {
    await store.close();
  }
}

/** Runs a command's work: 0, or its failure on stderr and 1. */
async function reported(command: string, err: Out, fn: () => Promise<void>): Promise<number> {
  try {
    await fn();
    return 0;
  } catch (e) {
    err(`${command}: ${(e as Error).message}`);
    return 1;
  }
}
