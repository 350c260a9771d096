// A SQLite store and a PostgreSQL store (its own database on the test server) for the duration of a test file, both
// migrated with `migrations` and prepared by `seed`, for tests that run the same checks on both stores.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { Migration, Store } from '../../src/main/core/store/db';
import { PostgresStore } from '../../src/main/core/store/postgres';
import { SqliteStore } from '../../src/main/core/store/sqlite';
import { startPostgres, type PostgresServer } from './postgres';

export interface BothStores {
  sqlite: SqliteStore;
  postgres: PostgresStore;
  /** the PostgreSQL server (to stop and start it in fault tests) */
  server: PostgresServer;
}

export const STORE_KINDS = ['sqlite', 'postgres'] as const;

/** Filled once the file's beforeAll has run; `stores[kind]` for describe.each(STORE_KINDS). */
export function useBothStores(migrations: Migration[], seed?: (store: Store) => Promise<void>): BothStores {
  const stores = {} as BothStores;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'weft-stores-'));
    stores.sqlite = new SqliteStore(join(dir, 'weft.db'));
    stores.server = await startPostgres();
    stores.postgres = new PostgresStore(await stores.server.createDatabase());
    for (const s of [stores.sqlite, stores.postgres]) {
      await s.migrate(migrations);
      await seed?.(s);
    }
  }, 120_000);
  afterAll(async () => {
    await stores.sqlite?.close();
    await stores.postgres?.close();
    await stores.server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return stores;
}
