import Database from 'better-sqlite3';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { perCore, type Core } from '../core';
import { ApiError, conflict, rateLimited } from '../errors';

/**
 * Database snapshots (SQLite): a consistent copy of the SQLite file made with SQLite's online backup API into
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
    if (!this.core.store.backup) {
      throw conflict('NOT_SUPPORTED', 'The database is PostgreSQL: back it up with its own tools (pg_dump, replication)');
    }
    const now = this.core.clock.now();
    if (this.running) throw new ApiError('RATE_LIMITED', 429, 'A database snapshot is already being written', undefined, { 'retry-after': '1' });
    const wait = this.lastAt === undefined ? 0 : this.lastAt + this.minIntervalMs() - now.getTime();
    if (wait > 0) throw rateLimited(wait / 1000);
    this.lastAt = now.getTime();
    const file = join(this.dir, `weft-${now.toISOString().replace(/[:.]/g, '-')}.db`);
    this.running = this.write(file).finally(() => (this.running = undefined));
    return this.running;
  }

  /** Waits for a snapshot being written (shutdown). */
  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  private async write(file: string): Promise<string> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const partial = `${file}.partial`;
    try {
      await this.core.store.backup!(partial);
      // a self-contained file: the copy inherits WAL mode, which would need -wal/-shm files beside it
      const copy = new Database(partial);
      try {
        copy.pragma('journal_mode = DELETE');
      } finally {
        copy.close();
      }
      renameSync(partial, file);
    } catch (e) {
      for (const f of [partial, `${partial}-wal`, `${partial}-shm`]) rmSync(f, { force: true });
      throw e;
    }
    this.core.log.info({ file }, 'database snapshot written');
    return file;
  }
}

const DEFAULT_SNAPSHOT_INTERVAL_MS = 60_000;

/** The database snapshots of a core (at most one per `snapshotIntervalMs`, default a minute). */
export const snapshotsOf = perCore((core) => new Snapshots(core, () => core.config.snapshotIntervalMs ?? DEFAULT_SNAPSHOT_INTERVAL_MS));
