// The real `ziti fabric` commands (v1.7.2) against Weft's /fabric/v1: routers (the built-in router and a stock
// `ziti router run` on the control channel, both connected), links (none), services, terminators, circuits of both routers
// with their path, and `ziti fabric delete circuit` ending a held dial; `ziti edge validate service-hosting`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledRouter, runRouter, type RouterDir } from './stockRouters';
import { eventually, openzitiTools, ToolProcess, ZitiCli, echoServer as startEchoServer } from './tools';

let app: TestApp;
let admin: ApiClient;
let cli: ZitiCli;
let sdk: string;
let router: RouterDir;
let routerProc: ToolProcess;
const files: Record<string, string> = {};

async function identity(name: string, ...attrs: string[]): Promise<string> {
  const { id, file } = await cli.enrolledIdentity(name, attrs);
  files[name] = file;
  return id;
}

const echoServer = (service: string): Promise<ToolProcess> => startEchoServer(sdk, files.host!, service);

async function heldDial(service: string): Promise<ToolProcess> {
  const p = new ToolProcess(sdk, ['dial', '--identity', files.client!, '--service', service, '--hold']);
  await p.waitFor((l) => l.holding === true);
  return p;
}

beforeAll(async () => {
  const tools = openzitiTools();
  sdk = tools.sdkClient;
  app = await startTestApp();
  admin = await app.adminClient();
  cli = new ZitiCli(tools.ziti);
  await cli.ok('edge', 'login', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
  await identity('host', 'hosts');
  await identity('client', 'clients');
  // echo-stock runs through the stock router only, echo-builtin through the built-in router only
  for (const [service, routers] of [
    ['echo-stock', '#stock'],
    ['echo-builtin', `@${app.router!.id}`],
  ] as const) {
    await cli.create('service', service, '-e', 'ON');
    await cli.create('service-policy', `${service}-bind`, 'Bind', '--identity-roles', '#hosts', '--service-roles', `@${service}`);
    await cli.create('service-policy', `${service}-dial`, 'Dial', '--identity-roles', '#clients', '--service-roles', `@${service}`);
    await cli.create('service-edge-router-policy', `${service}-routers`, '--service-roles', `@${service}`, '--edge-router-roles', routers);
  }
  await cli.create('edge-router-policy', 'all-routers', '--identity-roles', '#all', '--edge-router-roles', '#all');
  router = await enrolledRouter(tools.ziti, admin, app.urls.ctrl!, 'stock-r1', { roleAttributes: ['stock'] });
  routerProc = runRouter(tools.ziti, router);
  await eventually(
    async () => (await admin.get(`/edge-routers/${router.id}`)).body.data.supportedProtocols?.tls === `tls://127.0.0.1:${router.edgePort}`,
    60_000,
    'the stock router online with its edge listener',
  );
}, 180_000);

afterAll(async () => {
  routerProc?.kill('SIGKILL');
  await routerProc?.exited;
  await admin?.close();
  await app?.stop();
});

describe('ziti fabric against Weft', { timeout: 180_000 }, () => {
  it('lists routers: the built-in router and the stock router, connected, with their versions', async () => {
    const r = await cli.json('fabric', 'list', 'routers');
    const byId = new Map<string, any>(r.data.map((x: any) => [x.id, x]));
    expect(byId.get(router.id)).toMatchObject({ name: 'stock-r1', connected: true, versionInfo: { version: 'v1.7.2' } });
    expect(byId.get(app.router!.id)).toMatchObject({ connected: true, disabled: false });
    const table = await cli.ok('fabric', 'list', 'routers');
    expect(table).toContain('stock-r1');
    expect(table).toContain('v1.7.2 on');
  });

  it('lists no links, and the services', async () => {
    const r = await cli.json('fabric', 'list', 'links');
    expect(r.data).toEqual([]);
    expect(r.meta.pagination.totalCount).toBe(0);
    await cli.ok('fabric', 'list', 'links');
    const services = await cli.json('fabric', 'list', 'services', 'name contains "echo" sort by name');
    expect(services.data.map((s: any) => s.name)).toEqual(['echo-builtin', 'echo-stock']);
    expect(await cli.ok('fabric', 'list', 'services')).toContain('echo-stock');
    expect(await cli.fails('fabric', 'list', 'routers', 'name = = 1')).toMatch(/INVALID_FILTER|400/);
  });

  it('lists terminators and circuits of both routers with their path, and deletes circuits', async () => {
    const hosts = [await echoServer('echo-stock'), await echoServer('echo-builtin')];
    const dials: ToolProcess[] = [];
    try {
      const terms = await cli.json('fabric', 'list', 'terminators');
      const routersOf = new Set(terms.data.map((t: any) => t.routerId));
      expect(routersOf).toEqual(new Set([router.id, app.router!.id]));
      expect(await cli.ok('fabric', 'list', 'terminators')).toContain('echo-stock');
      const hosting = await cli.ok('edge', 'validate', 'service-hosting');
      // the stock router's terminators do not name their host yet (the control channel does not pass it on)
      expect(hosting).toMatch(/service echo-stock \(\S+\) hosted by host \(\S+\) with \d+ terminators/);
      expect(hosting).toMatch(/service echo-builtin \(\S+\) hosted by host \(\S+\) with 1 terminators/);

      dials.push(await heldDial('echo-stock'), await heldDial('echo-builtin'));
      const circuits = (await cli.json('fabric', 'list', 'circuits')).data as any[];
      expect(circuits).toHaveLength(2);
      const stock = circuits.find((c) => c.service.name === 'echo-stock');
      const builtin = circuits.find((c) => c.service.name === 'echo-builtin');
      expect(stock.path.nodes.map((n: any) => n.id)).toEqual([router.id]);
      expect(builtin.path.nodes.map((n: any) => n.id)).toEqual([app.router!.id]);
      const table = await cli.ok('fabric', 'list', 'circuits');
      expect(table).toContain('r/stock-r1');
      expect(table).toContain(stock.id);

      for (const [c, dial] of [
        [stock, dials[0]!],
        [builtin, dials[1]!],
      ] as const) {
        await cli.ok('fabric', 'delete', 'circuit', c.id);
        const line = await dial.waitFor((l) => 'ended' in l);
        expect(line.ended).not.toBe('stdin closed');
      }
      await eventually(async () => (await cli.json('fabric', 'list', 'circuits')).data.length === 0, 20_000, 'no circuits left');
      // each deletion is in the audit log with the CLI's caller
      const audited = (await admin.get(`/audit-log?filter=${encodeURIComponent('source = "fabric" and action = "delete" and outcome = "success"')}`))
        .body.data as any[];
      expect(audited.map((e) => e.entityId).sort()).toEqual([stock.id, builtin.id].sort());
      expect(audited[0]).toMatchObject({ entityType: 'circuits', identityName: expect.any(String) });
      expect(await cli.fails('fabric', 'delete', 'circuit', stock.id)).toMatch(/NOT_FOUND|404/);
    } finally {
      for (const p of [...dials, ...hosts]) p.end();
      await Promise.all([...dials, ...hosts].map((p) => p.exited));
    }
  });
});
