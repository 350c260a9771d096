// The built-in edge router at the protocol level: its entity and state, bad input and faults (garbage frames,
// oversized hellos, wrong tokens, another identity's certificate, half-open connections), policy changes that end
// circuits and terminators, and a clean stop.
import { writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelType, EdgeType, Flag, Header, message, str } from '../../src/main/router/channel/wire';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { deviceSession, enrolledDevice, hostsAndClientsService, RawEdge, serviceSession, type Device } from '../support/edge';
import { eventually } from '../support/overlay';

/** Collects the app's log lines (the router logs each refused connection). */
function memoryLog() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { lines, logger };
}

const log = memoryLog();
let app: TestApp;
let admin: ApiClient;
let host: Device;
let client: Device;
let serviceId: string;
let routerId: string;

beforeAll(async () => {
  const dir = tempDir();
  const config = join(dir, 'weft.yml');
  writeFileSync(config, 'router:\n  heartbeat_interval: 1s\n');
  app = await startTestApp({ configFile: config, logger: log.logger });
  admin = await app.adminClient();
  routerId = app.router!.id;
  host = await enrolledDevice(app, admin, 'router-host', ['hosts']);
  client = await enrolledDevice(app, admin, 'router-client', ['clients']);
  serviceId = await hostsAndClientsService(admin, 'router-echo');
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

const ca = () => app.core.pki.caBundlePem;
const terminators = async () => (await admin.get(`/services/${serviceId}/terminators`)).body.data as any[];

/** A connected, authenticated raw channel for a device. */
async function edgeFor(device: Device): Promise<{ edge: RawEdge; api: ApiClient }> {
  const { client: api, token } = await deviceSession(app, device);
  const edge = await RawEdge.connect(app.urls.router!, ca(), { cert: device.cert, key: device.key });
  const result = await edge.hello(token);
  expect(result.headers.get(Header.ResultSuccess)?.[0]).toBe(1);
  // the Bind answer confirms the terminator: no BindSuccess is promised (edgeConnection.ts says why)
  expect(result.headers.has(Header.SupportsBindSuccess)).toBe(false);
  return { edge, api };
}

/** Host binds, client dials: both channels and the conn ids of the circuit's two ends. */
async function circuit() {
  const h = await edgeFor(host);
  const bind = await serviceSession(h.api, serviceId, 'Bind');
  expect((await h.edge.bind(7, bind.token)).contentType).toBe(EdgeType.StateConnected);
  expect((await terminators()).length).toBeGreaterThan(0); // established by the time the Bind is answered
  const c = await edgeFor(client);
  const dialSession = await serviceSession(c.api, serviceId, 'Dial');
  const connected = c.edge.dial(3, dialSession.token);
  const dial = await h.edge.until(() => h.edge.received.find((m) => m.contentType === EdgeType.Dial));
  expect(dial.body.toString()).toBe(bind.token); // the Bind's token, byte for byte
  const hostConnId = h.edge.accept(dial);
  expect(hostConnId).toBeGreaterThanOrEqual(0x80000000);
  expect((await connected).contentType).toBe(EdgeType.StateConnected);
  return { h, c, hostConnId, dialSession, bind };
}

describe('the built-in edge router', () => {
  it('is an online edge router with its URL, offered in sessions and to /current-identity/edge-routers', async () => {
    const er = (await admin.get(`/edge-routers/${routerId}`)).body.data;
    expect(er).toMatchObject({
      name: 'er-builtin',
      isOnline: true,
      isVerified: true,
      isTunnelerEnabled: true,
      supportedProtocols: { tls: app.urls.router },
    });
    const { client: api } = await deviceSession(app, client);
    const mine = (await api.get('/current-identity/edge-routers', { api: 'client' })).body.data;
    expect(mine.map((r: any) => [r.name, r.isOnline, r.supportedProtocols.tls])).toEqual([['er-builtin', true, app.urls.router]]);
    const s = await serviceSession(api, serviceId, 'Dial');
    const session = (await api.get(`/sessions/${s.id}`, { api: 'client' })).body.data;
    expect(session.edgeRouters).toEqual([expect.objectContaining({ name: 'er-builtin', isOnline: true, urls: { tls: app.urls.router } })]);
    const advice = (await admin.get(`/identities/${client.id}/policy-advice/${serviceId}`)).body.data;
    expect(advice).toMatchObject({ isDialAllowed: true, commonRouters: [expect.objectContaining({ name: 'er-builtin', isOnline: true })] });
    await api.close();
  });

  it('relays data both ways with the conn ids rewritten, half-close and close included; bytes are counted', async () => {
    const { h, c, hostConnId } = await circuit();
    c.edge.send(3, 'ping from the client');
    const atHost = await h.edge.until(() => h.edge.data.find((d) => d.connId === hostConnId));
    expect(atHost.body.toString()).toBe('ping from the client');
    h.edge.send(hostConnId, 'pong from the host');
    expect((await c.edge.until(() => c.edge.data.find((d) => d.connId === 3))).body.toString()).toBe('pong from the host');
    c.edge.send(3, '', Flag.FIN);
    expect(await h.edge.until(() => h.edge.data.find((d) => d.flags & Flag.FIN))).toMatchObject({ connId: hostConnId, body: Buffer.alloc(0) });
    const live = app.router!.status().circuits.find((x) => x.serviceId === serviceId)!;
    expect(live).toMatchObject({
      serviceName: 'router-echo',
      caller: 'router-client',
      bytesIn: 'ping from the client'.length,
      bytesOut: 'pong from the host'.length,
      hostKind: 'sdk',
    });
    h.edge.channel.send({
      contentType: EdgeType.StateClosed,
      sequence: 0,
      headers: new Map([
        [
          Header.ConnId,
          (() => {
            const b = Buffer.alloc(4);
            b.writeUInt32LE(hostConnId);
            return b;
          })(),
        ],
      ]),
      body: Buffer.alloc(0),
    });
    const closed = await c.edge.until(() => c.edge.received.find((m) => m.contentType === EdgeType.StateClosed));
    expect(closed.headers.get(Header.ConnId)!.readUInt32LE(0)).toBe(3);
    expect(app.router!.status().circuits.filter((x) => x.serviceId === serviceId)).toEqual([]);
    h.edge.close();
    c.edge.close();
  });

  it('refuses dials without a terminator or with another session type, and binds with a Dial session', async () => {
    const c = await edgeFor(client);
    const dial = await serviceSession(c.api, serviceId, 'Dial');
    const none = await c.edge.dial(1, dial.token);
    expect(none.contentType).toBe(EdgeType.StateClosed);
    expect(none.body.toString()).toMatch(/has no terminators/);
    const wrong = await c.edge.bind(2, dial.token);
    expect(wrong.contentType).toBe(EdgeType.StateClosed);
    expect(wrong.body.toString()).toMatch(/expected Bind, got Dial/);
    const forged = await c.edge.dial(4, `${dial.token.slice(0, -4)}AAAA`);
    expect(forged.body.toString()).toMatch(/invalid session token/);
    expect(c.edge.closed).toBeUndefined(); // refusals of a dial or bind do not end the connection
    c.edge.close();
  });

  it('ends circuits and terminators when the session goes, and closes the connection when the API session goes', async () => {
    const { h, c, dialSession, bind } = await circuit();
    expect(await terminators()).toHaveLength(1);
    expect((await admin.del(`/sessions/${dialSession.id}`)).status).toBe(200);
    await c.edge.until(() => c.edge.received.find((m) => m.contentType === EdgeType.StateClosed && m.body.toString() === 'the session ended'));
    expect((await admin.del(`/sessions/${bind.id}`)).status).toBe(200);
    await h.edge.until(() =>
      h.edge.received.find((m) => m.contentType === EdgeType.StateClosed && m.headers.get(Header.ConnId)?.readUInt32LE(0) === 7),
    );
    expect(await terminators()).toHaveLength(0);
    // disabling the identity ends its API sessions: the router drops the connection
    expect((await admin.post(`/identities/${client.id}/disable`, { durationMinutes: 0 })).status).toBe(200);
    await c.edge.until(() => c.edge.closed);
    expect((await admin.post(`/identities/${client.id}/enable`, {})).status).toBe(200);
    h.edge.close();
  });

  it('an admin deleting a terminator makes its SDK bind again (StateClosed on the bind conn)', async () => {
    const h = await edgeFor(host);
    const bind = await serviceSession(h.api, serviceId, 'Bind');
    await h.edge.bind(9, bind.token);
    const [t] = await terminators();
    expect(t).toMatchObject({ binding: 'edge', routerId, cost: 0, precedence: 'default' });
    expect((await admin.del(`/terminators/${t.id}`)).status).toBe(200);
    await h.edge.until(() =>
      h.edge.received.find((m) => m.contentType === EdgeType.StateClosed && m.headers.get(Header.ConnId)?.readUInt32LE(0) === 9),
    );
    expect(app.router!.status().terminators).toEqual([]);
    h.edge.close();
  });
});

describe('bad input and faults', () => {
  const refusals = () => log.lines.filter((l) => l.msg === 'edge router: connection closed').map((l) => String(l.reason));

  it("garbage, an oversized hello, data before hello, wrong tokens and another identity's certificate are disconnected with a log line", async () => {
    const before = refusals().length;
    // garbage bytes
    const raw = connect({ host: '127.0.0.1', port: Number(app.urls.router!.split(':').pop()), ca: ca(), cert: client.cert, key: client.key });
    await new Promise((r) => raw.once('secureConnect', r));
    raw.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    await new Promise((r) => raw.once('close', r));
    // an oversized hello
    const big = await RawEdge.connect(app.urls.router!, ca(), { cert: client.cert, key: client.key });
    const hello = {
      contentType: ChannelType.Hello,
      sequence: -1,
      headers: new Map([[Header.SessionToken, str('x'.repeat(10_000))]]),
      body: Buffer.alloc(0),
    };
    big.channel.send(hello);
    await big.until(() => big.closed);
    // a wrong API session token: a Result with success = false, then the connection is closed
    const wrong = await RawEdge.connect(app.urls.router!, ca(), { cert: client.cert, key: client.key });
    const refused = await wrong.hello('not-a-session');
    expect(refused.headers.get(Header.ResultSuccess)?.[0]).toBe(0);
    expect(refused.body.toString()).toMatch(/invalid or expired API session/);
    await wrong.until(() => wrong.closed);
    // the client's API session with the host's certificate
    const { token } = await deviceSession(app, client);
    const stolen = await RawEdge.connect(app.urls.router!, ca(), { cert: host.cert, key: host.key });
    expect((await stolen.hello(token)).body.toString()).toMatch(/invalid client certificate/);
    await stolen.until(() => stolen.closed);
    // no certificate at all
    const anonymous = await RawEdge.connect(app.urls.router!, ca());
    expect((await anonymous.hello(token)).body.toString()).toMatch(/client certificate is required/);
    const reasons = refusals().slice(before);
    expect(reasons).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/bad magic number/),
        expect.stringMatching(/hello message too big/),
        expect.stringMatching(/refused: invalid or expired API session/),
        expect.stringMatching(/refused: invalid client certificate/),
      ]),
    );
    // and everyone else is unaffected
    const { h, c, hostConnId } = await circuit();
    c.edge.send(3, 'still fine');
    expect((await h.edge.until(() => h.edge.data.find((d) => d.connId === hostConnId))).body.toString()).toBe('still fine');
    h.edge.close();
    c.edge.close();
  });

  it('an SDK connection that sends nothing stays open through every sweep and is sent nothing it did not ask for', async () => {
    const h = await edgeFor(host);
    const bind = await serviceSession(h.api, serviceId, 'Bind');
    await h.edge.bind(11, bind.token);
    const before = h.edge.received.length;
    // the router sweeps once per heartbeat interval (1 s here): a C SDK probes latency once a minute, so three
    // minutes of silence at the default 30 s are six sweeps; twelve here, run by hand (no waiting)
    for (let i = 0; i < 12; i++) await app.router!.sweep();
    // a latency probe's answer comes after anything the router sent before it (one TLS stream, in order)
    const answer = await h.edge.channel.request(message(ChannelType.Latency, []), 5_000);
    expect(answer.contentType).toBe(ChannelType.Result);
    expect(h.edge.received.slice(before)).toEqual([]);
    expect(h.edge.closed).toBeUndefined();
    expect(await terminators()).toHaveLength(1);
    // no frame of the router's is empty (the C SDK cannot complete a zero-length message: it spins)
    expect(h.edge.emptyFrames).toBe(0);
    h.edge.close();
  });
});

describe('router state', () => {
  it('disabling the router drops its connections and takes it offline; enabling brings it back', async () => {
    const c = await edgeFor(client);
    expect((await admin.patch(`/edge-routers/${routerId}`, { disabled: true })).status).toBe(200);
    await c.edge.until(() => c.edge.closed);
    expect((await admin.get(`/edge-routers/${routerId}`)).body.data).toMatchObject({ isOnline: false, disabled: true });
    const { token } = await deviceSession(app, client);
    // while disabled the router takes no connection
    await expect(RawEdge.connect(app.urls.router!, ca(), { cert: client.cert, key: client.key }).then((e) => e.hello(token))).rejects.toThrow();
    expect((await admin.patch(`/edge-routers/${routerId}`, { disabled: false })).status).toBe(200);
    // the router hears of its row's change from the store (on PostgreSQL through NOTIFY), after the reply
    await eventually(async () => (await admin.get(`/edge-routers/${routerId}`)).body.data.isOnline === true, 'the router back online', 5_000);
    (await edgeFor(client)).edge.close();
  });

  it('stopping Weft closes every circuit cleanly and leaves the router offline with no terminators', async () => {
    const other = await startTestApp({ logger: pino({ level: 'silent' }) });
    const otherAdmin = await other.adminClient();
    try {
      const a = await enrolledDevice(other, otherAdmin, 'stop-host', ['h']);
      const b = await enrolledDevice(other, otherAdmin, 'stop-client', ['c']);
      const svc = await otherAdmin.create('/services', { name: 'stop-svc', encryptionRequired: false });
      await otherAdmin.create('/service-policies', { name: 'b', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#h'], serviceRoles: ['#all'] });
      await otherAdmin.create('/service-policies', { name: 'd', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#c'], serviceRoles: ['#all'] });
      await otherAdmin.create('/edge-router-policies', { name: 'e', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
      await otherAdmin.create('/service-edge-router-policies', { name: 's', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
      const hs = await deviceSession(other, a);
      const hEdge = await RawEdge.connect(other.urls.router!, other.core.pki.caBundlePem, { cert: a.cert, key: a.key });
      await hEdge.hello(hs.token);
      await hEdge.bind(1, (await serviceSession(hs.client, svc, 'Bind')).token);
      const cs = await deviceSession(other, b);
      const cEdge = await RawEdge.connect(other.urls.router!, other.core.pki.caBundlePem, { cert: b.cert, key: b.key });
      await cEdge.hello(cs.token);
      const connected = cEdge.dial(5, (await serviceSession(cs.client, svc, 'Dial')).token);
      hEdge.accept(await hEdge.until(() => hEdge.received.find((m) => m.contentType === EdgeType.Dial)));
      await connected;
      const routerIdOfOther = other.router!.id;
      await other.router!.close();
      for (const e of [cEdge, hEdge]) {
        await e.until(() => e.received.some((m) => m.contentType === EdgeType.StateClosed && m.body.toString() === 'the router is stopping'));
        await e.until(() => e.closed);
      }
      expect(await other.core.store.getSql('SELECT is_online FROM edge_routers WHERE id = ?', routerIdOfOther)).toEqual({ is_online: 0 });
      expect(await other.core.store.getSql('SELECT count(*) AS n FROM terminators')).toEqual({ n: 0 });
      await hs.client.close();
      await cs.client.close();
    } finally {
      await otherAdmin.close();
      await other.stop();
    }
  });

  it('router.enabled false (--router-listener off): no router, no listener', async () => {
    const off = await startTestApp({ routerListener: 'off' });
    try {
      expect(off.router).toBeUndefined();
      expect(off.urls.router).toBeUndefined();
    } finally {
      await off.stop();
    }
  });
});
