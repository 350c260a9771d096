import { ChangeListeners } from './changeListeners';
import { migrations, type Migration } from './migrations/index';
import {
  quoteIdent,
  storeParam,
  writeEffect,
  type ChangeListener,
  type ChangeOp,
  type ColumnInfo,
  type ForeignKeyInfo,
  type Row,
  type RunResult,
  type Store,
  type WriteEffect,
} from './db';
import { validationError } from '../errors';
import { PostgresBridge } from './postgresBridge';
import { ddlToPostgres, learnSchema, POSTGRES_HELPERS, toPostgres } from './postgresDialect';

/** Advisory lock keys (pg_advisory_xact_lock): one writer at a time, across every node; one migrator at a time. */
const WRITE_LOCK = 0x77656674; // "weft"
const MIGRATION_LOCK = WRITE_LOCK + 1;
const CHANGES = 'weft_changes';
const GENERATION = 'weft_generation';

interface Statement {
  text: string;
  name: string;
  effect: WriteEffect;
}

/**
 * The PostgreSQL store: several Weft nodes on one database. The core's SQL (SQLite's dialect) is translated once per
 * statement and run as a named prepared statement on one connection (store/postgresBridge.ts).
 *
 * Write transactions take one advisory lock first, so writes are serialised across all nodes exactly as SQLite
 * serialises them in one process: the policy index (maintained by the writes themselves) sees every committed write
 * before it changes anything. Reads run without it, on a consistent snapshot where grouped (`read`).
 *
 * Other nodes learn of writes through NOTIFY: `weft_generation` (sent with every committed write that is not
 * volatile) advances their `generation`, so their caches drop what they built before; `weft_changes` carries the
 * row changes `watch` asks for, from triggers, so every node's routers hear of a session deleted on any node.
 */
export class PostgresStore implements Store {
  readonly dialect = 'postgres';
  private readonly pg: PostgresBridge;
  private readonly statements = new Map<string, Statement>();
  private stableWrites = 0;
  /** names of prepared statements: never reused, the connection keeps what it prepared under each */
  private prepared = 0;
  private depth = 0;
  /** stable writes in the running transaction (they announce themselves when it commits) */
  private txStable = false;
  /** whether the running transaction holds the write lock (a write transaction does from its start) */
  private locked = false;
  private closed = false;
  private readonly listeners = new ChangeListeners((_key, table, what) => this.installTrigger(table, what));

  constructor(readonly url: string) {
    this.pg = new PostgresBridge(url, {
      listen: [CHANGES, GENERATION],
      onNotify: (n) => (n.channel === GENERATION ? this.stableWrites++ : this.deliver(n.payload)),
      // notifications sent while the listening connection was down are lost: whatever was cached is suspect
      onListening: () => this.stableWrites++,
    });
  }

  get open(): boolean {
    return !this.closed;
  }

  get generation(): number {
    return this.stableWrites;
  }

  private statement(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = { text: toPostgres(sql), name: `w${++this.prepared}`, effect: writeEffect(sql, readsOnly(sql)) };
      this.statements.set(sql, s);
    }
    return s;
  }

  private exec(sql: string, params: unknown[]): { rows: Row[]; rowCount: number } {
    const s = this.statement(sql);
    if (s.effect !== 'stable') return this.run(s, params);
    // a write of the policy index's tables (through triggers too) takes the write lock like any transaction
    if (!this.depth) return this.tx(() => this.exec(sql, params));
    if (!this.locked) {
      // a write inside a read transaction: it waits for the write lock like any other
      this.pg.query(`SELECT pg_advisory_xact_lock(${WRITE_LOCK})`);
      this.locked = true;
    }
    this.stableWrites++;
    const r = this.run(s, params);
    this.txStable = true;
    return r;
  }

  private run(s: Statement, params: unknown[]): { rows: Row[]; rowCount: number } {
    return this.pg.query(s.text, params.map(toParam), { name: s.name });
  }

  allSql<T = Row>(sql: string, ...params: unknown[]): T[] {
    return this.exec(sql, params).rows as T[];
  }

  getSql<T = Row>(sql: string, ...params: unknown[]): T | undefined {
    return this.exec(sql, params).rows[0] as T | undefined;
  }

  runSql(sql: string, ...params: unknown[]): RunResult {
    return { changes: this.exec(sql, params).rowCount };
  }

  touchSql(sql: string, ...params: unknown[]): RunResult {
    return { changes: this.run(this.statement(sql), params).rowCount };
  }

  read<T>(fn: () => T): T {
    if (this.depth) return fn();
    return this.transaction('BEGIN ISOLATION LEVEL REPEATABLE READ', fn, false);
  }

  tx<T>(fn: () => T): T {
    if (!this.depth) return this.transaction(`BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK})`, fn, true);
    const savepoint = `s${this.depth}`;
    this.pg.query(`SAVEPOINT ${savepoint}`);
    this.depth++;
    try {
      const out = fn();
      this.pg.query(`RELEASE SAVEPOINT ${savepoint}`);
      return out;
    } catch (e) {
      this.stableWrites++;
      this.pg.query(`ROLLBACK TO SAVEPOINT ${savepoint}`);
      throw e;
    } finally {
      this.depth--;
    }
  }

  secureTx<T>(fn: () => T): T {
    // old row versions are PostgreSQL's to reclaim (VACUUM); its files are the operator's to protect
    return this.tx(fn);
  }

  private transaction<T>(begin: string, fn: () => T, locked: boolean): T {
    this.depth = 1;
    this.txStable = false;
    this.locked = locked;
    try {
      // committed writes tell every node (the notification goes out with the commit, or not at all)
      return this.bracket(begin, fn, () => (this.txStable ? `SELECT pg_notify('${GENERATION}', ''); COMMIT` : 'COMMIT'));
    } catch (e) {
      this.stableWrites++;
      throw e;
    } finally {
      this.depth = 0;
    }
  }

  /** BEGIN, `fn`, then COMMIT (the statement `commit` gives), or ROLLBACK when `fn` or the commit fails. */
  private bracket<T>(begin: string, fn: () => T, commit: () => string = () => 'COMMIT'): T {
    this.pg.query(begin, [], { tx: 'begin' });
    try {
      const out = fn();
      this.pg.query(commit(), [], { tx: 'commit' });
      return out;
    } catch (e) {
      try {
        this.pg.query('ROLLBACK', [], { tx: 'rollback' });
      } catch {
        // the connection is gone, and the transaction with it
      }
      throw e;
    }
  }

  watch(table: string, op: ChangeOp, listener: ChangeListener): () => void {
    return this.listeners.watch(table, op, listener);
  }

  watchTables(tables: string[], listener: () => void): () => void {
    return this.listeners.watchTables(tables, listener);
  }

  /** The trigger that NOTIFYs a key's changes (every node hears them, this one too). */
  private installTrigger(table: string, what: ChangeOp | 'touched'): void {
    this.ddl(
      what === 'touched'
        ? `CREATE OR REPLACE TRIGGER weft_touch_${table} AFTER INSERT OR UPDATE OR DELETE ON ${table}
             FOR EACH STATEMENT EXECUTE FUNCTION weft_notify_touched()`
        : `CREATE OR REPLACE TRIGGER weft_watch_${table}_${what} AFTER ${what.toUpperCase()} ON ${table}
             FOR EACH ROW EXECUTE FUNCTION weft_notify_row()`,
    );
  }

  /** Schema changes made at run time (the watch triggers), one node at a time. */
  private ddl(sql: string): void {
    this.bracket(`BEGIN; SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, () => this.pg.query(sql));
  }

  /** A `weft_changes` notification: "table:op:id" (row triggers) or "touched:table" (statement triggers). */
  private deliver(payload: string): void {
    const [a, b, ...rest] = payload.split(':');
    if (a === 'touched') this.listeners.deliver(`touched:${b}`, []);
    else this.listeners.deliver(`${a}:${b}`, [rest.join(':')]);
  }

  /** Applies the migrations not yet applied (one node at a time), each in its own transaction. */
  migrate(list: readonly Migration[] = migrations): number[] {
    const done: number[] = [];
    this.pg.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      this.pg.query('CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
      // idempotent: a database migrated by an older Weft gets the functions added since
      this.pg.query(POSTGRES_HELPERS + NOTIFY_FUNCTIONS);
      const applied = new Set(this.pg.query('SELECT version FROM schema_migrations').rows.map((r) => Number(r.version)));
      for (const m of [...list].sort((a, b) => a.version - b.version)) {
        if (applied.has(m.version)) {
          // the translator learns column types and keys from every migration, including those applied before
          m.up({ dialect: 'postgres', exec: learnSchema, native: () => undefined });
          continue;
        }
        this.bracket('BEGIN', () => {
          m.up({
            dialect: 'postgres',
            exec: (script) => void this.pg.query(ddlToPostgres(script)),
            native: (script) => void this.pg.query(script),
          });
          this.pg.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
            m.version,
            m.name,
            new Date().toISOString(),
          ]);
        });
        done.push(m.version);
      }
    } finally {
      this.pg.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
    }
    this.statements.clear(); // plans prepared against the old schema
    return done;
  }

  bulkLoad(fn: () => void): void {
    const tables = this.tables();
    this.tx(() => {
      // user triggers only: the foreign keys' own triggers keep checking every row
      for (const t of tables) this.pg.query(`ALTER TABLE ${quoteIdent(t)} DISABLE TRIGGER USER`);
      fn();
      for (const t of tables) this.pg.query(`ALTER TABLE ${quoteIdent(t)} ENABLE TRIGGER USER`);
      for (const r of this.pg.query(
        `SELECT table_name AS t, column_name AS c FROM information_schema.columns
         WHERE table_schema = current_schema() AND is_identity = 'YES'`,
      ).rows) {
        this.pg.query(
          `SELECT setval(pg_get_serial_sequence('"${String(r.t)}"', '${String(r.c)}'), coalesce((SELECT max("${String(r.c)}") FROM "${String(r.t)}"), 0) + 1, false)`,
        );
      }
    });
  }

  tables(): string[] {
    return this.pg
      .query("SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' ORDER BY 1")
      .rows.map((r) => r.name as string);
  }

  columns(table: string): ColumnInfo[] {
    return this.pg
      .query(
        `SELECT a.attname AS name, a.attnotnull AS notnull,
                coalesce((SELECT k.n FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) WHERE k.attnum = a.attnum), 0) AS pk
         FROM pg_attribute a LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
         WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
        [table],
      )
      .rows.map((r) => ({ name: r.name as string, notnull: !!r.notnull, pk: Number(r.pk) }));
  }

  foreignKeys(table: string): ForeignKeyInfo[] {
    return this.pg
      .query(
        `SELECT p.relname AS table, a.attname AS "from", pa.attname AS "to", c.confdeltype = 'c' AS cascade,
                array_length(c.conkey, 1) > 1 AS composite
         FROM pg_constraint c JOIN pg_class p ON p.oid = c.confrelid
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
         JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = c.confkey[1]
         WHERE c.contype = 'f' AND c.conrelid = to_regclass($1) ORDER BY c.conname`,
        [table],
      )
      .rows.map((r) => ({ table: r.table as string, from: r.from as string, to: r.to as string, cascade: !!r.cascade, composite: !!r.composite }));
  }

  close(): void {
    this.closed = true;
    this.pg.close();
  }
}

/** The trigger functions behind `watch` and `watchTables`. */
const NOTIFY_FUNCTIONS = `
CREATE OR REPLACE FUNCTION weft_notify_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('${CHANGES}', TG_TABLE_NAME || ':' || lower(TG_OP) || ':' || OLD.id);
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION weft_notify_touched() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('${CHANGES}', 'touched:' || TG_TABLE_NAME);
  RETURN NULL;
END $$;`;

/** A query that only reads (SELECT, VALUES, or a WITH that writes nothing). */
function readsOnly(sql: string): boolean {
  if (/^\s*(SELECT|VALUES)\b/i.test(sql)) return true;
  return /^\s*WITH\b/i.test(sql) && !/\b(INSERT|UPDATE|DELETE)\b/i.test(sql);
}

/** PostgreSQL's text (and jsonb) cannot hold U+0000, which SQLite stores: such input is refused, not half-stored. */
const NUL = /\u0000|\\u0000/;

function toParam(v: unknown): unknown {
  if (typeof v === 'string' && NUL.test(v)) throw validationError('value', 'text must not contain NUL characters (U+0000)');
  if (typeof v === 'bigint') return v.toString();
  return storeParam(v);
}
