// Faults away from the database: a Weft process on SQLite killed with SIGKILL mid-writes, clients whose sockets are
// reset mid-request, and an SDK whose router connection is reset mid-circuit. Nothing acknowledged is lost, nothing is
// half-written, and Weft keeps serving.
import { connect as netConnect, type Socket } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { deviceSession, enrolledDevice, RawEdge, serviceSession, type Device } from '../support/edge';
import { startWeftProcess } from '../support/weftProcess';
import { within } from '../support/cluster';
import { EdgeType } from '../../src/main/router/channel/wire';

const PASSWORD = 'fault-admin-password';

/** Runs the data integrity check through the API and returns what it found. */
async function integrity(admin: ApiClient): Promise<unknown[]> {
  expect((await admin.post('/database/check-data-integrity')).status).toBe(202);
  let results: any;
  await within(30_000, async () => {
    results = (await admin.get('/database/data-integrity-results')).body.data;
    return !results.inProgress;
  });
  return results.results;
}

describe('a Weft process on SQLite killed mid-writes', () => {
  it('loses no acknowledged write, and starts again on the same data with nothing half-written', async () => {
    const dataDir = tempDir('weft-kill-');
    const args = ['--api-address', '127.0.0.1:0', '--console-address', '127.0.0.1:0', '--router-listener', 'tls:127.0.0.1:0'];
    const weft = await startWeftProcess(dataDir, args, { WEFT_ADMIN_PASSWORD: PASSWORD });
    const admin = await weft.login('admin', PASSWORD);
    const acknowledged: string[] = [];
    let killed = false;
    let n = 0;
    const worker = async () => {
      while (n < 200) {
        const i = n++;
        const r = await admin
          .post('/identities', { name: `kill-${i}`, type: 'Device', isAdmin: false, roleAttributes: [`k${i % 5}`] })
          .catch(() => undefined);
        if (r?.status === 201) acknowledged.push(r.body.data.id);
        else expect(killed, `request ${i} failed before the kill: ${r?.status} ${r?.text}`).toBe(true);
        if (i === 80 && !killed) {
          killed = true;
          weft.proc.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    await admin.close();
    expect(acknowledged.length).toBeGreaterThanOrEqual(60); // request 80 was answered; some before it were cut off

    const again = await startWeftProcess(dataDir, args);
    const after = await again.login('admin', PASSWORD);
    try {
      const stored = new Set<string>();
      const page = (await after.get(`/identities?filter=${encodeURIComponent('name contains "kill-"')}&limit=500`)).body;
      for (const e of page.data as Array<{ id: string }>) stored.add(e.id);
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      expect(await integrity(after)).toEqual([]);
      expect((await after.post('/identities', { name: 'kill-after', type: 'Device', isAdmin: false })).status).toBe(201);
    } finally {
      await after.close();
      await again.stop();
    }
  });
});

describe('sockets reset mid-work', () => {
  let app: TestApp;
  let admin: ApiClient;
  beforeAll(async () => {
    app = await startTestApp();
    admin = await app.adminClient();
  });
  afterAll(async () => {
    await admin?.close();
    await app?.stop();
  });

  /** A raw TLS connection to the API, and the TCP connection under it (to reset). */
  const raw = () =>
    new Promise<{ s: TLSSocket; tcp: Socket }>((resolve, reject) => {
      const url = new URL(app.urls.api);
      const tcp = netConnect({ host: url.hostname, port: Number(url.port) });
      const s = connect({ socket: tcp, ca: app.core.pki.caBundlePem }, () => resolve({ s, tcp }));
      s.once('error', reject);
    });

  it('clients that reset their connection mid-request or before the answer: each write is whole or absent, Weft serves on', async () => {
    const requests = Array.from({ length: 30 }, async (_, i) => {
      const body = JSON.stringify({ name: `reset-${i}`, type: 'Device', isAdmin: false, roleAttributes: ['reset'] });
      const head = `POST /edge/management/v1/identities HTTP/1.1\r\nHost: x\r\nzt-session: ${admin.token}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
      const { s, tcp } = await raw();
      s.on('error', () => undefined);
      tcp.on('error', () => undefined);
      if (i % 3 === 0) {
        // the body never arrives whole
        s.write(head + body.slice(0, body.length >> 1));
      } else {
        s.write(head + body);
      }
      // reset (RST) right away: before the server has answered, or while it works on the request
      await new Promise<void>((r) => (i % 3 === 2 ? setImmediate(r) : r()));
      tcp.resetAndDestroy();
    });
    await Promise.all(requests);
    // the server is still there, and what it took in is whole: an identity with its role attribute, or nothing
    const list = (await admin.get(`/identities?filter=${encodeURIComponent('name contains "reset-"')}&limit=100`)).body.data as any[];
    for (const e of list) expect(e.roleAttributes).toEqual(['reset']);
    expect(list.filter((e) => Number(e.name.split('-')[1]) % 3 === 0)).toEqual([]);
    expect(await integrity(admin)).toEqual([]);
    expect((await admin.post('/identities', { name: 'reset-after', type: 'Device', isAdmin: false })).status).toBe(201);
  });

  describe('an SDK connection reset mid-circuit', () => {
    let host: Device;
    let client: Device;
    let serviceId: string;
    beforeAll(async () => {
      host = await enrolledDevice(app, admin, 'reset-host', ['reset-hosts']);
      client = await enrolledDevice(app, admin, 'reset-client', ['reset-clients']);
      serviceId = await admin.create('/services', { name: 'reset-echo', encryptionRequired: false });
      for (const [type, role] of [
        ['Bind', '#reset-hosts'],
        ['Dial', '#reset-clients'],
      ] as const) {
        await admin.create('/service-policies', {
          name: `reset-${type}`,
          type,
          semantic: 'AnyOf',
          identityRoles: [role],
          serviceRoles: [`@${serviceId}`],
        });
      }
      await admin.create('/edge-router-policies', { name: 'reset-erp', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
      await admin.create('/service-edge-router-policies', {
        name: 'reset-serp',
        semantic: 'AnyOf',
        serviceRoles: ['#all'],
        edgeRouterRoles: ['#all'],
      });
    });

    async function edgeFor(device: Device) {
      const { client: api, token } = await deviceSession(app, device);
      const edge = await RawEdge.connect(app.urls.router!, app.core.pki.caBundlePem, { cert: device.cert, key: device.key });
      await edge.hello(token);
      return { edge, api };
    }

    async function circuit() {
      const h = await edgeFor(host);
      const bind = await serviceSession(h.api, serviceId, 'Bind');
      expect((await h.edge.bind(1, bind.token)).contentType).toBe(EdgeType.StateConnected);
      const c = await edgeFor(client);
      const connected = c.edge.dial(2, (await serviceSession(c.api, serviceId, 'Dial')).token);
      const hostConnId = h.edge.accept(await h.edge.until(() => h.edge.received.find((m) => m.contentType === EdgeType.Dial)));
      expect((await connected).contentType).toBe(EdgeType.StateConnected);
      return { h, c, hostConnId };
    }

    it('the other end hears StateClosed, the circuit and the terminator go, and the router serves the next circuit', async () => {
      const { h, c, hostConnId } = await circuit();
      c.edge.send(2, 'before the reset');
      await h.edge.until(() => h.edge.data.find((d) => d.connId === hostConnId));
      // mid-stream: data in flight toward the host when its connection is reset
      c.edge.send(2, Buffer.alloc(256 * 1024, 1));
      h.edge.tcp.resetAndDestroy();
      await c.edge.until(() => c.edge.received.find((m) => m.contentType === EdgeType.StateClosed));
      await within(5_000, async () => app.router!.status().circuits.length === 0);
      await within(5_000, async () => (await admin.get(`/services/${serviceId}/terminators`)).body.data.length === 0);
      c.edge.close();
      await h.api.close();
      await c.api.close();
      const next = await circuit();
      next.c.edge.send(2, 'after');
      expect((await next.h.edge.until(() => next.h.edge.data.find((d) => d.connId === next.hostConnId))).body.toString()).toBe('after');
      next.h.edge.close();
      next.c.edge.close();
      await next.h.api.close();
      await next.c.api.close();
    });
  });
});
