// A setup key redeemed while PostgreSQL goes away mid-redeem (halted from the write gate, after the use was counted
// and the identity row written, before the enrollment): the caller gets a clean 503 in the envelope, the process
// serves on, nothing partial is left (no use counted, no identity), and once the database is back the key redeems.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteSubscriber } from '../../src/main/core/core';
import type { Ctx } from '../../src/main/core/context';
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

describe('setup keys when PostgreSQL goes away mid-redeem', { timeout: 120_000 }, () => {
  it('answers 503, leaves nothing partial, and redeems once the database is back', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const made = await admin.post('/weft/setup-keys', { name: 'outage', expiresAt, maxUses: 2, roleAttributes: ['outage'] });
    expect(made.status, made.text).toBe(201);
    const { id, key } = made.body.data;

    let armed = true;
    const halting: WriteSubscriber<Ctx> = async (w) => {
      if (armed && w.def.entity === 'identities' && w.op === 'create') {
        armed = false;
        await pg.halt();
      }
    };
    const subscribers = app.core.writeSubscribers as Array<WriteSubscriber<Ctx>>;
    subscribers.push(halting);
    try {
      const r = await admin.post('/weft/setup-keys/redeem', { key, name: 'outage-dev' }, { api: 'client' });
      expect(armed).toBe(false); // halted from inside the redeem's transaction
      expect(r.status, r.text).toBe(503);
      expect(r.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(r.text).not.toMatch(/\bat .+\.(ts|js):\d+/);
    } finally {
      subscribers.splice(subscribers.indexOf(halting), 1);
    }
    await pg.resume();

    // nothing partial: the use was not counted and no identity was made
    await expect.poll(async () => (await admin.get(`/weft/setup-keys/${id}`)).status, { timeout: 60_000, interval: 200 }).toBe(200);
    expect((await admin.get(`/weft/setup-keys/${id}`)).body.data.uses).toBe(0);
    const named = await admin.get('/identities?filter=' + encodeURIComponent('name = "outage-dev"'));
    expect(named.body.data).toEqual([]);

    const again = await admin.post('/weft/setup-keys/redeem', { key, name: 'outage-dev' }, { api: 'client' });
    expect(again.status, again.text).toBe(201);
    expect((await admin.get(`/identities/${again.body.data.identityId}`)).body.data).toMatchObject({
      name: 'outage-dev',
      roleAttributes: ['outage'],
    });
    expect((await admin.get(`/weft/setup-keys/${id}`)).body.data.uses).toBe(1);
  });
});
