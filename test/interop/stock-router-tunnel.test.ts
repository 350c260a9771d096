// Tunneler-enabled stock routers (`ziti router run` v1.7.2 with its tunnel binding, which reads services and policies
// from the router data model Weft sends): router H hosts a plain TCP echo server through its host.v1 config (a
// `tunnel` terminator whose host is H's own identity), router P proxies the service on a local port (its own dial,
// CreateTunnelCircuitV2, checked against P's identity's Dial policy). A Go SDK at P and P's proxy port both reach the
// server across the link P → H, byte-identical; P's Dial policy revoked closes its proxied connection.
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledRouter, freePort, runRouter, stopRouters, type RouterDir } from './stockRouters';
import { eventually, fabricData, openzitiTools, sdkClient, ToolProcess, ZitiCli, idByName } from './tools';

let app: TestApp;
let admin: ApiClient;
let cli: ZitiCli;
let sdk: string;
let echo: Server;
let proxyPort: number;
let echoPort: number;
let rh: RouterDir;
let rp: RouterDir;
const procs: Record<string, ToolProcess> = {};
const files: Record<string, string> = {};

const idOf = (kind: string, name: string) => idByName(admin, kind, name);
const tunnelTerminators = async () =>
  ((await admin.get(`/terminators?filter=${encodeURIComponent('binding = "tunnel"')}`)).body.data as any[]).filter((t) => t.routerId === rh.id);

/** Bytes through a TCP connection to the proxy port and back, once all have come back (no half-close: the proxy closes both ways on one). */
function echoThrough(port: number, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const s = connect(port, '127.0.0.1', () => s.write(payload));
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      got += d.length;
      if (got >= payload.length) s.destroy();
    });
    s.on('close', () => resolve(Buffer.concat(chunks)));
    s.on('error', reject);
  });
}

beforeAll(async () => {
  const tools = openzitiTools();
  sdk = tools.sdkClient;
  app = await startTestApp();
  admin = await app.adminClient();
  cli = new ZitiCli(tools.ziti);
  await cli.ok('edge', 'login', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
  echo = createServer((s: Socket) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  echoPort = (echo.address() as AddressInfo).port;
  files.client = (await cli.enrolledIdentity('client', ['clients'])).file;
  await cli.create('config', 'echo-host', 'host.v1', JSON.stringify({ protocol: 'tcp', address: '127.0.0.1', port: echoPort }));
  await cli.create('service', 'tcp-echo', '--configs', 'echo-host');
  await cli.create('edge-router-policy', 'clients-at-p', '--identity-roles', '#clients', '--edge-router-roles', '#site-p');
  await cli.create('service-edge-router-policy', 'all-services', '--service-roles', '#all', '--edge-router-roles', '#all');
  proxyPort = await freePort();
  rh = await enrolledRouter(tools.ziti, admin, app.urls.ctrl!, 'stock-h', { roleAttributes: ['site-h'], links: true, tunnel: { mode: 'host' } });
  rp = await enrolledRouter(tools.ziti, admin, app.urls.ctrl!, 'stock-p', {
    roleAttributes: ['site-p'],
    links: true,
    tunnel: { mode: 'proxy', services: [`tcp-echo:${proxyPort}`] },
  });
  // the routers' own identities (named as the routers) exist once the routers do
  await cli.create('service-policy', 'echo-bind', 'Bind', '--identity-roles', '@stock-h', '--service-roles', '@tcp-echo');
  await cli.create('service-policy', 'echo-dial', 'Dial', '--identity-roles', '#clients,@stock-p', '--service-roles', '@tcp-echo');
  procs.h = runRouter(tools.ziti, rh);
  procs.p = runRouter(tools.ziti, rp);
  await eventually(
    async () =>
      // a link between the two (the built-in router's to each are not it; both dial, so until they drop the
      // duplicate there may be two)
      ((await fabricData(admin, 'links')) as any[]).some((l) => l.sourceRouter.id !== app.router!.id) && (await tunnelTerminators()).length === 1,
    60_000,
    'the routers linked, router H hosting the service',
  );
}, 180_000);

afterAll(async () => {
  await stopRouters(procs);
  await admin?.close();
  await app?.stop();
  echo?.close();
});

describe('tunneler-enabled stock routers', { timeout: 180_000 }, () => {
  it('router H hosts the host.v1 service: a tunnel terminator whose host is its own identity', async () => {
    const [t] = await tunnelTerminators();
    expect(t).toMatchObject({ binding: 'tunnel', routerId: rh.id, hostId: rh.id });
  });

  it('a service, its config and its Bind policy created while H runs reach H as change sets: H hosts it, and stops when the policy goes', async () => {
    await cli.create('config', 'echo-host-2', 'host.v1', JSON.stringify({ protocol: 'tcp', address: '127.0.0.1', port: echoPort }));
    await cli.create('service', 'tcp-echo-2', '--configs', 'echo-host-2');
    await cli.create('service-policy', 'echo-bind-2', 'Bind', '--identity-roles', '@stock-h', '--service-roles', '@tcp-echo-2');
    const second = await idOf('services', 'tcp-echo-2');
    const hosting = async () => (await tunnelTerminators()).some((t) => t.serviceId === second);
    await eventually(async () => (await hosting()) || undefined, 30_000, 'router H to host the new service');
    expect((await admin.del(`/service-policies/${await idOf('service-policies', 'echo-bind-2')}`)).status).toBe(200);
    await eventually(async () => !(await hosting()) || undefined, 30_000, 'router H to stop hosting it');
    expect(await tunnelTerminators()).toHaveLength(1);
  });

  it('a Go SDK at router P reaches the TCP server hosted by router H: 10 MB byte-identical over the link', async () => {
    const big = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'tcp-echo', '--bytes', String(10 * 1024 * 1024)], 120_000);
    expect(big[0]).toMatchObject({ bytes: 10 * 1024 * 1024 });
  });

  it('router P proxies the service on a local port (its own dial), and its revoked Dial policy closes the connection', async () => {
    const payload = randomBytes(1024 * 1024);
    const back = await eventually(
      async () => {
        const b = await echoThrough(proxyPort, payload).catch(() => undefined);
        return b?.length === payload.length ? b : undefined;
      },
      30_000,
      'the proxy port to echo',
    );
    expect(back.equals(payload)).toBe(true);
    // the finished connection's circuit ends once P reports it (asynchronously, after the echo is back)
    await eventually(async () => ((await fabricData(admin, 'circuits')) as any[]).length === 0 || undefined, 10_000, 'the finished circuit to end');

    // a held connection through the proxy: its circuit is P's own, ended when P may no longer dial
    const held = connect(proxyPort, '127.0.0.1');
    const closed = new Promise<void>((r) => held.once('close', () => r()));
    held.write('hello');
    await new Promise<void>((r) => held.once('data', () => r()));
    const [circuit] = (await fabricData(admin, 'circuits')) as any[];
    expect(circuit.clientId).toBe(rp.id);
    expect(circuit.path.nodes.map((n: any) => n.name)).toEqual(['stock-p', 'stock-h']);
    await cli.ok('edge', 'update', 'service-policy', 'echo-dial', '--identity-roles', '#clients');
    const revoked = Date.now();
    await closed;
    expect(Date.now() - revoked).toBeLessThan(1_000);
    expect(await idOf('service-policies', 'echo-dial')).toBeTruthy();
  });
});
