// The built-in edge router's life around its traffic: frame limits before and after the hello, posture at dial
// time, the `router:` config section, deletion through the Management API, and the circuits of a stopping Weft.
import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/main/app';
import { configSchema } from '../../src/main/config';
import { tlsUrl } from '../../src/main/core/dataPlane/builtinRouter';
import { ChannelType, EdgeType, Header, MAGIC, PREFIX_BYTES } from '../../src/main/router/channel/wire';
import { routerAddresses } from '../../src/main/router/index';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { deviceSession, enrolledDevice, RawEdge, serviceSession, type Device } from '../support/edge';
import { rawSql } from '../support/rawDb';

/** Collects the app's log lines (the router logs each connection it closes and why). */
function memoryLog() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { lines, logger };
}

/** A config file with this YAML. */
function configFile(yaml: string): string {
  const file = join(tempDir(), 'weft.yml');
  writeFileSync(file, yaml);
  return file;
}

/** Only the 20-byte prefix of a frame: what it declares, none of what it declares. */
function prefix(contentType: number, headerBytes: number, bodyBytes: number): Buffer {
  const b = Buffer.alloc(PREFIX_BYTES);
  b.writeUInt32LE(MAGIC, 0);
  b.writeInt32LE(contentType, 4);
  b.writeInt32LE(contentType === ChannelType.Hello ? -1 : 1, 8);
  b.writeUInt32LE(headerBytes, 12);
  b.writeUInt32LE(bodyBytes, 16);
  return b;
}

/** Every identity may use every router, every service every router. */
async function openRouting(admin: ApiClient): Promise<void> {
  await admin.create('/edge-router-policies', { name: 'erp-all', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
  await admin.create('/service-edge-router-policies', { name: 'serp-all', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
}

/** A service `binder` may Bind and `dialer` may Dial (extra Dial policy fields, e.g. posture check roles, in `dial`). */
async function service(
  admin: ApiClient,
  name: string,
  binder: string,
  dialer: string,
  dial: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<string> {
  const id = await admin.create('/services', { name, encryptionRequired: false, ...extra });
  await admin.create('/service-policies', {
    name: `${name}-bind`,
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles: [binder],
    serviceRoles: [`@${id}`],
  });
  await admin.create('/service-policies', {
    name: `${name}-dial`,
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [dialer],
    serviceRoles: [`@${id}`],
    ...dial,
  });
  return id;
}

/** A raw channel to the app's router, past its hello, and the API client of the API session it used. */
async function edgeFor(app: TestApp, device: Device): Promise<{ edge: RawEdge; api: ApiClient }> {
  const { client: api, token } = await deviceSession(app, device);
  const edge = await RawEdge.connect(app.urls.router!, app.core.pki.caBundlePem, { cert: device.cert, key: device.key });
  expect((await edge.hello(token)).headers.get(Header.ResultSuccess)?.[0]).toBe(1);
  return { edge, api };
}

/** `host` binds the service on conn 7, `client` dials it on conn 3: the two channels and the host's conn id. */
async function circuit(app: TestApp, serviceId: string, host: Device, client: Device) {
  const h = await edgeFor(app, host);
  expect((await h.edge.bind(7, (await serviceSession(h.api, serviceId, 'Bind')).token)).contentType).toBe(EdgeType.StateConnected);
  const c = await edgeFor(app, client);
  const connected = c.edge.dial(3, (await serviceSession(c.api, serviceId, 'Dial')).token);
  const hostConnId = h.edge.accept(await h.edge.until(() => h.edge.received.find((m) => m.contentType === EdgeType.Dial)));
  expect((await connected).contentType).toBe(EdgeType.StateConnected);
  return { h, c, hostConnId };
}

const closedWith = (e: RawEdge, connId: number, reason: string | RegExp) =>
  e.received.some(
    (m) =>
      m.contentType === EdgeType.StateClosed &&
      m.headers.get(Header.ConnId)?.readUInt32LE(0) === connId &&
      new RegExp(reason).test(m.body.toString()),
  );

const log = memoryLog();
let app: TestApp;
let admin: ApiClient;
let host: Device;
let client: Device;
let echo: string;

beforeAll(async () => {
  app = await startTestApp({ logger: log.logger });
  admin = await app.adminClient();
  await openRouting(admin);
  host = await enrolledDevice(app, admin, 'lc-host', ['lc-hosts']);
  client = await enrolledDevice(app, admin, 'lc-client', ['lc-clients']);
  echo = await service(admin, 'lc-echo', '#lc-hosts', '#lc-clients');
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

describe('frame limits', () => {
  const closedReasons = (from: number) =>
    log.lines
      .slice(from)
      .filter((l) => l.msg === 'edge router: connection closed')
      .map((l) => String(l.reason));

  it('before its hello a peer may send no more than a hello: a frame declaring more is refused at once, others unaffected', async () => {
    const { h, c, hostConnId } = await circuit(app, echo, host, client);
    const from = log.lines.length;
    for (const [headers, body] of [
      [60 << 20, 0],
      [0, 60 << 20],
      [100 << 10, 0],
    ] as const) {
      const e = await RawEdge.connect(app.urls.router!, app.core.pki.caBundlePem, { cert: client.cert, key: client.key });
      e.socket.write(prefix(ChannelType.Hello, headers, body));
      // the hello timeout is 15 s: only the limit closes the connection this soon, with 20 bytes read
      await e.until(() => e.closed, 5_000);
    }
    expect(closedReasons(from)).toEqual([
      'hello message too big: 62914560 bytes of headers exceed the limit of 4192',
      `hello message too big: ${PREFIX_BYTES + (60 << 20)} bytes exceed the limit of ${PREFIX_BYTES + 2 * 4192}`,
      'hello message too big: 102400 bytes of headers exceed the limit of 4192',
    ]);
    c.edge.send(3, 'still relayed');
    expect((await h.edge.until(() => h.edge.data.find((d) => d.connId === hostConnId))).body.toString()).toBe('still relayed');
    h.edge.close();
    c.edge.close();
  });

  it('after the hello a Data body may be large but the header section stays under 64 KiB', async () => {
    const { h, c, hostConnId } = await circuit(app, echo, host, client);
    const big = randomBytes(8 << 20);
    c.edge.send(3, big); // one 8 MiB frame, as an SDK's single large write
    const got = await h.edge.until(() => h.edge.data.find((d) => d.connId === hostConnId));
    expect(got.body.equals(big)).toBe(true);
    const from = log.lines.length;
    c.edge.socket.write(prefix(EdgeType.Data, 1 << 20, 0));
    await c.edge.until(() => c.edge.closed, 5_000);
    expect(closedReasons(from)).toEqual(['frame too big: 1048576 bytes of headers exceed the limit of 65536']);
    // only that connection: the host hears its circuit end and stays connected
    await h.edge.until(() => closedWith(h.edge, hostConnId, 'the connection to the router closed'));
    expect(h.edge.closed).toBeUndefined();
    h.edge.close();
  });
});

describe('posture through the router', () => {
  it('a dial whose Dial policy needs a posture check the identity fails is refused, and its session ends', async () => {
    const dialer = await enrolledDevice(app, admin, 'pc-dialer');
    const check = await admin.create('/posture-checks', {
      name: 'pc-domain',
      typeId: 'DOMAIN',
      domains: ['corp.example'],
      roleAttributes: ['pc-checks'],
    });
    const svc = await service(admin, 'pc-svc', '#lc-hosts', `@${dialer.id}`, { postureCheckRoles: ['#pc-checks'] });
    const h = await edgeFor(app, host);
    await h.edge.bind(7, (await serviceSession(h.api, svc, 'Bind')).token);
    const c = await edgeFor(app, dialer);
    // failing: no session at all
    expect((await c.api.post('/sessions', { serviceId: svc, type: 'Dial' }, { api: 'client' })).body.error?.code).toBe('INVALID_POSTURE');
    // passing: a session, and a circuit
    expect((await c.api.post('/posture-response', { id: check, typeId: 'DOMAIN', domain: 'corp.example' }, { api: 'client' })).status).toBe(201);
    const session = await serviceSession(c.api, svc, 'Dial');
    const first = c.edge.dial(1, session.token);
    h.edge.accept(await h.edge.until(() => h.edge.received.find((m) => m.contentType === EdgeType.Dial)));
    expect((await first).contentType).toBe(EdgeType.StateConnected);
    // the check changes: the identity fails it, though nothing ended its session
    expect((await admin.patch(`/posture-checks/${check}`, { domains: ['other.example'] })).status).toBe(200);
    const refused = await c.edge.dial(2, session.token);
    expect(refused.contentType).toBe(EdgeType.StateClosed);
    expect(refused.body.toString()).toBe('failed to pass posture checks for service pc-svc');
    expect(h.edge.received.filter((m) => m.contentType === EdgeType.Dial)).toHaveLength(1); // the host was never asked
    // the failing session is gone, and with it the circuit it carried
    expect((await admin.get(`/sessions/${session.id}`)).status).toBe(404);
    await c.edge.until(() => closedWith(c.edge, 1, 'the session ended'));
    expect(c.edge.closed).toBeUndefined(); // a refused dial does not end the connection
    h.edge.close();
    c.edge.close();
    await admin.del(`/posture-checks/${check}`);
  });
});

describe('the router: config section', () => {
  it('defaults: enabled, named er-builtin, listening on tls:127.0.0.1:3022 (a free port if taken), 30 s heartbeat', () => {
    const { config } = resolveConfig({ configFile: configFile('log_level: info\n') });
    expect(config.router).toEqual({ enabled: true, name: 'er-builtin', heartbeat_interval: '30s' });
    expect(routerAddresses(config.router)).toEqual({ listen: { host: '127.0.0.1', port: 3022, isDefault: true }, advertise: { host: '127.0.0.1' } });
    const parse = (router: object) => routerAddresses(configSchema.shape.router.parse(router));
    expect(parse({ listener: 'tls:0.0.0.0:4000' })).toEqual({
      listen: { host: '0.0.0.0', port: 4000, isDefault: false },
      advertise: { host: '127.0.0.1' },
    });
    expect(parse({ advertise: 'weft.lan' }).advertise).toEqual({ host: 'weft.lan', port: undefined });
    expect(parse({ advertise: '[::1]:443' }).advertise).toEqual({ host: '::1', port: 443 });
    expect(tlsUrl('::1', 443)).toBe('tls://[::1]:443'); // as sessions and the router's entity offer it
  });

  it('name and advertise: the router entity has the name; sessions and the router offer the advertised address', async () => {
    const dataDir = tempDir();
    const named = await startTestApp({
      dataDir,
      configFile: configFile('router:\n  name: edge-one\n  listener: tls:127.0.0.1:0\n  advertise: router.example.test:4443\n'),
      routerListener: undefined,
    });
    const namedAdmin = await named.adminClient();
    try {
      const url = 'tls://router.example.test:4443';
      expect(named.urls.router).toBe(url);
      expect((await namedAdmin.get(`/edge-routers/${named.router!.id}`)).body.data).toMatchObject({
        name: 'edge-one',
        isOnline: true,
        hostname: 'router.example.test',
        supportedProtocols: { tls: url },
      });
      await openRouting(namedAdmin);
      const d = await enrolledDevice(named, namedAdmin, 'adv-client');
      const svc = await service(namedAdmin, 'adv-svc', `@${d.id}`, `@${d.id}`);
      const { client: api } = await deviceSession(named, d);
      const s = await serviceSession(api, svc, 'Dial');
      expect((await api.get(`/sessions/${s.id}`, { api: 'client' })).body.data.edgeRouters).toEqual([
        expect.objectContaining({ name: 'edge-one', isOnline: true, urls: { tls: url } }),
      ]);
      expect((await api.get('/current-identity/edge-routers', { api: 'client' })).body.data.map((r: any) => r.supportedProtocols.tls)).toEqual([url]);
      // the listener's certificate is issued for the advertised name, so SDKs can verify it
      expect(new X509Certificate(readFileSync(join(dataDir, 'router', 'server.chain.pem'))).subjectAltName).toContain('DNS:router.example.test');
      await api.close();
    } finally {
      await namedAdmin.close();
      await named.stop();
    }
  });

  it('enabled: false: no router and no listener; the router provisioned at an earlier start stays offline, even after a crash', async () => {
    const dataDir = tempDir();
    const first = await startTestApp({ dataDir });
    const id = first.router!.id;
    await first.stop({ keepData: true });
    // as a process killed while its router was online leaves it
    await rawSql(first, 'UPDATE edge_routers SET is_online = 1 WHERE id = ?', id);
    expect(await rawSql(first, 'SELECT is_online FROM edge_routers WHERE id = ?', id)).toEqual([{ is_online: 1 }]);
    const off = await startTestApp({ dataDir, configFile: configFile('router:\n  enabled: false\n'), routerListener: undefined });
    const offAdmin = await off.adminClient();
    try {
      expect(off.config.router.enabled).toBe(false);
      expect(off.router).toBeUndefined();
      expect(off.urls.router).toBeUndefined();
      expect((await offAdmin.get(`/edge-routers/${id}`)).body.data).toMatchObject({ name: 'er-builtin', isOnline: false });
    } finally {
      await offAdmin.close();
      await off.stop();
    }
  });
});

describe('deleting the built-in router', () => {
  it('drops its connections and takes it away; the next start of the same data dir enrolls a new one', async () => {
    const dataDir = tempDir();
    let weft = await startTestApp({ dataDir });
    let weftAdmin = await weft.adminClient();
    try {
      await openRouting(weftAdmin);
      const a = await enrolledDevice(weft, weftAdmin, 'del-host');
      const b = await enrolledDevice(weft, weftAdmin, 'del-client');
      const svc = await service(weftAdmin, 'del-svc', `@${a.id}`, `@${b.id}`);
      const { h, c } = await circuit(weft, svc, a, b);
      const oldId = weft.router!.id;
      expect((await weftAdmin.del(`/edge-routers/${oldId}`)).status).toBe(200);
      await h.edge.until(() => h.edge.closed);
      await c.edge.until(() => c.edge.closed);
      expect((await weftAdmin.get(`/edge-routers/${oldId}`)).status).toBe(404);
      expect((await weftAdmin.get('/edge-routers')).body.data).toEqual([]);
      expect(weft.router!.status()).toMatchObject({ online: false, connections: 0, terminators: [], circuits: [] });
      expect((await weftAdmin.get(`/services/${svc}/terminators`)).body.data).toEqual([]);
      // no new connection is taken, and sessions have no router to offer
      const { client: api, token } = await deviceSession(weft, b);
      await expect(
        RawEdge.connect(weft.urls.router!, weft.core.pki.caBundlePem, { cert: b.cert, key: b.key }).then((e) => e.hello(token)),
      ).rejects.toThrow();
      expect((await api.post('/sessions', { serviceId: svc, type: 'Dial' }, { api: 'client' })).body.error?.code).toBe('NO_EDGE_ROUTERS_AVAILABLE');
      await api.close();

      await weftAdmin.close();
      await weft.stop({ keepData: true });
      weft = await startTestApp({ dataDir });
      weftAdmin = await weft.adminClient();
      const now = weft.router!.id;
      expect(now).not.toBe(oldId);
      expect((await weftAdmin.get(`/edge-routers/${now}`)).body.data).toMatchObject({
        name: 'er-builtin',
        isOnline: true,
        isVerified: true,
        isTunnelerEnabled: true,
      });
      (await edgeFor(weft, b)).edge.close();
    } finally {
      await weftAdmin.close();
      await weft.stop();
    }
  });
});

describe('stopping Weft', () => {
  it('app.close() ends every circuit cleanly: SDK ends get StateClosed, router-dialed servers see the end', async () => {
    const weft = await startTestApp();
    const weftAdmin = await weft.adminClient();
    let stopped = false;
    const serverSockets: Socket[] = [];
    const ended: Socket[] = [];
    const server = createServer((s) => {
      serverSockets.push(s);
      s.on('end', () => ended.push(s));
      s.pipe(s);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      await openRouting(weftAdmin);
      const a = await enrolledDevice(weft, weftAdmin, 'stop-host');
      const b = await enrolledDevice(weft, weftAdmin, 'stop-client');
      const sdkHosted = await service(weftAdmin, 'stop-sdk', `@${a.id}`, `@${b.id}`);
      // a service the router hosts itself (host.v1 on its tunneler identity): the router dials the TCP server
      const hostV1 = (await weftAdmin.get(`/config-types?filter=${encodeURIComponent('name = "host.v1"')}`)).body.data[0].id;
      const config = await weftAdmin.create('/configs', {
        name: 'stop-host-v1',
        configTypeId: hostV1,
        data: { protocol: 'tcp', address: '127.0.0.1', port: (server.address() as { port: number }).port },
      });
      const routerHosted = await service(weftAdmin, 'stop-router', `@${weft.router!.id}`, `@${b.id}`, {}, { configs: [config] });
      await expect.poll(() => weft.router!.status().terminators.some((t) => t.serviceId === routerHosted && t.kind === 'host')).toBe(true);

      const { h, c, hostConnId } = await circuit(weft, sdkHosted, a, b);
      const toRouter = await c.edge.dial(4, (await serviceSession(c.api, routerHosted, 'Dial')).token);
      expect(toRouter.contentType).toBe(EdgeType.StateConnected);
      c.edge.send(4, 'echo me');
      expect((await c.edge.until(() => c.edge.data.find((d) => d.connId === 4))).body.toString()).toBe('echo me');
      expect(weft.router!.status().circuits).toHaveLength(2);

      await weftAdmin.close();
      stopped = true;
      await weft.stop();
      expect(closedWith(c.edge, 3, 'the router is stopping')).toBe(true);
      expect(closedWith(c.edge, 4, 'the router is stopping')).toBe(true);
      expect(closedWith(h.edge, hostConnId, 'the router is stopping')).toBe(true);
      await c.edge.until(() => c.edge.closed);
      await h.edge.until(() => h.edge.closed);
      await expect.poll(() => ended.length).toBe(1);
    } finally {
      if (!stopped) await weftAdmin.close().then(() => weft.stop());
      serverSockets.forEach((s) => s.destroy());
      await new Promise((r) => server.close(r));
    }
  });
});
