// Two stock `ziti router run` (v1.7.2) attached to Weft with link listeners: Weft tells each where the other accepts
// links, they link, and a circuit from an SDK at one router to a host at the other is routed over the link (2 hops).
// The hosting SDK may only use router B and the dialing SDK only router A (edge router policies), so every dial
// crosses the link. Revocation cuts the 2-hop circuit on both routers; router B killed takes its link and circuits
// with it and dials are refused cleanly; restarted, it links again and traffic flows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledRouter, runRouter, stopRouters, type RouterDir } from './stockRouters';
import { eventually, fabricData, openzitiTools, run, sdkClient, ToolProcess, ZitiCli, echoServer as startEchoServer, idByName } from './tools';

let app: TestApp;
let admin: ApiClient;
let cli: ZitiCli;
let sdk: string;
let ziti: string;
let ra: RouterDir;
let rb: RouterDir;
const procs: Record<string, ToolProcess> = {};
const files: Record<string, string> = {};

const idOf = (kind: string, name: string) => idByName(admin, kind, name);
/** Links between the two stock routers (the built-in router dials each of them too). */
const links = async () => ((await fabricData(admin, 'links')) as any[]).filter((l) => ![l.sourceRouter.id, l.destRouter.id].includes(app.router!.id));
/** The stock routers the built-in router has dialed a link to. */
const builtinLinkedTo = async () =>
  ((await fabricData(admin, 'links')) as any[])
    .filter((l) => l.sourceRouter.id === app.router!.id)
    .map((l) => l.destRouter.name as string)
    .sort();
const circuits = (): Promise<any[]> => fabricData(admin, 'circuits');
const online = async (r: RouterDir) => (await admin.get(`/edge-routers/${r.id}`)).body.data.isOnline === true;

beforeAll(async () => {
  const tools = openzitiTools();
  sdk = tools.sdkClient;
  ziti = tools.ziti;
  app = await startTestApp();
  admin = await app.adminClient();
  cli = new ZitiCli(ziti);
  await cli.ok('edge', 'login', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
  Object.assign(files, await cli.enrolledIdentities({ host: 'hosts', client: 'clients' }));
  await cli.hostedService('echo', 'hosts', 'clients');
  await cli.create('edge-router-policy', 'clients-at-a', '--identity-roles', '#clients', '--edge-router-roles', '#site-a');
  await cli.create('edge-router-policy', 'hosts-at-b', '--identity-roles', '#hosts', '--edge-router-roles', '#site-b');
  await cli.create('service-edge-router-policy', 'stock-services', '--service-roles', '#all', '--edge-router-roles', '#stock');
  ra = await enrolledRouter(ziti, admin, app.urls.ctrl!, 'stock-a', { roleAttributes: ['stock', 'site-a'], links: true });
  rb = await enrolledRouter(ziti, admin, app.urls.ctrl!, 'stock-b', { roleAttributes: ['stock', 'site-b'], links: true });
  procs.a = runRouter(ziti, ra);
  procs.b = runRouter(ziti, rb);
  await eventually(async () => (await online(ra)) && (await online(rb)), 60_000, 'both stock routers online');
}, 180_000);

afterAll(async () => {
  await stopRouters(procs);
  await admin?.close();
  await app?.stop();
});

describe('two stock routers linked through Weft', { timeout: 180_000 }, () => {
  it('link: the routers learn where the other listens, link, and the fabric API and `ziti fabric list links` show it', async () => {
    // both routers may dial at once: the duplicate is faulted away and one link stays (the CLI lists it)
    await eventually(
      async () => {
        const l = await links();
        return l.length === 1 && (await cli.ok('fabric', 'list', 'links')).includes(l[0].id);
      },
      60_000,
      'one link between the routers, listed by the CLI',
    );
    const [link] = await links();
    expect([link.sourceRouter.name, link.destRouter.name].sort()).toEqual(['stock-a', 'stock-b']);
    expect(link).toMatchObject({ protocol: 'tls', state: 'Connected', down: false });
    expect((await fabricData(admin, `links/${link.id}`)).id).toBe(link.id);
    const router = await fabricData(admin, `routers/${rb.id}`);
    expect(router.listenerAddresses).toEqual([{ address: `tls:127.0.0.1:${rb.linkPort}`, protocol: 'tls' }]);
    expect(await cli.ok('fabric', 'list', 'links')).toMatch(/stock-[ab] +│ stock-[ab] +│ +1 │.*│ Connected │ +up │/);
    // the built-in router, without a link listener of its own, dials each of theirs
    await eventually(async () => (await builtinLinkedTo()).join() === 'stock-a,stock-b', 60_000, 'the built-in router linked to both');
  });

  it('a dial at router A reaches the host at router B over the link: 10 MB byte-identical, the circuit shows its 2-hop path', async () => {
    const server = await startEchoServer(sdk, files.host!, 'echo');
    const dialer = new ToolProcess(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--hold']);
    try {
      await eventually(
        async () => ((await admin.get(`/terminators?filter=${encodeURIComponent(`router = "${rb.id}"`)}`)).body.data as any[]).length === 1,
        30_000,
        'the host bound at router B',
      );
      const big = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', String(10 * 1024 * 1024)], 120_000);
      expect(big[0]).toMatchObject({ bytes: 10 * 1024 * 1024 });
      await dialer.waitFor((l) => l.holding === true);
      // the 10 MB dial's circuit ends once its router reports it (asynchronously): the held one is then alone
      const [held] = await eventually(
        async () => {
          const live = await circuits();
          return live.length === 1 ? live : undefined;
        },
        10_000,
        'the held circuit alone',
      );
      expect(held.path.nodes.map((n: any) => n.name)).toEqual(['stock-a', 'stock-b']);
      expect(held.path.links.map((l: any) => l.id)).toEqual([(await links())[0].id]);
      expect(await cli.ok('fabric', 'list', 'circuits')).toContain(held.id);

      // revoked: the circuit ends on both routers (the dialer's connection closes) within a second
      const revoked = Date.now();
      expect((await admin.del(`/service-policies/${await idOf('service-policies', 'echo-dial')}`)).status).toBe(200);
      const line = await dialer.waitFor((l) => 'ended' in l);
      expect(line.ended).not.toBe('stdin closed');
      expect(Date.now() - revoked).toBeLessThan(1_000);
      expect(await circuits()).toEqual([]);
    } finally {
      dialer.end();
      server.end();
      await Promise.all([dialer.exited, server.exited]);
      await cli.create('service-policy', 'echo-dial', 'Dial', '--identity-roles', '#clients', '--service-roles', '@echo');
    }
  });

  it('router B killed: offline, the link and circuits gone, dials refused cleanly; restarted: linked again, dials work', async () => {
    const server = await startEchoServer(sdk, files.host!, 'echo');
    const dialer = new ToolProcess(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--hold']);
    try {
      await dialer.waitFor((l) => l.holding === true);
      procs.b!.kill('SIGKILL');
      await procs.b!.exited;
      await eventually(async () => !(await online(rb)), 30_000, 'router B offline');
      // its links and the circuit over them are gone, router A unrouted it (the dialer's connection closed)
      expect(await links()).toEqual([]);
      await eventually(async () => (await builtinLinkedTo()).join() === 'stock-a', 30_000, 'the built-in router’s link to B gone');
      await dialer.waitFor((l) => 'ended' in l);
      expect(await circuits()).toEqual([]);
      const refused = await run(sdk, ['dial', '--identity', files.client!, '--service', 'echo']);
      expect(refused.code).not.toBe(0);

      procs.b = runRouter(ziti, rb);
      await eventually(async () => (await online(rb)) && (await links()).length === 1, 60_000, 'router B back and linked');
      await eventually(async () => (await builtinLinkedTo()).join() === 'stock-a,stock-b', 60_000, 'the built-in router linked to B again');
      await eventually(
        async () => ((await admin.get(`/terminators?filter=${encodeURIComponent(`router = "${rb.id}"`)}`)).body.data as any[]).length === 1,
        60_000,
        'the host bound again at router B',
      );
      const echoed = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', '100000'], 60_000);
      expect(echoed[0]).toMatchObject({ bytes: 100000 });
    } finally {
      dialer.end();
      server.end();
      await Promise.all([dialer.exited, server.exited]);
    }
  });
});
