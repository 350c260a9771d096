// The built-in router as a transit hop: two stock `ziti router run` (v1.7.2) that accept no links (dialers only) each
// link to the built-in router's link listener and not to each other, so a circuit from an SDK at router A to a host at
// router B can only cross the built-in router (3 hops: A → built-in → B). Payloads and acks pass through it as they
// came; the fabric API shows the path; the circuit ends everywhere when the dialer closes; a revoked Dial policy closes
// it within a second. Router A killed mid-circuit: the circuit ends; restarted, A links again and dials pass again.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledRouter, runRouter, stopRouters, type RouterDir } from './stockRouters';
import { dialRevokedWithinASecond, eventually, fabricData, openzitiTools, sdkClient, withHeldDial, type ToolProcess, ZitiCli } from './tools';

let app: TestApp;
let admin: ApiClient;
let cli: ZitiCli;
let sdk: string;
let ra: RouterDir;
let rb: RouterDir;
const procs: Record<string, ToolProcess> = {};
const files: Record<string, string> = {};

const links = (): Promise<any[]> => fabricData(admin, 'links');
const circuits = (): Promise<any[]> => fabricData(admin, 'circuits');

beforeAll(async () => {
  const tools = openzitiTools();
  sdk = tools.sdkClient;
  const dir = tempDir('weft-transit-');
  const configFile = join(dir, 'weft.yml');
  writeFileSync(configFile, 'router:\n  link_listener: tls:127.0.0.1:0\n');
  app = await startTestApp({ configFile });
  admin = await app.adminClient();
  cli = new ZitiCli(tools.ziti);
  await cli.ok('edge', 'login', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
  Object.assign(files, await cli.enrolledIdentities({ host: 'hosts', client: 'clients' }));
  await cli.hostedService('echo', 'hosts', 'clients');
  await cli.create('edge-router-policy', 'clients-at-a', '--identity-roles', '#clients', '--edge-router-roles', '#site-a');
  await cli.create('edge-router-policy', 'hosts-at-b', '--identity-roles', '#hosts', '--edge-router-roles', '#site-b');
  await cli.create('service-edge-router-policy', 'all-routers', '--service-roles', '#all', '--edge-router-roles', '#all');
  ra = await enrolledRouter(tools.ziti, admin, app.urls.ctrl!, 'stock-a', { roleAttributes: ['site-a'], links: 'dial' });
  rb = await enrolledRouter(tools.ziti, admin, app.urls.ctrl!, 'stock-b', { roleAttributes: ['site-b'], links: 'dial' });
  procs.a = runRouter(tools.ziti, ra);
  procs.b = runRouter(tools.ziti, rb);
  await eventually(async () => (await links()).length === 2, 60_000, 'both stock routers linked to the built-in router');
}, 180_000);

afterAll(async () => {
  await stopRouters(procs);
  await admin?.close();
  await app?.stop();
});

describe('the built-in router as a transit hop', { timeout: 180_000 }, () => {
  it('the stock routers link to the built-in router only', async () => {
    const all = await links();
    expect(all.map((l) => [l.sourceRouter.id, l.destRouter.id]).sort()).toEqual(
      [
        [ra.id, app.router!.id],
        [rb.id, app.router!.id],
      ].sort(),
    );
  });

  it('an SDK at router A reaches the host at router B through the built-in router: 10 MB byte-identical', async () => {
    await withHeldDial(sdk, files.host!, files.client!, 'echo', async (dialer) => {
      const big = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', String(10 * 1024 * 1024)], 120_000);
      expect(big[0]).toMatchObject({ bytes: 10 * 1024 * 1024 });
      const [held] = await eventually(
        async () => {
          const live = await circuits();
          return live.length === 1 ? live : undefined;
        },
        15_000,
        'the held circuit alone',
      );
      expect(held.path.nodes.map((n: any) => n.id)).toEqual([ra.id, app.router!.id, rb.id]);
      expect(held.path.links).toHaveLength(2);
      // no end of it at the built-in router: it only forwards
      expect(app.router!.status().circuits).toHaveLength(0);
      dialer.end();
      await dialer.exited;
      await eventually(async () => (await circuits()).length === 0, 30_000, 'the circuit gone');
    });
  });

  it('a revoked Dial policy closes the circuit through the built-in router within a second', async () => {
    await withHeldDial(sdk, files.host!, files.client!, 'echo', (dialer) => dialRevokedWithinASecond(admin, cli, sdk, dialer, files.client!, 'echo'));
  });

  it('router A killed mid-circuit: the circuit through the built-in router ends; restarted, dials pass again', async () => {
    await withHeldDial(sdk, files.host!, files.client!, 'echo', async () => {
      procs.a!.kill('SIGKILL');
      await procs.a!.exited;
      await eventually(async () => (await circuits()).length === 0 && (await links()).length === 1, 30_000, "the circuit and A's link gone");
      procs.a = runRouter(openzitiTools().ziti, ra);
      await eventually(async () => (await links()).length === 2, 60_000, 'A linked again');
      const out = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', String(1024 * 1024)], 120_000);
      expect(out[0]).toMatchObject({ bytes: 1024 * 1024 });
    });
  });
});
