// The database of a test app reached around the app: a connection of its own (SQLite: the data directory's file;
// PostgreSQL: a `pg` client on the app's database), for what a test must see or do that the app would not, such as
// reading every stored byte or writing rows the app would refuse. Works whether or not the app is running.
import { join } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { App } from '../../src/main/app';
import { isPostgresUrl } from '../../src/main/core/store/open';
import type { SqliteStore } from '../../src/main/core/store/sqlite';

type Row = Record<string, unknown>;

/** What a raw connection needs of an app (a stopped app object still has it). */
export type RawTarget = Pick<App, 'config' | 'dataDir'>;

export interface RawDb {
  /** Runs one statement (SQLite's `?` placeholders on either store) and returns its rows (none for a write). */
  sql(sql: string, ...params: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

export interface RawDbOptions {
  /** Foreign keys (and, on PostgreSQL, user triggers) not enforced for this connection: for writing corrupted rows. */
  unchecked?: boolean;
  readonly?: boolean;
}

/** The app's PostgreSQL URL, or undefined when it is on SQLite. */
export function postgresUrlOf(app: RawTarget): string | undefined {
  const url = app.config.store.url;
  return url && isPostgresUrl(url) ? url : undefined;
}

function sqliteFileOf(app: RawTarget): string {
  const url = app.config.store.url;
  return url ? url.replace(/^sqlite:(\/\/)?/i, '') : join(app.dataDir, 'weft.db');
}

/** `?` placeholders as `$1`, `$2`, …, outside quoted text. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\?/g, (m) => (m === '?' ? `$${++n}` : m));
}

/** Text as text (JSON not parsed, timestamps not made dates), counts as numbers, bytea as a Buffer. */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 17) return pg.types.getTypeParser(oid, format);
    if (oid === 20 || oid === 21 || oid === 23) return (v: string) => Number(v);
    return (v: string) => v;
  },
};

/** A connection of its own to the app's database. */
export async function rawDb(app: RawTarget, opts: RawDbOptions = {}): Promise<RawDb> {
  const url = postgresUrlOf(app);
  if (url) {
    const client = new pg.Client({ connectionString: url, types: pgTypes as pg.CustomTypesConfig });
    await client.connect();
    try {
      if (opts.unchecked) await client.query('SET session_replication_role = replica');
      if (opts.readonly) await client.query('SET default_transaction_read_only = on');
    } catch (e) {
      await client.end();
      throw e;
    }
    return {
      sql: async (sql, ...params) => (await client.query(numbered(sql), params)).rows as Row[],
      close: () => client.end(),
    };
  }
  const db = new Database(sqliteFileOf(app), { fileMustExist: true, readonly: !!opts.readonly });
  db.pragma('busy_timeout = 5000');
  if (opts.unchecked) db.pragma('foreign_keys = OFF');
  return {
    sql: async (sql, ...params) => {
      const st = db.prepare(sql);
      if (st.reader) return st.all(...params) as Row[];
      st.run(...params);
      return [];
    },
    close: async () => void db.close(),
  };
}

/** Runs one statement on a connection of its own (see rawDb) and returns its rows. */
export async function rawSql(app: RawTarget, sql: string, ...params: unknown[]): Promise<Row[]> {
  const db = await rawDb(app);
  try {
    return await db.sql(sql, ...params);
  } finally {
    await db.close();
  }
}

/** The tables of the app's database: SQLite's every table (FTS shadow tables too), PostgreSQL's outside its catalogs. */
async function allTables(db: RawDb, postgres: boolean): Promise<string[]> {
  const rows = postgres
    ? await db.sql(
        "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
      )
    : await db.sql("SELECT '\"' || replace(name, '\"', '\"\"') || '\"' AS name FROM sqlite_master WHERE type = 'table' ORDER BY 1");
  return rows.map((r) => r.name as string);
}

/**
 * Every value of every column of every row of every table, as the database holds it: text as text, blobs/bytea as
 * their bytes (latin1), other types (PostgreSQL) as their text form.
 */
export async function allStoredText(app: RawTarget): Promise<string[]> {
  const db = await rawDb(app, { readonly: true });
  try {
    const out: string[] = [];
    for (const table of await allTables(db, !!postgresUrlOf(app))) {
      for (const row of await db.sql(`SELECT * FROM ${table}`)) {
        for (const v of Object.values(row))
          if (typeof v === 'string') out.push(v);
          else if (Buffer.isBuffer(v)) out.push(v.toString('latin1'));
      }
    }
    return out;
  } finally {
    await db.close();
  }
}

/**
 * Rows whose foreign key points at nothing, over the whole database, checked apart from the app: SQLite's
 * `PRAGMA foreign_key_check`; on PostgreSQL each foreign key constraint's columns looked up in its parent.
 */
export async function foreignKeyViolations(app: RawTarget): Promise<Row[]> {
  const db = await rawDb(app, { readonly: true });
  try {
    if (!postgresUrlOf(app)) return await db.sql('PRAGMA foreign_key_check');
    const fks = await db.sql(
      `SELECT c.conname AS name, c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent,
              array_to_string(ARRAY(SELECT quote_ident(a.attname) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i), ',') AS cols,
              array_to_string(ARRAY(SELECT quote_ident(a.attname) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i), ',') AS refs
       FROM pg_constraint c WHERE c.contype = 'f' ORDER BY 1`,
    );
    const out: Row[] = [];
    for (const fk of fks) {
      const cols = (fk.cols as string).split(',');
      const refs = (fk.refs as string).split(',');
      const rows = await db.sql(
        `SELECT ${cols.map((c) => `c.${c}::text AS ${c}`).join(', ')} FROM ${fk.child as string} c
         WHERE ${cols.map((c) => `c.${c} IS NOT NULL`).join(' AND ')}
           AND NOT EXISTS (SELECT 1 FROM ${fk.parent as string} p WHERE ${cols.map((c, i) => `p.${refs[i]} = c.${c}`).join(' AND ')})`,
      );
      for (const r of rows) out.push({ table: fk.child, parent: fk.parent, constraint: fk.name, ...r });
    }
    return out;
  } finally {
    await db.close();
  }
}

/**
 * A store a test can make unavailable while the app runs, without touching the server other tests share. Start the
 * app with `database` (undefined on SQLite: its file in the data directory); `begin` then takes the store away:
 * SQLite's connection is closed under the app; PostgreSQL's server becomes unreachable for this app alone (its
 * connections run through a TCP proxy that `begin` closes, so they are cut and new ones refused). `end` cleans up.
 */
export interface StoreOutage {
  database: string | undefined;
  begin(app: App): Promise<void>;
  end(): Promise<void>;
}

export async function storeOutage(database: string | undefined): Promise<StoreOutage> {
  if (!database || !isPostgresUrl(database)) {
    return {
      database,
      begin: async (app) => void (app.core.store as SqliteStore).sqlite.close(),
      end: async () => undefined,
    };
  }
  // the proxy runs in a thread of its own: the app's store waits for PostgreSQL with the main thread blocked
  const target = new URL(database);
  const proxy = new Worker(PROXY_SOURCE, { eval: true, workerData: { host: target.hostname, port: Number(target.port || 5432) } });
  proxy.unref();
  const reply = () => once(proxy, 'message').then(([m]) => m as { port?: number });
  const { port } = await reply();
  const via = new URL(database);
  via.hostname = '127.0.0.1';
  via.port = String(port);
  let cut: Promise<unknown> | undefined;
  const begin = async () => {
    cut ??= (proxy.postMessage('cut'), reply());
    await cut;
  };
  const end = async () => {
    await begin();
    await proxy.terminate();
  };
  return { database: via.toString(), begin, end };
}

/** The proxy's thread: forwards connections to the server until told to cut them (then refuses new ones). */
const PROXY_SOURCE = `
const { createServer, connect } = require('node:net');
const { workerData, parentPort } = require('node:worker_threads');
const sockets = new Set();
const keep = (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => undefined); };
const server = createServer((inbound) => {
  const outbound = connect(workerData.port, workerData.host);
  keep(inbound);
  keep(outbound);
  inbound.pipe(outbound).pipe(inbound);
  inbound.on('close', () => outbound.destroy());
  outbound.on('close', () => inbound.destroy());
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', () => {
  server.close();
  for (const s of sockets) s.destroy();
  parentPort.postMessage({});
});
`;
