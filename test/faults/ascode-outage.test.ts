// A network import when PostgreSQL goes away: halted before the import, and its Weft backends terminated while a
// large import runs. Each import answers 200 (all of it written) or 503 in the envelope (none of it), the process
// keeps serving, and the same import succeeds by itself once the database is back.
import pg_ from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient, Resp } from '../support/client';
import { startPostgres, type PostgresServer } from '../support/postgres';

let pg: PostgresServer;
let database: string;
let app: TestApp;
let admin: ApiClient;

beforeAll(async () => {
  pg = await startPostgres();
  database = await pg.createDatabase();
  app = await startTestApp({ database });
  admin = await app.adminClient();
}, 120_000);
afterAll(async () => {
  await admin?.close();
  await app?.stop();
  await pg?.stop();
});

const doc = (prefix: string, n: number) => ({
  services: Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${i}`, roleAttributes: [prefix], encryptionRequired: true })),
  servicePolicies: [{ name: `${prefix}-dial`, type: 'Dial', semantic: 'AnyOf', identityRoles: ['#all'], serviceRoles: [`#${prefix}`] }],
});

async function stored(prefix: string): Promise<number> {
  return (await admin.get(`/services?limit=1&filter=${encodeURIComponent(`name contains "${prefix}-"`)}`)).body.meta.pagination.totalCount;
}

/** Tries until the database answers again (the store reconnects by itself); every answer is 200 or 503. */
async function importUntilDone(body: unknown): Promise<Resp> {
  for (let i = 0; i < 400; i++) {
    const r = await admin.post('/ascode/import', body);
    if (r.status === 200) return r;
    expect(r.status, r.text).toBe(503);
    expect(r.body.error.code).toBe('SERVICE_UNAVAILABLE');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the import never succeeded after the database came back');
}

describe('network import when PostgreSQL goes away', { timeout: 120_000 }, () => {
  it('halted: 503 in the envelope, nothing written, the process serves on; back: the same import succeeds', async () => {
    await pg.halt();
    const r = await admin.post('/ascode/import', doc('halted', 20));
    expect(r.status, r.text).toBe(503);
    expect(r.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(r.text).not.toMatch(/\bat .+\.(ts|js):\d+/);
    await pg.resume();
    expect((await importUntilDone(doc('halted', 20))).body.data.counts.create).toBe(21);
    expect(await stored('halted')).toBe(20);
  });

  it('backends terminated during a large import: all of it or none of it, then it succeeds', async () => {
    const killer = new pg_.Client({ connectionString: database });
    await killer.connect();
    const body = doc('killed', 300);
    const pending = admin.post('/ascode/import', body);
    let settled = false;
    void pending.finally(() => (settled = true));
    let kills = 0;
    while (!settled && kills < 50) {
      kills++;
      await killer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'weft' AND pid <> pg_backend_pid()");
    }
    const r = await pending;
    await killer.end();
    if (r.status === 200) {
      expect(await stored('killed')).toBe(300);
    } else {
      expect(r.status, r.text).toBe(503);
      expect(r.body.error.code).toBe('SERVICE_UNAVAILABLE');
      // nothing partial: the transaction went whole
      expect(await stored('killed').catch(() => 0)).toBe(0);
    }
    const done = await importUntilDone(body);
    expect(done.body.data.counts.create + done.body.data.counts.unchanged).toBe(301);
    expect(await stored('killed')).toBe(300);
  });
});
