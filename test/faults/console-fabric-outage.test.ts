// The console's router views (network.fabric, network.live) when PostgreSQL goes away: a clean 503 in the console's
// error shape (no stack trace), the process serves on (the API's health answer), and once the database is back the
// same procedures answer again by themselves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import { ConsoleClient } from '../support/consoleTrpc';
import { startPostgres, type PostgresServer } from '../support/postgres';

let pg: PostgresServer;
let app: TestApp;
let ui: ConsoleClient;

beforeAll(async () => {
  pg = await startPostgres();
  app = await startTestApp({ database: await pg.createDatabase(), consoleAddress: '127.0.0.1:0' });
  ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await pg?.stop();
});

describe("the console's router views when PostgreSQL goes away", { timeout: 120_000 }, () => {
  it('answers 503 while it is down and the same views once it is back', async () => {
    const before = await ui.ok('query', 'network.fabric');
    expect(before.routers).toEqual([expect.objectContaining({ id: app.router!.id, builtin: true })]);

    await pg.halt();
    for (const path of ['network.fabric', 'network.live']) {
      const r = await ui.query(path);
      expect(r.status, path).toBe(503);
      expect(r.error?.data.code, path).toBe('SERVICE_UNAVAILABLE');
      expect(JSON.stringify(r.error), path).not.toMatch(/\bat .+\.(ts|js):\d+/);
    }
    // the process serves on: a route that needs no database answers
    const anon = app.client();
    expect((await anon.get('/version', { api: 'root' })).status).toBe(200);
    await anon.close();

    await pg.resume();
    await expect.poll(async () => (await ui.query('network.fabric')).status, { timeout: 60_000, interval: 100 }).toBe(200);
    expect(await ui.ok('query', 'network.fabric')).toEqual({ ...before, routers: [expect.objectContaining({ id: app.router!.id, builtin: true })] });
    expect((await ui.query('network.live')).status).toBe(200);
  });
});
