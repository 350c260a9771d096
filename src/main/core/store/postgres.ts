import pg from 'pg';
import { ChangeListeners } from './changeListeners';
import { Holders } from './holders';
import { migrations, type Migration } from './migrations/index';
import {
  quoteIdent,
  storeParam,
  StoreUnavailableError,
  writeEffect,
  type BatchStatement,
  type ChangeListener,
  type ChangeOp,
  type ColumnInfo,
  type ForeignKeyInfo,
  type Row,
  type RunResult,
  observed,
  type Store,
  type TransactionObserver,
  type WriteEffect,
} from './db';
import { validationError } from '../errors';
import { ddlToPostgres, learnSchema, toPostgres, type DdlSchema } from './postgresDialect';
import { POSTGRES_HELPERS, postgresSql } from './sqlDialect';

/** Advisory lock keys (pg_advisory_xact_lock): one writer at a time, across every node; one migrator at a time. */
const WRITE_LOCK = 0x77656674; // "weft"
const MIGRATION_LOCK = WRITE_LOCK + 1;
const CHANGES = 'weft_changes';
const GENERATION = 'weft_generation';
const CONNECT_TIMEOUT_MS = 2_000;
/** the longest a statement may run; a wait for a lock gives up sooner */
const STATEMENT_TIMEOUT_MS = 15_000;
const POOL_SIZE = 10;

/**
 * At most `size` holders at a time; the others wait in order, and a slot given back goes straight to the next. A wait
 * gives up after `timeoutMs` (holders that wait on each other's connections end as 503s, not as a hang).
 */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(size: number) {
    this.free = size;
  }
  async take(timeoutMs: number): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const granted = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(granted), 1);
        reject(new StoreUnavailableError(`no PostgreSQL connection was free for ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiting.push(granted);
    });
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

interface Statement {
  text: string;
  name: string;
  effect: WriteEffect;
}

/** An open transaction: its connection, and what it has done so far. */
interface Transaction {
  client: pg.PoolClient;
  /** whether it holds the write lock (a write transaction does from its start) */
  locked: boolean;
  /** whether it made stable writes (they announce themselves when it commits) */
  stable: boolean;
  /** whether it wrote anything (volatile and touching writes too) */
  wrote: boolean;
  /** its queued writes (`queueSql`): handed to the connection, and settled (the first failure kept) */
  queued: { handed: Promise<void>[]; settled: Promise<void>[]; failure?: { e: unknown } };
}

type Queryable = pg.Pool | pg.PoolClient;

/** A connection taken from the pool; `lost`: it failed, and is dropped instead of given back. */
interface Connection {
  client: pg.PoolClient;
  lost?: Error;
  /** a read transaction's COMMIT still under way: the connection goes back to the pool once it has ended */
  ending?: Promise<unknown>;
}

/**
 * The PostgreSQL store: several Weft nodes on one database. The core's SQL (written for both stores, with `sql`'s
 * helpers; its `?` parameters numbered once per statement, see postgresDialect.ts) runs as a named prepared statement
 * on a pool of connections. A transaction keeps one connection of the pool, and every statement the code inside it
 * awaits runs on that connection (found through the async context).
 *
 * Write transactions take one advisory lock first, so writes are serialised across all nodes exactly as SQLite
 * serialises them in one process: the policy index (maintained by the writes themselves) sees every committed write
 * before it changes anything. Reads run without it, concurrently, on a consistent snapshot where grouped (`read`).
 *
 * Other nodes learn of writes through NOTIFY: `weft_generation` (sent with every committed write that is not
 * volatile) advances their `generation`, so their caches drop what they built before; `weft_changes` carries the
 * row changes `watch` asks for, from triggers, so every node's routers hear of a session deleted on any node.
 */
export class PostgresStore implements Store {
  readonly dialect = 'postgres';
  observeTransactions?: TransactionObserver;
  /** the NOT NULL columns of each table, from the catalogue once migrated (`sql.orderBy` leaves their NULLs alone) */
  private notNull = new Map<string, Set<string>>();
  readonly sql = postgresSql((table) => this.notNull.get(table));
  private readonly pool: pg.Pool;
  private readonly slots: Slots;
  private readonly statements = new Map<string, Statement>();
  /**
   * The open transactions, each on a connection of its own (a root frame), and the savepoints inside them: within
   * one transaction only the innermost frame acts (see Holders); code outside every transaction uses the pool.
   */
  private readonly holders = new Holders<Transaction>();
  /** savepoints opened so far (their names) */
  private savepoints = 0;
  private stableWrites = 0;
  /** names of prepared statements: never reused, each connection keeps what it prepared under each */
  private prepared = 0;
  private closed = false;
  private listener: pg.Client | undefined;
  /** whether a LISTEN connection was up before (a new one after it means a gap) */
  private listened = false;
  /** the watch triggers being installed: statements wait for them, so no change made after `watch` is missed */
  private installing: Promise<void> = Promise.resolve();
  private readonly listeners = new ChangeListeners((_key, table, what) => this.installTrigger(table, what));

  constructor(readonly url: string) {
    this.pool = new pg.Pool({ ...connectionOptions(url), pipeline: true, max: POOL_SIZE });
    this.slots = new Slots(POOL_SIZE);
    // A pooled connection that breaks while idle is dropped by the pool; one that breaks while taken (the server
    // stopped, its backend terminated) fails its next statement, which is answered 503 and drops it. Either way
    // the error event must not end the process: the pool listens only while a connection is idle.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => void client.on('error', () => undefined));
    this.listen();
  }

  get open(): boolean {
    return !this.closed;
  }

  get generation(): number {
    return this.stableWrites;
  }

  /**
   * The LISTEN connection, reconnected when lost. Notifications sent while it was down are lost: once it is back,
   * caches are dropped (generation) and the watchers told of the gap, so they read again what they keep.
   */
  private listen(): void {
    if (this.closed) return;
    const c = new pg.Client(connectionOptions(this.url));
    const retry = () => {
      if (this.listener === c) this.listener = undefined;
      if (!this.closed) setTimeout(() => this.listen(), 250).unref();
    };
    c.on('notification', (n) => (n.channel === GENERATION ? this.stableWrites++ : this.deliver(n.payload ?? '')));
    c.on('error', () => undefined);
    c.on('end', () => this.listener === c && retry());
    c.connect()
      .then(async () => {
        await c.query(`LISTEN ${CHANGES}; LISTEN ${GENERATION}`);
        if (this.closed) return void c.end().catch(() => undefined);
        this.listener = c;
        this.stableWrites++;
        if (this.listened) this.listeners.gap();
        this.listened = true;
      })
      .catch(() => {
        c.end().catch(() => undefined);
        retry();
      });
  }

  private statement(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = { text: toPostgres(sql), name: `w${++this.prepared}`, effect: writeEffect(sql, readsOnly(sql)) };
      this.statements.set(sql, s);
    }
    return s;
  }

  /**
   * Runs one statement where the running code belongs: on its transaction's connection when its frame's turn comes,
   * or on any of the pool's outside every transaction.
   */
  private onConnection(s: Statement | string, values: unknown[] = []): Promise<{ rows: Row[]; rowCount: number }> {
    const f = this.holders.current();
    if (!f) return this.query(this.pool, s, values);
    return this.holders.act(f, () => this.query(f.data.client, s, values)) as Promise<{ rows: Row[]; rowCount: number }>;
  }

  /** `handed`: told once the statement is handed to its connection (issued, or in line behind its frame's turn) */
  private async exec(sql: string, params: unknown[], handed?: () => void): Promise<{ rows: Row[]; rowCount: number }> {
    const s = this.statement(sql);
    const values = params.map(toParam);
    await this.installing;
    const f = this.holders.current();
    if (f && s.effect !== 'read') f.data.wrote = true;
    if (s.effect !== 'stable' || !f) {
      // a write of the policy index's tables (through triggers too) takes the write lock like any transaction
      if (s.effect === 'stable') return this.tx(() => this.exec(sql, params, handed));
      const r = this.onConnection(s, values);
      handed?.();
      return r;
    }
    const t = f.data;
    if (!t.locked) {
      // a write inside a read transaction: it waits for the write lock like any other
      await this.onConnection(`SELECT pg_advisory_xact_lock(${WRITE_LOCK})`);
      t.locked = true;
    }
    this.stableWrites++;
    // before the answer: a queued write's transaction may commit before it comes, and must announce it
    t.stable = true;
    const r = this.onConnection(s, values);
    handed?.();
    return r;
  }

  /**
   * One statement (a prepared one, or a script of several without parameters); connection failures become 503s.
   *
   * The pool's connections pipeline (pg's `pipeline` mode): a statement goes to the server at once, without waiting
   * for the answers to those sent before it on the same connection, so the statements a transaction issues together
   * (`batch`, or any Promise.all) cost one round trip, the BEGIN before them included. The messages written in one
   * turn of the event loop leave in one write (the socket is corked until the turn ends).
   */
  private async query(on: Queryable, s: Statement | string, values: unknown[] = []): Promise<{ rows: Row[]; rowCount: number }> {
    if (this.closed) throw new StoreUnavailableError('the PostgreSQL store is closed');
    try {
      if (on !== this.pool) return await pipelined(on as pg.PoolClient, s, values);
      const r = (await (typeof s === 'string'
        ? on.query(s, values.length ? values : undefined)
        : on.query({ name: s.name, text: s.text, values }))) as pg.QueryResult | pg.QueryResult[];
      return resultOf(r);
    } catch (e) {
      throw unavailable(e) ? new StoreUnavailableError(`PostgreSQL is unavailable: ${(e as Error).message}`) : e;
    }
  }

  async allSql<T = Row>(sql: string, ...params: unknown[]): Promise<T[]> {
    return (await this.exec(sql, params)).rows as T[];
  }

  async getSql<T = Row>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return (await this.exec(sql, params)).rows[0] as T | undefined;
  }

  async runSql(sql: string, ...params: unknown[]): Promise<RunResult> {
    return { changes: (await this.exec(sql, params)).rowCount };
  }

  async batch(statements: readonly BatchStatement[]): Promise<Row[][]> {
    // issued in the same turn: inside a transaction they share one round trip (see query)
    return Promise.all(statements.map(({ sql, params = [] }) => this.allSql(sql, ...params)));
  }

  async queueSql(sql: string, ...params: unknown[]): Promise<void> {
    const f = this.holders.current();
    // outside a transaction, or in a savepoint (whose failure is its own, caught inside it): waited for
    if (!f || f.parent) return void (await this.exec(sql, params));
    const q = f.data.queued;
    let handed!: () => void;
    q.handed.push(new Promise<void>((r) => (handed = r)));
    q.settled.push(
      this.exec(sql, params, handed).then(
        () => undefined,
        (e: unknown) => {
          handed();
          q.failure ??= { e };
        },
      ),
    );
  }

  async touchSql(sql: string, ...params: unknown[]): Promise<RunResult> {
    await this.installing;
    const f = this.holders.current();
    if (f) f.data.wrote = true;
    return { changes: (await this.onConnection(this.statement(sql), params.map(toParam))).rowCount };
  }

  async read<T>(fn: () => Promise<T>): Promise<T> {
    if (this.holders.current()) return fn();
    return this.transaction('BEGIN ISOLATION LEVEL REPEATABLE READ', fn, false);
  }

  async tx<T>(fn: () => Promise<T>): Promise<T> {
    const parent = this.holders.current();
    if (!parent) return this.transaction(`BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK})`, fn, true);
    // a savepoint, named uniquely, once the frame it opens in may act (siblings started together take turns)
    const frame = await this.holders.enter(parent);
    const savepoint = `s${++this.savepoints}`;
    try {
      return await this.holders.run(frame, async () => {
        await this.onConnection(`SAVEPOINT ${savepoint}`);
        try {
          const out = await fn();
          await this.onConnection(`RELEASE SAVEPOINT ${savepoint}`);
          return out;
        } catch (e) {
          this.stableWrites++;
          await this.onConnection(`ROLLBACK TO SAVEPOINT ${savepoint}`);
          throw e;
        }
      });
    } finally {
      this.holders.leave(frame);
    }
  }

  secureTx<T>(fn: () => Promise<T>): Promise<T> {
    // old row versions are PostgreSQL's to reclaim (VACUUM); its files are the operator's to protect
    return this.tx(fn);
  }

  /**
   * `fn` on a connection of the pool (a failure to get one is a 503); then the connection goes back to the pool, or
   * is dropped if it was lost.
   */
  private async withConnection<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreUnavailableError('the PostgreSQL store is closed');
    // wait for a free connection here, not in the pool: the pool's connect timeout would also time that wait, and a
    // burst of writes queued behind the write lock would get 503s from a database that is up
    await this.slots.take(STATEMENT_TIMEOUT_MS);
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      this.slots.give();
      throw new StoreUnavailableError(`PostgreSQL is unavailable: ${(e as Error).message}`);
    }
    const c: Connection = { client };
    try {
      return await fn(c);
    } catch (e) {
      if (e instanceof StoreUnavailableError) c.lost ??= e;
      throw e;
    } finally {
      const release = () => {
        client.release(c.lost);
        this.slots.give();
      };
      if (c.ending) void c.ending.then(release);
      else release();
    }
  }

  private async transaction<T>(begin: string, fn: () => Promise<T>, locked: boolean): Promise<T> {
    await this.installing;
    try {
      return await observed(this.observeTransactions, locked ? 'write' : 'read', (started) =>
        this.withConnection(async (c) => {
          const frame = this.holders.root({
            client: c.client,
            locked,
            stable: false,
            wrote: false,
            queued: { handed: [], settled: [] },
          });
          const queued = frame.data.queued;
          try {
            // committed writes tell every node (the notification goes out with the commit, or not at all)
            const out = await this.holders.run(frame, () =>
              this.bracket(
                c,
                begin,
                async () => {
                  const out = await fn();
                  // the queued writes go out before COMMIT, with it (no round trip of their own)
                  await Promise.all(queued.handed);
                  return out;
                },
                () => (frame.data.stable ? `SELECT pg_notify('${GENERATION}', ''); COMMIT` : 'COMMIT'),
                // BEGIN, the lock, the notification, COMMIT: prepared statements each, so that they join the batch
                // of the statements sent with them (one Sync)
                (script) => Promise.all(script.split('; ').map((sql) => this.onConnection(this.statement(sql)))),
                started,
                () => !frame.data.locked && !frame.data.wrote,
              ),
            );
            // a queued write that failed aborted the transaction: its COMMIT rolled back (and answered no error)
            await Promise.all(queued.settled);
            if (queued.failure) throw queued.failure.e;
            return out;
          } catch (e) {
            // the statements after a failed queued write were refused for it: its error is the one raised
            await Promise.all(queued.settled);
            throw queued.failure ? queued.failure.e : e;
          } finally {
            this.holders.leave(frame);
          }
        }),
      );
    } catch (e) {
      this.stableWrites++;
      throw e;
    }
  }

  /**
   * BEGIN, `fn`, then COMMIT (the statement `commit` gives), or ROLLBACK when `fn` or the commit fails, each through
   * `on` (in a transaction's frame: when its turn comes, so a savepoint still open inside it ends first).
   *
   * `fn` starts at once, without waiting for BEGIN's answer: its first statements follow BEGIN on the pipelined
   * connection (one round trip for both). Should BEGIN (or the write lock taken with it) fail, the server refuses
   * every statement after it in the aborted transaction, so none of them runs outside it; BEGIN's error is the one
   * raised. `begun`: told when BEGIN (and the lock) has been granted.
   *
   * When `readOnly` says the transaction wrote nothing, its result does not wait for COMMIT's answer (a snapshot's
   * reads are what they are whatever the COMMIT does): the connection goes back to the pool once it has come.
   */
  private async bracket<T>(
    c: Connection,
    begin: string,
    fn: () => Promise<T>,
    commit: () => string = () => 'COMMIT',
    on: (sql: string) => Promise<unknown> = (sql) => this.query(c.client, sql),
    begun: () => void = () => undefined,
    readOnly: () => boolean = () => false,
  ): Promise<T> {
    const beginning = on(begin).then(begun);
    // its failure is raised below, once `fn` has ended too (not as an unhandled rejection meanwhile)
    const beginFailure = beginning.then(
      () => undefined,
      (e: unknown) => ({ e }),
    );
    try {
      const out = await fn();
      await beginning;
      if (readOnly()) {
        c.ending = on(commit()).catch((lost: Error) => (c.lost = lost));
        return out;
      }
      await on(commit());
      return out;
    } catch (e) {
      const failed = await beginFailure;
      // a connection that cannot even roll back is dropped, not given back to the pool
      await on('ROLLBACK').catch((lost: Error) => (c.lost = lost));
      throw failed ? failed.e : e;
    }
  }

  watch(table: string, op: ChangeOp, listener: ChangeListener): () => void {
    return this.listeners.watch(table, op, listener);
  }

  watchTables(tables: string[], listener: () => void): () => void {
    return this.listeners.watchTables(tables, listener);
  }

  watchGaps(listener: () => void): () => void {
    return this.listeners.watchGaps(listener);
  }

  /** The trigger that NOTIFYs a key's changes (every node hears them, this one too). Statements wait for it. */
  private installTrigger(table: string, what: ChangeOp | 'touched'): void {
    const sql =
      what === 'touched'
        ? `CREATE OR REPLACE TRIGGER weft_touch_${table} AFTER INSERT OR UPDATE OR DELETE ON ${table}
             FOR EACH STATEMENT EXECUTE FUNCTION weft_notify_touched()`
        : `CREATE OR REPLACE TRIGGER weft_watch_${table}_${what} AFTER ${what.toUpperCase()} ON ${table}
             FOR EACH ROW EXECUTE FUNCTION weft_notify_row()`;
    this.installing = this.installing.then(() =>
      this.ddl(sql).catch((e: Error) => process.emitWarning(`could not install the change trigger on ${table}: ${e.message}`)),
    );
  }

  /** Schema changes made at run time (the watch triggers), one node at a time. */
  private async ddl(sql: string): Promise<void> {
    await this.withConnection((c) =>
      this.bracket(c, `BEGIN; SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, async () => void (await this.query(c.client, sql))),
    );
  }

  /** A `weft_changes` notification: "table:op:id" (row triggers) or "touched:table" (statement triggers). */
  private deliver(payload: string): void {
    const [a, b, ...rest] = payload.split(':');
    if (a === 'touched') this.listeners.deliver(`touched:${b}`, []);
    else this.listeners.deliver(`${a}:${b}`, [rest.join(':')]);
  }

  /** Applies the migrations not yet applied (one node at a time), each in its own transaction. */
  async migrate(list: readonly Migration[] = migrations): Promise<number[]> {
    const done: number[] = [];
    /** what the migrations declare, learned from each in turn (their DDL's translation depends on it) */
    const schema: DdlSchema = new Map();
    await this.withConnection(async (c) => {
      const client = c.client;
      await this.query(client, `SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
      try {
        await this.query(
          client,
          'CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
        );
        // idempotent: a database migrated by an older Weft gets the functions added since
        await this.query(client, POSTGRES_HELPERS + NOTIFY_FUNCTIONS);
        const applied = new Set((await this.query(client, 'SELECT version FROM schema_migrations')).rows.map((r) => Number(r.version)));
        for (const m of [...list].sort((a, b) => a.version - b.version)) {
          if (applied.has(m.version)) {
            // the DDL translation learns NOT NULL columns from every migration, including those applied before
            m.up({ dialect: 'postgres', sql: this.sql, exec: (script) => learnSchema(script, schema), native: () => undefined });
            continue;
          }
          // a migration only writes scripts: gathered first, then run in one transaction
          const scripts: string[] = [];
          m.up({
            dialect: 'postgres',
            sql: this.sql,
            exec: (script) => void scripts.push(ddlToPostgres(script, schema)),
            native: (script) => void scripts.push(script),
          });
          await this.bracket(c, 'BEGIN', async () => {
            for (const script of scripts) await this.query(client, script);
            await this.query(client, 'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
              m.version,
              m.name,
              new Date().toISOString(),
            ]);
          });
          done.push(m.version);
        }
        const notNull = await this.query(
          client,
          "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() AND is_nullable = 'NO'",
        );
        this.notNull = new Map();
        for (const r of notNull.rows) {
          const cols = this.notNull.get(r.t as string) ?? new Set<string>();
          this.notNull.set(r.t as string, cols.add(r.c as string));
        }
      } finally {
        // a connection that still holds the lock must not go back to the pool
        await this.query(client, `SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch((e: Error) => (c.lost = e));
      }
    });
    this.statements.clear(); // plans prepared against the old schema
    return done;
  }

  async bulkLoad(fn: () => Promise<void>): Promise<void> {
    const tables = await this.tables();
    await this.tx(async () => {
      const client = this.holders.current()!.data.client;
      // user triggers only: the foreign keys' own triggers keep checking every row
      for (const t of tables) await this.query(client, `ALTER TABLE ${quoteIdent(t)} DISABLE TRIGGER USER`);
      await fn();
      for (const t of tables) await this.query(client, `ALTER TABLE ${quoteIdent(t)} ENABLE TRIGGER USER`);
      const identities = await this.query(
        client,
        `SELECT table_name AS t, column_name AS c FROM information_schema.columns
         WHERE table_schema = current_schema() AND is_identity = 'YES'`,
      );
      for (const r of identities.rows) {
        await this.query(
          client,
          `SELECT setval(pg_get_serial_sequence('"${String(r.t)}"', '${String(r.c)}'), coalesce((SELECT max("${String(r.c)}") FROM "${String(r.t)}"), 0) + 1, false)`,
        );
      }
    });
  }

  /** A query of the catalogue (inside the running transaction, if any). */
  private async catalogue(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.onConnection(sql, params)).rows;
  }

  async tables(): Promise<string[]> {
    const rows = await this.catalogue(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' ORDER BY 1",
    );
    return rows.map((r) => r.name as string);
  }

  async columns(table: string): Promise<ColumnInfo[]> {
    const rows = await this.catalogue(
      `SELECT a.attname AS name, a.attnotnull AS notnull,
              coalesce((SELECT k.n FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) WHERE k.attnum = a.attnum), 0) AS pk
       FROM pg_attribute a LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
       WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [table],
    );
    return rows.map((r) => ({ name: r.name as string, notnull: !!r.notnull, pk: Number(r.pk) }));
  }

  async foreignKeys(table: string): Promise<ForeignKeyInfo[]> {
    const rows = await this.catalogue(
      `SELECT p.relname AS table, a.attname AS "from", pa.attname AS "to", c.confdeltype = 'c' AS cascade,
              array_length(c.conkey, 1) > 1 AS composite
       FROM pg_constraint c JOIN pg_class p ON p.oid = c.confrelid
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
       JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = c.confkey[1]
       WHERE c.contype = 'f' AND c.conrelid = to_regclass($1) ORDER BY c.conname`,
      [table],
    );
    return rows.map((r) => ({
      table: r.table as string,
      from: r.from as string,
      to: r.to as string,
      cascade: !!r.cascade,
      composite: !!r.composite,
    }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const listener = this.listener;
    this.listener = undefined;
    await Promise.all([listener?.end().catch(() => undefined), this.pool.end().catch(() => undefined)]);
  }
}

/**
 * Connection settings. Types: int8 and numeric become numbers (counts, sums), booleans 1/0 and JSON stays text, as
 * SQLite gives them.
 */
function connectionOptions(url: string): pg.ClientConfig {
  return {
    connectionString: url,
    types: {
      getTypeParser: ((oid: number, format?: string) => {
        if (oid === 20 || oid === 1700) return (v: string) => Number(v);
        if (oid === 16) return (v: string) => (v === 't' ? 1 : 0);
        if (oid === 114 || oid === 3802) return (v: string) => v;
        return pg.types.getTypeParser(oid, format as 'text');
      }) as typeof pg.types.getTypeParser,
    },
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    lock_timeout: STATEMENT_TIMEOUT_MS - 5_000,
    application_name: 'weft',
  };
}

type Result = { rows: Row[]; rowCount: number };

function resultOf(r: pg.QueryResult | pg.QueryResult[]): Result {
  const last = Array.isArray(r) ? r[r.length - 1]! : r;
  return { rows: last.rows ?? [], rowCount: last.rowCount ?? 0 };
}

/** A statement waiting for the end of the turn to be sent on its transaction's connection. */
interface Pending {
  s: Statement | string;
  values: unknown[];
  resolve: (r: Result) => void;
  reject: (e: unknown) => void;
}

/** What pg keeps of a connection (the statements it has prepared there, the socket). */
interface PgConnection {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  stream: { cork?(): void; uncork?(): void };
  bind(config: { statement: string; values: unknown[] }): void;
  describe(config: { type: 'P'; name: string }): void;
  execute(config: { portal: string }): void;
  sync(): void;
}

const pending = new WeakMap<pg.PoolClient, Pending[]>();

/**
 * A statement on a transaction's connection: sent when the current turn of the event loop ends, with every other
 * statement issued on that connection in the same turn, in order, in one write. Runs of prepared statements the
 * connection has already prepared go as one extended-protocol batch with a single Sync (one answer from the server,
 * one round trip; the first failure ends the batch, and every statement of it fails with that error — inside a
 * transaction, which the failure aborts, none of them would count anyway). Others go as pg sends them, pipelined.
 */
function pipelined(client: pg.PoolClient, s: Statement | string, values: unknown[]): Promise<Result> {
  return new Promise<Result>((resolve, reject) => {
    let queue = pending.get(client);
    if (!queue) {
      pending.set(client, (queue = []));
      process.nextTick(() => {
        pending.delete(client);
        send(client, queue!);
      });
    }
    queue.push({ s, values, resolve, reject });
  });
}

function send(client: pg.PoolClient, queue: Pending[]): void {
  const connection = (client as unknown as { connection: PgConnection }).connection;
  const one = (p: Pending) =>
    (typeof p.s === 'string'
      ? client.query(p.s, p.values.length ? p.values : undefined)
      : client.query({ name: p.s.name, text: p.s.text, values: p.values })
    ).then((r) => p.resolve(resultOf(r as pg.QueryResult | pg.QueryResult[])), p.reject);
  let run: Array<Pending & { s: Statement }> = [];
  const flush = () => {
    if (run.length > 1) void client.query(new BatchQuery(run) as unknown as pg.QueryConfig);
    else run.forEach((p) => void one(p));
    run = [];
  };
  connection.stream.cork?.();
  try {
    for (const p of queue) {
      const s = p.s;
      const ready =
        typeof s !== 'string' &&
        (connection.parsedStatements[s.name] ?? connection.submittedNamedStatements[s.name]) === s.text &&
        p.values.every((v) => v === null || v === undefined || typeof v === 'string' || typeof v === 'number');
      if (ready) run.push(p as Pending & { s: Statement });
      else {
        flush();
        void one(p);
      }
    }
    flush();
  } finally {
    connection.stream.uncork?.();
  }
}

/**
 * Prepared statements run as one batch: Bind, Describe and Execute of each, then one Sync. pg's Query gathers the
 * results (one per statement, as for a script of several); the batch is one query to pg's pipelined connection.
 */
class BatchQuery extends (pg.Query as unknown as new (config: pg.QueryConfig) => {
  callback?: (err: Error | null, res?: pg.QueryResult | pg.QueryResult[]) => void;
  handleCommandComplete(msg: unknown, connection: unknown): void;
  _results: pg.QueryResult | pg.QueryResult[];
}) {
  /** statements that completed (those before a failure ran: theirs are answered, the rest fail with it) */
  private completed = 0;

  constructor(private readonly items: Array<Pending & { s: Statement }>) {
    super({ text: 'batch' });
    this.callback = (err, res) => {
      const results = err ? this._results : res!;
      const list = Array.isArray(results) ? results : [results];
      items.forEach((p, i) => (err && i >= this.completed ? p.reject(err) : p.resolve(resultOf(list[i]!))));
    };
  }

  override handleCommandComplete(msg: unknown, connection: unknown): void {
    super.handleCommandComplete(msg, connection);
    this.completed++;
  }

  submit(connection: PgConnection): null {
    for (const p of this.items) {
      connection.bind({ statement: p.s.name, values: p.values.map((v) => (v === null || v === undefined ? null : String(v))) });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '' });
    }
    connection.sync();
    return null;
  }
}

/** Connection-level failures: the server is down, restarting or unreachable (class 08, 57P0x, 53300 too many clients). */
const UNAVAILABLE = /^(08|57P0|53300|ECONN|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE)/;
const LOST =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable|Client has encountered a connection error/i;

function unavailable(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  return UNAVAILABLE.test(String(err?.code ?? '')) || LOST.test(String(err?.message ?? ''));
}

/** The trigger functions behind `watch` and `watchTables`. */
const NOTIFY_FUNCTIONS = `
CREATE OR REPLACE FUNCTION weft_notify_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('${CHANGES}', TG_TABLE_NAME || ':' || lower(TG_OP) || ':' || CASE TG_OP WHEN 'INSERT' THEN NEW.id ELSE OLD.id END);
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
