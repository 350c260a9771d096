import type { SqlDialect } from './sqlDialect';

export type Row = Record<string, unknown>;
export type ChangeOp = 'insert' | 'delete' | 'update';
export type ChangeListener = (ids: string[]) => void;
export type Dialect = SqlDialect['name'];

/** A table's column as the schema declares it (`pk`: its position in the primary key, 0 if not in it). */
export interface ColumnInfo {
  name: string;
  notnull: boolean;
  pk: number;
}

/** A single-column foreign key (`to`: the parent's column). */
export interface ForeignKeyInfo {
  table: string;
  from: string;
  to: string;
  cascade: boolean;
  /** more than one column: not checked by the single-column consumers */
  composite: boolean;
}

/** What a migration writes to: SQL scripts in SQLite's dialect (the PostgreSQL store translates their DDL). */
export interface MigrationTarget {
  dialect: Dialect;
  /** the helpers for what the dialects write differently (see Store.sql) */
  sql: SqlDialect;
  exec(script: string): void;
  /** a script in the store's own dialect, run as it is (for what only one of them has) */
  native(script: string): void;
}

/** A numbered schema change (store/migrations, and the ones resource types declare). */
export interface Migration {
  version: number;
  name: string;
  up(db: MigrationTarget): void;
}

/** One statement of a `batch`: SQL as `allSql` takes it, and its parameters. */
export interface BatchStatement {
  sql: string;
  params?: readonly unknown[];
}

export interface RunResult {
  /** rows inserted, updated or deleted by the statement */
  changes: number;
}

/**
 * The database the core runs on: SQLite (store/sqlite.ts, the default: one file, one process) or PostgreSQL
 * (store/postgres.ts: several Weft nodes on one database). Statements are SQL both accept, with positional `?`
 * parameters, and `sql`'s helpers for the few constructs they write differently (JSON arrays, LIKE, booleans as
 * values, NULL placement in ORDER BY, the time). Booleans are passed as 1/0 and dates as ISO strings.
 */
/**
 * Told of every transaction of its own (not savepoints) once it ended: how long it waited for its turn (SQLite's one
 * connection; PostgreSQL's pool, the write lock and BEGIN) and how long it ran, and whether it committed.
 */
export type TransactionObserver = (kind: 'read' | 'write', waitSeconds: number, runSeconds: number, committed: boolean) => void;

/** Runs `fn` (which calls `started` once its turn came) and tells `observer` the transaction's wait and run times. */
export async function observed<T>(
  observer: TransactionObserver | undefined,
  kind: 'read' | 'write',
  fn: (started: () => void) => Promise<T>,
): Promise<T> {
  if (!observer) return fn(() => undefined);
  const t0 = performance.now();
  let t1: number | undefined;
  let committed = false;
  try {
    const out = await fn(() => (t1 = performance.now()));
    committed = true;
    return out;
  } finally {
    const t2 = performance.now();
    observer(kind, ((t1 ?? t2) - t0) / 1000, (t2 - (t1 ?? t2)) / 1000, committed);
  }
}

export interface Store {
  readonly dialect: Dialect;
  /** told of each transaction's wait and run times (metrics) */
  observeTransactions?: TransactionObserver;
  /** this store's SQL helpers (store/sqlDialect.ts) */
  readonly sql: SqlDialect;
  /** false once closed */
  readonly open: boolean;
  /**
   * Counts writes to the database, except those touching only VOLATILE_TABLES and `touchSql`: anything computed from
   * the database (and cached) while it keeps its value is still what the database holds. On PostgreSQL it also counts
   * the writes other nodes commit.
   */
  readonly generation: number;
  allSql<T = Row>(sql: string, ...params: unknown[]): Promise<T[]>;
  getSql<T = Row>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  runSql(sql: string, ...params: unknown[]): Promise<RunResult>;
  /**
   * Statements that do not depend on each other's results, run as `allSql` runs each (their rows, in order); the
   * first failure rejects the batch (inside a transaction, the transaction fails as with any failed statement). On
   * PostgreSQL, inside a transaction, they go to the server together: one round trip. SQLite runs them in turn.
   */
  batch(statements: readonly BatchStatement[]): Promise<Row[][]>;
  /**
   * A write whose result the code does not need, in its place among the transaction's statements: on PostgreSQL, in a
   * transaction (not in a savepoint), it is not waited for — it goes to the server with the statements after it, or
   * with COMMIT — and its failure fails the transaction (raised in place of the errors it causes after it). Elsewhere,
   * and on SQLite, it runs as `runSql` does.
   */
  queueSql(sql: string, ...params: unknown[]): Promise<void>;
  /** a write that changes nothing a cached computation presents: it leaves `generation` alone */
  touchSql(sql: string, ...params: unknown[]): Promise<RunResult>;
  /** a group of reads on one consistent snapshot */
  read<T>(fn: () => Promise<T>): Promise<T>;
  /** a write transaction (one writer at a time); nested calls join the outer one (savepoints) */
  tx<T>(fn: () => Promise<T>): Promise<T>;
  /** a write transaction that replaces secrets: the old values must not linger in the database's files */
  secureTx<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Calls `listener` with the ids of rows of `table` inserted, deleted or updated by any statement — cascades included, on
   * PostgreSQL by any node — once the transaction that did it has committed. Returns unwatch.
   */
  watch(table: string, op: ChangeOp, listener: ChangeListener): () => void;
  /** Calls `listener` once after each committed write that changed rows of any of `tables`. Returns unwatch. */
  watchTables(tables: string[], listener: () => void): () => void;
  /**
   * Calls `listener` when changes may have gone unreported to `watch`/`watchTables` (PostgreSQL: the connection that
   * hears other nodes' changes was lost, and is back): what it keeps from the database must be read again.
   */
  watchGaps(listener: () => void): () => void;
  /** Applies the migrations not yet applied, in version order, each in its own transaction; returns their versions. */
  migrate(list?: readonly Migration[]): Promise<number[]>;
  /**
   * Runs `fn` (inserts of rows copied from another store) in one write transaction with the schema's triggers off,
   * then brings back what they maintain by themselves (SQLite's text indexes, PostgreSQL's identity sequences) and
   * checks every foreign key. `weft db copy` uses it.
   */
  bulkLoad(fn: () => Promise<void>): Promise<void>;
  /** The schema's own tables (not the store's internals such as SQLite's FTS shadow tables), by name. */
  tables(): Promise<string[]>;
  columns(table: string): Promise<ColumnInfo[]>;
  foreignKeys(table: string): Promise<ForeignKeyInfo[]>;
  /** A consistent copy of the whole database in `file` (SQLite only: PostgreSQL is backed up by its own tools). */
  backup?(file: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Tables whose rows no reused reply presents (Dial/Bind sessions, the audit log, single-use marks, change events): writes that touch only them leave
 * `generation` alone, so a busy session or audit table does not flush the caches built on it.
 */
export const VOLATILE_TABLES: ReadonlySet<string> = new Set(['sessions', 'audit_log', 'used_once', 'outbox', 'event_cursors']);

const WRITE_TARGET = /^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+(?:main\.)?["`]?(\w+)["`]?[\s(]/i;

/** 'read': changes nothing; 'volatile': writes only a VOLATILE_TABLES table; 'stable': anything else. */
export type WriteEffect = 'read' | 'volatile' | 'stable';

/**
 * What a run of `sql` changes (see `generation`), told once per statement; `readsOnly` is the store's own judgement.
 * A write whose target cannot be told counts as 'stable'.
 */
export function writeEffect(sql: string, readsOnly: boolean): WriteEffect {
  if (readsOnly) return 'read';
  const table = WRITE_TARGET.exec(sql)?.[1];
  return table && VOLATILE_TABLES.has(table) ? 'volatile' : 'stable';
}

/** A parameter as both stores take it: booleans as 1/0, dates as ISO strings. */
export function storeParam(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Date) return v.toISOString();
  return v;
}

/** An identifier quoted for SQL (both dialects). */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Raised when the database cannot serve right now (answered 503, not 500). */
export class StoreUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
}

/** The constraint a failed write broke, whatever the store (`column`: the first column of a unique one). */
export function constraintBroken(err: unknown): { kind: 'unique' | 'foreign-key'; column?: string } | undefined {
  const e = err as { code?: unknown; message?: unknown; detail?: unknown } | null;
  if (e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return { kind: 'unique', column: /constraint failed: \w+\.(\w+)/.exec(String(e.message))?.[1] };
  }
  // PostgreSQL: unique_violation, its detail "Key (name)=(value) already exists."
  if (e?.code === '23505') return { kind: 'unique', column: /^Key \(([a-z_]+)/.exec(String(e.detail))?.[1] };
  if (e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || e?.code === '23503') return { kind: 'foreign-key' };
  return undefined;
}
