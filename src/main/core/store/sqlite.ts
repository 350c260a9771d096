import Database from 'better-sqlite3';
import { ChangeListeners } from './changeListeners';
import { Frame, Holders } from './holders';
import { migrations, type Migration } from './migrations/index';
import {
  quoteIdent as quote,
  storeParam,
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
import { SQLITE_SQL } from './sqlDialect';

/**
 * The SQLite store (the default). Statements are written as SQL and executed on better-sqlite3 (synchronous, no
 * thread hop) through a cache of prepared statements. One connection: while a transaction is open — its callback
 * awaits — every statement from outside it waits for it to end (see Holders).
 */
export class SqliteStore implements Store {
  readonly dialect = 'sqlite';
  observeTransactions?: TransactionObserver;
  readonly sql = SQLITE_SQL;
  readonly sqlite: Database.Database;
  /** prepared statements by SQL, with what a run of each changes (see `generation`) */
  private readonly statements = new Map<string, Prepared>();
  private stableWrites = 0;
  private readonly listeners = new ChangeListeners((key, table, what) => this.installTriggers(key, table, what));
  /** ids changed by the running transaction, per "table:op", delivered when it commits */
  private changed = new Map<string, Set<string>>();
  /** the connection: code outside every transaction belongs to it */
  private readonly connection = new Frame<undefined>(undefined, undefined);
  /** who holds the connection (a transaction, its savepoints), who waits for it */
  private readonly holders = new Holders<undefined>(this.connection);
  /** savepoints opened so far (their names) */
  private savepoints = 0;
  /**
   * Names of savepoints released, used again: the control statements are prepared once per name, so fresh names for
   * every savepoint would compile three statements each time and keep them all.
   */
  private readonly freeSavepoints: string[] = [];
  private readonly controls = new Map<string, Database.Statement>();

  constructor(readonly file: string) {
    this.sqlite = new Database(file);
    this.sqlite.pragma('journal_mode = WAL');
    this.sqlite.pragma('synchronous = NORMAL');
    this.sqlite.pragma('foreign_keys = ON');
    this.sqlite.pragma('busy_timeout = 5000');
    this.sqlite.function('weft_changed', { deterministic: false, varargs: false }, (key: unknown, id: unknown) => {
      let ids = this.changed.get(String(key));
      if (!ids) this.changed.set(String(key), (ids = new Set()));
      ids.add(String(id));
      return null;
    });
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

  /**
   * Reports a key's changes to `weft_changed` through TEMP triggers, on this connection only: the database file is
   * unchanged, other tools opening it see no trigger. Cascaded changes fire them too.
   */
  private installTriggers(key: string, table: string, what: ChangeOp | 'touched'): void {
    if (what !== 'touched') {
      this.sqlite.exec(`CREATE TEMP TRIGGER IF NOT EXISTS weft_watch_${table}_${what} AFTER ${what.toUpperCase()} ON main.${table}
        BEGIN SELECT weft_changed('${key}', ${what === 'insert' ? 'NEW' : 'OLD'}.id); END`);
      return;
    }
    for (const op of ['INSERT', 'UPDATE', 'DELETE']) {
      this.sqlite.exec(`CREATE TEMP TRIGGER IF NOT EXISTS weft_touch_${table}_${op.toLowerCase()} AFTER ${op} ON main.${table}
        BEGIN SELECT weft_changed('${key}', ''); END`);
    }
  }

  /** Delivers the changes of a committed write (outside any transaction). */
  private flushChanges(): void {
    if (!this.changed.size || this.sqlite.inTransaction) return;
    this.deliver(this.takeChanges());
  }

  /** The changes recorded so far (those of a transaction that has just committed), to deliver once it is let go. */
  private takeChanges(): Map<string, Set<string>> {
    const changed = this.changed;
    this.changed = new Map();
    return changed;
  }

  private deliver(changed: Map<string, Set<string>> | undefined): void {
    if (changed) for (const [key, ids] of changed) this.listeners.deliver(key, [...ids]);
  }

  /**
   * Runs `fn` as a transaction of its own, or as a savepoint inside the caller's, once it may take the connection
   * (see Holders: one connection, so an open transaction must not take in another request's statements). Its changes
   * are delivered once it has let the connection go. `before`/`after` run around a transaction of its own.
   */
  private transaction<T>(fn: () => Promise<T>, mode: 'IMMEDIATE' | 'DEFERRED', before?: () => void, after?: () => void): Promise<T> {
    const own = this.holders.current() === this.connection;
    if (!own) return this.turn(fn, mode, () => undefined, before, after);
    return observed(this.observeTransactions, mode === 'DEFERRED' ? 'read' : 'write', (started) => this.turn(fn, mode, started, before, after));
  }

  private async turn<T>(
    fn: () => Promise<T>,
    mode: 'IMMEDIATE' | 'DEFERRED',
    started: () => void,
    before?: () => void,
    after?: () => void,
  ): Promise<T> {
    const parent = this.holders.current()!;
    const own = parent === this.connection;
    const frame = await this.holders.enter(parent);
    started();
    let committed: Map<string, Set<string>> | undefined;
    try {
      if (own) before?.();
      try {
        const out = await this.holders.run(frame, () => (own ? this.begin(fn, mode) : this.savepoint(fn)));
        if (own) committed = this.takeChanges();
        return out;
      } finally {
        if (own) after?.();
      }
    } finally {
      this.holders.leave(frame);
      // the async context costs every promise of the process something: it is tracked only while a frame holds the connection
      if (this.holders.idle) this.holders.pause();
      this.deliver(committed);
    }
  }

  /** A transaction-control statement, prepared once (compiling BEGIN/COMMIT on every transaction shows in profiles). */
  private control(sql: string): void {
    let st = this.controls.get(sql);
    if (!st) this.controls.set(sql, (st = this.sqlite.prepare(sql)));
    st.run();
  }

  /** BEGIN (`mode`), `fn`, COMMIT. A failure rolls back, and counts as a write (what was read inside is gone). */
  private async begin<T>(fn: () => Promise<T>, mode: 'IMMEDIATE' | 'DEFERRED'): Promise<T> {
    this.control(`BEGIN ${mode}`);
    try {
      const out = await fn();
      await this.act(() => this.control('COMMIT'));
      return out;
    } catch (e) {
      this.stableWrites++;
      await this.act(() => {
        this.changed.clear();
        if (this.sqlite.inTransaction) this.control('ROLLBACK');
      });
      throw e;
    }
  }

  /**
   * A savepoint inside the running transaction (its name unique among the savepoints open); the changes recorded
   * inside it go with it.
   */
  private async savepoint<T>(fn: () => Promise<T>): Promise<T> {
    const name = this.freeSavepoints.pop() ?? `weft_${++this.savepoints}`;
    const outer = this.changed;
    this.changed = new Map();
    this.control(`SAVEPOINT ${name}`);
    try {
      const out = await fn();
      await this.act(() => this.control(`RELEASE ${name}`));
      this.freeSavepoints.push(name);
      for (const [key, ids] of this.changed) {
        const into = outer.get(key);
        if (into) for (const id of ids) into.add(id);
        else outer.set(key, ids);
      }
      return out;
    } catch (e) {
      this.stableWrites++;
      await this.act(() => {
        if (!this.sqlite.inTransaction) return;
        this.control(`ROLLBACK TO ${name}`);
        this.control(`RELEASE ${name}`);
      });
      this.freeSavepoints.push(name);
      throw e;
    } finally {
      this.changed = outer;
    }
  }

  /** Runs a synchronous step on the connection when the running code's turn comes (at once when it may act now). */
  private act<R>(step: () => R): R | Promise<R> {
    return this.holders.act(this.holders.current(), step);
  }

  get open(): boolean {
    return this.sqlite.open;
  }

  /** Applies the migrations not yet applied, in version order, each in its own transaction (default: store/migrations). */
  async migrate(list: readonly Migration[] = migrations): Promise<number[]> {
    return this.act(() => this.migrateNow(list));
  }

  private migrateNow(list: readonly Migration[]): number[] {
    this.sqlite.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const applied = new Set((this.sqlite.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
    const done: number[] = [];
    for (const m of [...list].sort((a, b) => a.version - b.version)) {
      if (applied.has(m.version)) continue;
      this.sqlite.transaction(() => {
        m.up({ dialect: 'sqlite', sql: SQLITE_SQL, exec: (sql) => void this.sqlite.exec(sql), native: (sql) => void this.sqlite.exec(sql) });
        this.sqlite
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(m.version, m.name, new Date().toISOString());
      })();
      done.push(m.version);
    }
    return done;
  }

  /**
   * Counts writes to the database through this store, except those touching only VOLATILE_TABLES and `touchSql`:
   * anything computed from the database (and cached) while it keeps its value is still what the database holds.
   * Rolled back transactions count too (what was read inside them is gone).
   */
  get generation(): number {
    return this.stableWrites;
  }

  /**
   * The cached prepared statement of `sql`. Statements that return rows run in raw mode (arrays), and their rows
   * are made by a function compiled for their columns: several times faster than better-sqlite3 building objects
   * key by key, and the objects get one hidden class (faster to read afterwards).
   */
  private prepared(sql: string): Prepared {
    let p = this.statements.get(sql);
    if (!p) {
      const st = this.sqlite.prepare(sql);
      p = { st, effect: writeEffect(sql, st.readonly), columns: -1, make: undefined };
      if (st.reader) st.raw(true);
      this.statements.set(sql, p);
    }
    if (p.effect === 'stable') this.stableWrites++;
    return p;
  }

  private rows(p: Prepared, params: unknown[]): Row[] {
    if (!p.st.reader) return p.st.all(...params) as Row[]; // better-sqlite3 says why it cannot
    const arrays = p.st.all(...params) as unknown[][];
    if (!arrays.length) return [];
    const make = rowMaker(p, arrays[0]!.length);
    const out = new Array<Row>(arrays.length);
    for (let i = 0; i < arrays.length; i++) out[i] = make(arrays[i]!);
    return out;
  }

  private row(p: Prepared, params: unknown[]): Row | undefined {
    if (!p.st.reader) return p.st.get(...params) as Row | undefined;
    const a = p.st.get(...params) as unknown[] | undefined;
    return a === undefined ? undefined : rowMaker(p, a.length)(a);
  }

  /**
   * A write that changes nothing a cached computation presents (e.g. an API session's last activity time, which
   * only the session views show, and they are never cached): it leaves `generation` alone.
   */
  async touchSql(sql: string, ...params: unknown[]): Promise<RunResult> {
    return this.act(() => {
      const before = this.stableWrites;
      const r = this.run(sql, params);
      this.stableWrites = before;
      return r;
    });
  }

  /** SQL with positional parameters (booleans become 1/0, dates ISO strings). */
  async allSql<T = Row>(sql: string, ...params: unknown[]): Promise<T[]> {
    return this.act(() => this.rows(this.prepared(sql), params.map(storeParam)) as T[]);
  }
  async getSql<T = Row>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return this.act(() => this.row(this.prepared(sql), params.map(storeParam)) as T | undefined);
  }
  async runSql(sql: string, ...params: unknown[]): Promise<RunResult> {
    return this.act(() => this.run(sql, params));
  }

  async queueSql(sql: string, ...params: unknown[]): Promise<void> {
    await this.runSql(sql, ...params);
  }

  async batch(statements: readonly BatchStatement[]): Promise<Row[][]> {
    const out: Row[][] = [];
    for (const { sql, params = [] } of statements) {
      out.push(
        await this.act(() => {
          const p = this.prepared(sql);
          const values = params.map(storeParam);
          if (p.st.reader) return this.rows(p, values);
          p.st.run(...values);
          this.flushChanges();
          return [];
        }),
      );
    }
    return out;
  }

  private run(sql: string, params: unknown[]): RunResult {
    const r = this.prepared(sql).st.run(...params.map(storeParam));
    this.flushChanges();
    return r;
  }

  /**
   * Runs a group of reads in one (deferred) read transaction: one consistent snapshot, and SQLite takes its WAL
   * read lock once instead of once per statement (a page plus its batched decorations is ~20% faster). Inside a
   * transaction it joins it.
   */
  async read<T>(fn: () => Promise<T>): Promise<T> {
    if (this.holders.current() !== this.connection) return fn();
    return this.transaction(fn, 'DEFERRED');
  }

  /** Runs fn in an IMMEDIATE transaction; nested calls join the outer one (savepoints). */
  async tx<T>(fn: () => Promise<T>): Promise<T> {
    return this.transaction(fn, 'IMMEDIATE');
  }

  async bulkLoad(fn: () => Promise<void>): Promise<void> {
    const triggers = await this.allSql<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'");
    const fts = (
      await this.allSql<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5(%'")
    ).map((r) => r.name);
    await this.transaction(
      async () => {
        for (const t of triggers) this.sqlite.exec(`DROP TRIGGER ${quote(t.name)}`);
        await fn();
        for (const t of triggers) this.sqlite.exec(t.sql);
        for (const name of fts) this.sqlite.exec(`INSERT INTO ${quote(name)}(${quote(name)}) VALUES ('rebuild')`);
        const broken = this.sqlite.prepare('PRAGMA foreign_key_check').all() as Array<{ table: string; parent: string }>;
        if (broken.length) throw new Error(`${broken.length} rows reference missing rows (first: ${broken[0]!.table} → ${broken[0]!.parent})`);
      },
      'IMMEDIATE',
      () => this.sqlite.pragma('foreign_keys = OFF'), // only outside a transaction; checked at the end instead
      () => this.sqlite.pragma('foreign_keys = ON'),
    );
  }

  async tables(): Promise<string[]> {
    return (
      await this.allSql<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name",
      )
    )
      .map((r) => r.name)
      .filter((name) => !/_fts(_\w+)?$/.test(name));
  }

  async columns(table: string): Promise<ColumnInfo[]> {
    return (await this.allSql<{ name: string; notnull: number; pk: number }>(`PRAGMA table_info(${quote(table)})`)).map((c) => ({
      name: c.name,
      notnull: !!c.notnull,
      pk: c.pk,
    }));
  }

  async foreignKeys(table: string): Promise<ForeignKeyInfo[]> {
    const fks = await this.allSql<{ id: number; seq: number; table: string; from: string; to: string | null; on_delete: string }>(
      `PRAGMA foreign_key_list(${quote(table)})`,
    );
    const out: ForeignKeyInfo[] = [];
    for (const fk of fks.filter((f) => f.seq === 0)) {
      out.push({
        table: fk.table,
        from: fk.from,
        to: fk.to ?? (await this.columns(fk.table)).find((c) => c.pk === 1)?.name ?? 'rowid',
        cascade: fk.on_delete === 'CASCADE',
        composite: fks.some((o) => o.id === fk.id && o.seq > 0),
      });
    }
    return out;
  }

  /**
   * Runs a write that replaces secrets: freed pages are zeroed, and the WAL is written back and emptied after, so the
   * old values do not linger in the files.
   */
  async secureTx<T>(fn: () => Promise<T>): Promise<T> {
    // inside a transaction, the outer one decides (transaction() joins it without these steps)
    return this.transaction(
      fn,
      'IMMEDIATE',
      () => this.sqlite.pragma('secure_delete = ON'),
      () => {
        try {
          this.sqlite.pragma('wal_checkpoint(TRUNCATE)');
        } finally {
          this.sqlite.pragma('secure_delete = OFF');
        }
      },
    );
  }

  /** A consistent copy of the database in `file` (SQLite's online backup). */
  async backup(file: string): Promise<void> {
    await this.sqlite.backup(file);
  }

  async close(): Promise<void> {
    await this.act(() => {
      this.statements.clear();
      if (this.sqlite.open) this.sqlite.close();
    });
  }
}

interface Prepared {
  st: Database.Statement;
  effect: WriteEffect;
  /** the column count `make` was compiled for */
  columns: number;
  make: ((a: unknown[]) => Row) | undefined;
}

/** The row constructor of a statement (recompiled should its columns change, e.g. `SELECT *` after a migration). */
function rowMaker(p: Prepared, columns: number): (a: unknown[]) => Row {
  if (p.make && p.columns === columns) return p.make;
  const names = p.st.columns().map((c) => c.name);
  // as better-sqlite3's objects: a later column of the same name wins
  p.make = new Function('a', `return {${names.map((n, i) => `${JSON.stringify(n)}: a[${i}]`).join(', ')}};`) as (a: unknown[]) => Row;
  p.columns = names.length;
  return p.make;
}
