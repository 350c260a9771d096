import Database from 'better-sqlite3';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { perCore, type Core } from '../core';
import { ApiError, rateLimited } from '../errors';
import type { Migration, Store } from '../store/db';
import { SqliteStore } from '../store/sqlite';
import { copyDatabase } from './databaseCopy';

/**
 * Writes a consistent copy of the whole network into the SQLite file `file` (absent), whatever the store: SQLite's
 * online backup API on SQLite; on PostgreSQL a new SQLite database with this Weft's schema (`migrations`) filled by
 * `copyDatabase` from one REPEATABLE READ snapshot. Either way a self-contained file (no WAL beside it) that
 * `weft db copy` or `weft restore` puts back on either store. Nothing is left at `file` when it fails.
 */
export async function writeSqliteCopy(store: Store, file: string, migrations: readonly Migration[] | undefined): Promise<void> {
  const leftovers = [file, `${file}-wal`, `${file}-shm`, `${file}-journal`];
  try {
    if (store.backup) await store.backup(file);
    else {
      if (!migrations) throw new Error('no schema to copy a PostgreSQL network into');
      const copy = new SqliteStore(file);
      try {
        await copy.migrate(migrations);
        await copyDatabase(store, copy);
      } finally {
        await copy.close();
      }
    }
    // a self-contained file: the copy inherits WAL mode, which would need -wal/-shm files beside it
    const db = new Database(file);
    try {
      db.pragma('journal_mode = DELETE');
    } finally {
      db.close();
    }
  } catch (e) {
    for (const f of leftovers) rmSync(f, { force: true });
    throw e;
  }
}

/**
 * Database snapshots: a consistent SQLite copy of the network (`writeSqliteCopy`, on either store) in
 * `<dataDir>/snapshots/`, at most one per `minIntervalMs` (by the core's clock) and one at a time.
 */
export class Snapshots {
  private running: Promise<string> | undefined;
  private lastAt: number | undefined;

  constructor(
    private readonly core: Core,
    private readonly minIntervalMs: () => number,
  ) {}

  get dir(): string {
    return join(this.core.config.dataDir, 'snapshots');
  }

  /** Writes a snapshot and returns its path. */
  async create(): Promise<string> {
    const now = this.core.clock.now();
    if (this.running) throw new ApiError('RATE_LIMITED', 429, 'A database snapshot is already being written', undefined, { 'retry-after': '1' });
    const wait = this.lastAt === undefined ? 0 : this.lastAt + this.minIntervalMs() - now.getTime();
    if (wait > 0) throw rateLimited(wait / 1000);
    const previous = this.lastAt;
    this.lastAt = now.getTime();
    const file = join(this.dir, `weft-${now.toISOString().replace(/[:.]/g, '-')}.db`);
    this.running = this.write(file)
      .catch((e: unknown) => {
        this.lastAt = previous; // a snapshot that failed (the database away) takes no turn: a retry may run at once
        throw e;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** Waits for a snapshot being written (shutdown). */
  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  private async write(file: string): Promise<string> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const partial = `${file}.partial`;
    await writeSqliteCopy(this.core.store, partial, this.core.config.schemaMigrations);
    renameSync(partial, file);
    this.core.log.info({ file }, 'database snapshot written');
    return file;
  }
}

const DEFAULT_SNAPSHOT_INTERVAL_MS = 60_000;

/** The database snapshots of a core (at most one per `snapshotIntervalMs`, default a minute). */
export const snapshotsOf = perCore((core) => new Snapshots(core, () => core.config.snapshotIntervalMs ?? DEFAULT_SNAPSHOT_INTERVAL_MS));
