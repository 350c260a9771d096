// Advertising another address while PostgreSQL is away: the change fails with the store's error (503 from every adapter), nothing of it
// stays (the API's URL, the saved choice, the enrollment JWTs, the router's URL, no listener at the address), the
// process serves on, and the same change succeeds once the database is back.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advertiseNetworkAddress } from '../../src/main/core/dataPlane/index';
import { isStoreUnavailable } from '../../src/main/core/ops/index';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { startPostgres, type PostgresServer } from '../support/postgres';

let pg: PostgresServer;
let app: TestApp;
let admin: ApiClient;

beforeAll(async () => {
  pg = await startPostgres();
  app = await startTestApp({ database: await pg.createDatabase() });
  admin = await app.adminClient();
}, 120_000);
afterAll(async () => {
  await admin?.close();
  await app?.stop();
  await pg?.stop();
});

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, any>;
/** Whether something accepts TCP connections at host:port. */
const listening = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, host, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

describe('advertising an address when PostgreSQL goes away', { timeout: 120_000 }, () => {
  it('halted: a clean 503, nothing changed, the process serves on; back: the same change succeeds', async () => {
    const id = await admin.create('/identities', { name: 'phone', type: 'Device', isAdmin: false, enrollment: { ott: true } });
    const apiUrl = app.core.config.apiPublicUrl;
    const apiPort = Number(new URL(apiUrl).port);
    const routerUrl = app.router!.url;
    const change = () => advertiseNetworkAddress(app.core.system, app.networkAddress, { host: '127.0.0.2' });

    await pg.halt();
    // the store's error, which every adapter answers with 503 SERVICE_UNAVAILABLE
    await expect(change()).rejects.toSatisfy(isStoreUnavailable);
    await pg.resume();
    expect(app.core.config.apiPublicUrl).toBe(apiUrl);
    expect(app.router!.url).toBe(routerUrl);
    expect(existsSync(join(app.dataDir, 'network-address.json'))).toBe(false);
    expect(await listening('127.0.0.2', apiPort)).toBe(false);
    expect(claims((await admin.get(`/identities/${id}`)).body.data.enrollment.ott.jwt).iss).toBe(apiUrl);

    // the database is back: the same change goes through (the store reconnects by itself)
    let view: Awaited<ReturnType<typeof change>> | undefined;
    for (let i = 0; i < 200 && !view; i++) {
      view = await change().catch((e: unknown) => {
        expect(isStoreUnavailable(e)).toBe(true);
        return new Promise<undefined>((resolve) => setTimeout(resolve, 50));
      });
    }
    expect(view?.api.url).toBe(`https://127.0.0.2:${apiPort}`);
    expect(await listening('127.0.0.2', apiPort)).toBe(true);
    expect(claims((await admin.get(`/identities/${id}`)).body.data.enrollment.ott.jwt).iss).toBe(`https://127.0.0.2:${apiPort}`);
  });
});
