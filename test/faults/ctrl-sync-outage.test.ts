// What stock routers are told (the data model's change sets, the legacy API session sync) when PostgreSQL goes away
// or the change feed misses changes (a scripted router on the wire). Down: the router's resync request and heartbeat
// fail cleanly, the channel stays up; back: the full sync comes by itself. Changes another node made while this
// node's LISTEN connection was down reach the router once it is back: the model's as a change set, the API sessions'
// as a full sync without the session that node deleted, and a terminator whose Bind session that node deleted goes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg_ from 'pg';
import { ProtoReader, ProtoWriter } from '../../src/main/ctrl/protobuf';
import { message, type Message } from '../../src/main/router/channel/wire';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { deviceSession, enrolledDevice, hostsAndClientsService, type Device } from '../support/edge';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { connectedRouter, createTerminator, enrolledRouter, sdkCredentials, type ScriptedRouter } from '../support/scriptedRouter';

let pg: PostgresServer;
let database: string;
let app: TestApp;
let admin: ApiClient;
let device: Device;
let router: ScriptedRouter;
let serviceId: string;

const isFull = (m: Message) => m.contentType === 20200 && new ProtoReader(m.body).bool(1);
const syncState = (m: Message) => JSON.parse(m.headers.get(1014)!.toString()) as { id: string; isLast: boolean };
const tokensIn = (m: Message) => new ProtoReader(m.body).messages(2).map((s) => s.str(1));

/** The tokens of the next complete full sync after message `from`. */
async function nextFullSync(from: number): Promise<string[]> {
  const last = await router.waitFor((m) => router.received.indexOf(m) >= from && isFull(m) && syncState(m).isLast);
  return router.received.filter((m) => isFull(m) && syncState(m).id === syncState(last).id).flatMap(tokensIn);
}

beforeAll(async () => {
  pg = await startPostgres();
  database = await pg.createDatabase();
  app = await startTestApp({ database, apiOidc: 'off' });
  admin = await app.adminClient();
  serviceId = await hostsAndClientsService(admin, 'outage-echo');
  device = await enrolledDevice(app, admin, 'outage-device', ['hosts']);
  router = await connectedRouter(app, await enrolledRouter(app, admin, 'outage-router'));
  router.channel.send(message(20505, [], new ProtoWriter().uint(2, 300).finish()));
  await router.waitFor((m) => m.contentType === 20500);
  await nextFullSync(0);
}, 120_000);
afterAll(async () => {
  router?.channel.close();
  await admin?.close();
  await app?.stop();
  await pg?.stop();
});

describe('router sync when PostgreSQL goes away', { timeout: 120_000 }, () => {
  it('a resync asked while it is down fails cleanly and comes by itself once it is back', async () => {
    const { token } = await deviceSession(app, device);
    await pg.halt();
    const at = router.received.length;
    router.channel.send(message(20204, [], new ProtoWriter().bytes(1, 'test').finish()));
    router.channel.send(message(20203, [], new ProtoWriter().strings(1, [token]).finish()));
    // the process serves on, the router's channel too
    const anon = app.client();
    expect((await anon.get('/version', { api: 'root' })).status).toBe(200);
    await anon.close();
    expect(router.channel.closed).toBe(false);
    await pg.resume();
    expect(await nextFullSync(at)).toContain(token);
    // the live token was not named back as removed
    expect(router.received.slice(at).filter((m) => m.contentType === 20202)).toHaveLength(0);
  });

  it("another node's changes missed by the change feed reach the router once it is back", async () => {
    const { client } = await deviceSession(app, device);
    const bound = await router.channel.request(createTerminator('outage-t1', await sdkCredentials(app, device, serviceId, 'Bind')), 10_000);
    expect(new ProtoReader(bound.body).uint(2)).toBe(0);
    const terminators = async () => (await admin.get(`/services/${serviceId}/terminators`)).body.data as unknown[];
    expect(await terminators()).toHaveLength(1);
    const apiSessionId = (await client.get('/current-api-session', { api: 'client' })).body.data.id as string;
    const name = new URL(database).pathname.slice(1);
    const server = new pg_.Client({ connectionString: pg.adminUrl });
    const otherNode = new pg_.Client({ connectionString: database });
    await Promise.all([server.connect(), otherNode.connect()]);
    const at = router.received.length;
    try {
      await server.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await server.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", [name]);
      const token = (await otherNode.query('DELETE FROM api_sessions WHERE id = $1 RETURNING token', [apiSessionId])).rows[0].token as string;
      await otherNode.query('UPDATE identities SET name = $1 WHERE id = $2', ['outage-device-renamed', device.id]);
      expect((await otherNode.query("DELETE FROM sessions WHERE identity_id = $1 AND type = 'Bind'", [device.id])).rowCount).toBe(1);
      await server.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
      // the model: the rename as a change set
      const change = await router.waitFor(
        (m) =>
          router.received.indexOf(m) >= at &&
          m.contentType === 20501 &&
          new ProtoReader(m.body).messages(3).some((e) => e.message(10)?.str(2) === 'outage-device-renamed'),
      );
      expect(change).toBeDefined();
      // the API sessions: a full sync without the deleted one (the router drops what it held that is not in it)
      expect(await nextFullSync(at)).not.toContain(token);
      // the terminator of the Bind session it deleted
      await expect.poll(async () => (await terminators()).length, { timeout: 10_000 }).toBe(0);
    } finally {
      await server.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
      await Promise.all([server.end(), otherNode.end(), client.close()]);
    }
  });
});
