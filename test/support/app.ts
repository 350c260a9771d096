import { afterAll, beforeAll, inject } from 'vitest';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startApp, type App, type StartOptions } from '../../src/main/app';
import { CLUSTER_KEY_FILE } from '../../src/main/core/ops/sharedFiles';
import { ApiClient } from './client';
import { createDatabase } from './postgres';

export const ADMIN_USER = 'admin';
export const ADMIN_PASSWORD = 'admin-password-1';

export function tempDir(prefix = 'weft-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

const databases = new Map<string, string>();

export interface TestApp extends App {
  client(): ApiClient;
  /** a client already logged in as the default admin */
  adminClient(): Promise<ApiClient>;
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

/**
 * A database for a test app: on the PostgreSQL run (WEFT_TEST_STORE=postgres) a new database on the run's server,
 * else undefined (SQLite in the data directory).
 */
export async function testDatabase(): Promise<string | undefined> {
  const admin = inject('postgresAdminUrl');
  return admin ? createDatabase(admin) : undefined;
}

/**
 * Starts the real app on 127.0.0.1 port 0 with a temp data dir (or the given one), on the run's store (a restart
 * with the same dataDir reuses the database it was given first).
 */
export async function startTestApp(opts: StartOptions = {}): Promise<TestApp> {
  const dataDir = opts.dataDir ?? tempDir();
  const database = opts.database ?? databases.get(dataDir) ?? (await testDatabase());
  if (database) databases.set(dataDir, database);
  const app = await startApp({
    apiAddress: '127.0.0.1:0',
    routerListener: 'tls:127.0.0.1:0',
    ctrlListener: 'tls:127.0.0.1:0',
    metricsAddress: '127.0.0.1:0',
    logger: pino({ level: process.env.WEFT_TEST_LOG ?? 'silent' }),
    ...opts,
    database,
    dataDir,
    env: { WEFT_ADMIN_USERNAME: ADMIN_USER, WEFT_ADMIN_PASSWORD: ADMIN_PASSWORD, ...(opts.env ?? {}) },
  });
  const ca = app.core.pki.caBundlePem;
  return Object.assign(app, {
    client: () => new ApiClient(app.urls.api, ca),
    adminClient: async () => {
      const c = new ApiClient(app.urls.api, ca);
      await c.login(ADMIN_USER, ADMIN_PASSWORD);
      return c;
    },
    stop: async ({ keepData = false } = {}) => {
      await app.close();
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

/**
 * Starts one app and an admin client for the whole test file (stopped afterwards) and hands them to `use`.
 */
export function useTestApp(use: (app: TestApp, admin: ApiClient) => unknown, opts: StartOptions = {}): void {
  let app: TestApp | undefined;
  let admin: ApiClient | undefined;
  beforeAll(async () => {
    app = await startTestApp(opts);
    admin = await app.adminClient();
    await use(app, admin);
  });
  afterAll(async () => {
    await admin?.close();
    await app?.stop();
  });
}

/** Gives a node's data directory (made if missing) the cluster key of the node that created the network. */
export function copyClusterKey(fromDataDir: string, toDataDir: string): void {
  mkdirSync(toDataDir, { recursive: true, mode: 0o700 });
  copyFileSync(join(fromDataDir, CLUSTER_KEY_FILE), join(toDataDir, CLUSTER_KEY_FILE));
  chmodSync(join(toDataDir, CLUSTER_KEY_FILE), 0o600);
}

/**
 * A second node of `first`'s network on the same database (its cluster key copied into a new data directory). One
 * built-in router per network name: it runs none unless `opts` say otherwise.
 */
export function joinedTestApp(first: TestApp, opts: StartOptions = {}): Promise<TestApp> {
  const dataDir = tempDir();
  copyClusterKey(first.dataDir, dataDir);
  return startTestApp({ database: first.config.store.url ?? undefined, dataDir, routerListener: 'off', ...opts });
}
