import { afterAll, beforeAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startApp, type App, type StartOptions } from '../../src/main/app';
import { ApiClient } from './client';

export const ADMIN_USER = 'admin';
export const ADMIN_PASSWORD = 'admin-password-1';

export function tempDir(prefix = 'weft-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestApp extends App {
  client(): ApiClient;
  /** a client already logged in as the default admin */
  adminClient(): Promise<ApiClient>;
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

/** Starts the real app on 127.0.0.1 port 0 with a temp data dir (or the given one). */
export async function startTestApp(opts: StartOptions = {}): Promise<TestApp> {
  const dataDir = opts.dataDir ?? tempDir();
  const app = await startApp({
    apiAddress: '127.0.0.1:0',
    routerListener: 'tls:127.0.0.1:0',
    logger: pino({ level: process.env.WEFT_TEST_LOG ?? 'silent' }),
    ...opts,
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
export function useTestApp(use: (app: TestApp, admin: ApiClient) => void, opts: StartOptions = {}): void {
  let app: TestApp | undefined;
  let admin: ApiClient | undefined;
  beforeAll(async () => {
    app = await startTestApp(opts);
    admin = await app.adminClient();
    use(app, admin);
  });
  afterAll(async () => {
    await admin?.close();
    await app?.stop();
  });
}
