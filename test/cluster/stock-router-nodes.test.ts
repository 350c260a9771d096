// A stock router connected to two Weft nodes on one PostgreSQL database (a v1.x router connects to every controller
// its enrollment names, and asks whichever answers fastest), on the wire with a scripted router: an SDK's Bind taken by
// one node and a Dial taken by the other still get the host's public key (the terminator keeps what it was bound
// with); the router is online while connected to either; its channel to one node closing keeps its terminators (the
// other node holds them), to both takes them; the Bind session ending removes the terminator whichever node took it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinedTestApp, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledDevice, type Device } from '../support/edge';
import { startPostgres, type PostgresServer } from '../support/postgres';
import {
  connectedRouter,
  createCircuit,
  createTerminator,
  enrolledRouter,
  routeResult,
  sdkCredentials,
  type Enrolled,
} from '../support/scriptedRouter';
import { ProtoReader } from '../../src/main/ctrl/protobuf';

let pg: PostgresServer;
let a: TestApp;
let b: TestApp;
let admin: ApiClient;
let serviceId: string;
let host: Device;
let client: Device;
let r: Enrolled;

const terminators = async () => (await admin.get(`/services/${serviceId}/terminators`)).body.data as Array<{ id: string }>;
const online = async () => (await admin.get(`/edge-routers/${r.id}`)).body.data.isOnline as boolean;

beforeAll(async () => {
  pg = await startPostgres();
  const database = await pg.createDatabase();
  a = await startTestApp({ database });
  b = await joinedTestApp(a);
  admin = await a.adminClient();
  // encryption required: a dial needs the host's public key from its Bind
  serviceId = await admin.create('/services', { name: 'two-nodes', encryptionRequired: true });
  await admin.create('/service-policies', {
    name: 'bind',
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles: ['#hosts'],
    serviceRoles: [`@${serviceId}`],
  });
  await admin.create('/service-policies', {
    name: 'dial',
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#clients'],
    serviceRoles: [`@${serviceId}`],
  });
  await admin.create('/edge-router-policies', { name: 'erp', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
  await admin.create('/service-edge-router-policies', { name: 'serp', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
  host = await enrolledDevice(a, admin, 'nodes-host', ['hosts']);
  client = await enrolledDevice(a, admin, 'nodes-client', ['clients']);
  r = await enrolledRouter(a, admin, 'two-node-router');
}, 120_000);
afterAll(async () => {
  await admin?.close();
  await b?.stop();
  await a?.stop();
  await pg?.stop();
});

describe('a stock router connected to two nodes', { timeout: 60_000 }, () => {
  it("binds through one node and dials through the other: the dialer gets the host's public key", async () => {
    const [toA, toB] = [await connectedRouter(a, r), await connectedRouter(b, r)];
    try {
      await expect.poll(online, { timeout: 10_000 }).toBe(true);
      const hostKey = Buffer.alloc(32, 9);
      const bound = await toA.channel.request(
        createTerminator('nodes-t1', await sdkCredentials(a, host, serviceId, 'Bind'), new Map([[1003, hostKey]])),
        10_000,
      );
      expect(new ProtoReader(bound.body).uint(2)).toBe(0);
      toB.answers.set(1005, routeResult);
      const dialerKey = new Map([[1003, Buffer.alloc(32, 4)]]);
      const answer = await toB.channel.request(createCircuit(await sdkCredentials(b, client, serviceId, 'Dial'), dialerKey), 10_000);
      expect([answer.contentType, answer.body.toString()]).toEqual([20219, expect.anything()]);
      expect(answer.headers.get(10)!.includes(hostKey)).toBe(true);

      // its channel to A closes: still connected to B, it stays online and keeps its terminator
      toA.channel.close();
      await expect
        .poll(async () => (await b.core.store.allSql('SELECT node_id FROM edge_router_nodes WHERE router_id = ?', r.id)).length, { timeout: 10_000 })
        .toBe(1);
      expect(await online()).toBe(true);
      expect((await terminators()).map((t) => t.id)).toEqual(['nodes-t1']);

      // the Bind session ends (an admin deletes it): the terminator goes, though the node that took the Bind is not
      // the router's any more
      const binds = (await admin.get(`/sessions?filter=${encodeURIComponent(`identityId = "${host.id}" and type = "Bind"`)}`)).body.data as Array<{
        id: string;
      }>;
      for (const s of binds) expect((await admin.del(`/sessions/${s.id}`)).status).toBe(200);
      await expect.poll(async () => (await terminators()).length, { timeout: 10_000 }).toBe(0);

      // bound again through B, then its channel to B closes too: offline, its terminators gone
      const again = await toB.channel.request(createTerminator('nodes-t2', await sdkCredentials(b, host, serviceId, 'Bind')), 10_000);
      expect(new ProtoReader(again.body).uint(2)).toBe(0);
      toB.channel.close();
      await expect.poll(online, { timeout: 10_000 }).toBe(false);
      await expect.poll(async () => (await terminators()).length, { timeout: 10_000 }).toBe(0);
    } finally {
      toA.channel.close();
      toB.channel.close();
    }
  });
});
