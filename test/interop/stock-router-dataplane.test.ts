// The real OpenZiti Go SDK through a stock `ziti router run` (v1.7.2) attached to Weft's control channel: the router
// gets the data model (it verifies the SDKs' OIDC tokens and session JWTs with Weft's keys and checks policies
// itself), a Bind becomes a terminator on that router, a Dial a circuit Weft routes through it, and revoked access
// closes the router's circuits. Only the stock router serves the SDKs here: the edge router policies name it alone.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { echoThroughStockRouter, freePort, runRouter, type RouterDir } from './stockRouters';
import {
  eventually,
  openzitiTools,
  run,
  sdkClient,
  ToolProcess,
  ZitiCli,
  echoServer as startEchoServer,
  idByName,
  withHeldDial,
  dialRevokedWithinASecond,
} from './tools';

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

const idOf = (kind: string, name: string) => idByName(admin, kind, name);
const terminatorsOf = async (service: string) =>
  (await admin.get(`/terminators?filter=${encodeURIComponent(`service = "${await idOf('services', service)}"`)}`)).body.data as any[];

const echoServer = (identityName: string, service: string): Promise<ToolProcess> => startEchoServer(sdk, files[identityName]!, service);

beforeAll(async () => {
  const tools = openzitiTools();
  sdk = tools.sdkClient;
  app = await startTestApp();
  admin = await app.adminClient();
  cli = new ZitiCli(tools.ziti);
  await cli.ok('edge', 'login', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
  await identity('host', 'hosts');
  await identity('client', 'clients');
  ({ router, proc: routerProc } = await echoThroughStockRouter(tools.ziti, cli, admin, app.urls.ctrl!, 'stock-r1'));
}, 180_000);

afterAll(async () => {
  // WEFT_ROUTER_LOG=<file>: the stock router's log, for looking into a failure
  if (process.env.WEFT_ROUTER_LOG)
    writeFileSync(
      process.env.WEFT_ROUTER_LOG,
      routerProc.lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + routerProc.stderr.join(''),
    );
  routerProc?.kill('SIGKILL');
  await routerProc?.exited;
  await admin?.close();
  await app?.stop();
});

describe('the Go SDK through a stock router', { timeout: 180_000 }, () => {
  it('is offered the stock router alone, with the URL of its edge listener', async () => {
    const [probe] = await sdkClient(sdk, ['probe', '--identity', files.client!, '--service', 'echo']);
    expect(probe!.session.edgeRouters.map((r: any) => r.name)).toEqual(['stock-r1']);
    expect(probe!.session.edgeRouters[0].urls).toEqual({ tls: `tls://127.0.0.1:${router.edgePort}` });
  });

  it('Bind: a terminator on the stock router, gone when the host unbinds', async () => {
    const server = await echoServer('host', 'echo');
    const [t] = await terminatorsOf('echo');
    expect(t).toMatchObject({ binding: 'edge', routerId: router.id });
    server.end();
    await server.exited;
    await eventually(async () => (await terminatorsOf('echo')).length === 0, 20_000, 'the terminator to go after unbind');
  });

  it('Dial: a 10 MB echo comes back byte-identical, and 50 concurrent dials succeed', async () => {
    const server = await echoServer('host', 'echo');
    try {
      const big = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', String(10 * 1024 * 1024)], 120_000);
      expect(big[0]).toMatchObject({ bytes: 10 * 1024 * 1024 });
      const many = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', '65536', '--count', '50'], 120_000);
      expect(many.at(-1)).toMatchObject({ ok: 50, failed: 0 });
      // the circuits were the controller's: routed on the stock router, then ended
      await eventually(() => app.ctrl!.fabric.circuitsOf(router.id).length === 0, 20_000, 'the circuits to end');
    } finally {
      server.end();
      await server.exited;
    }
  });

  it('a revoked Dial policy closes the open circuit on the stock router, and new dials are refused', async () => {
    await withHeldDial(sdk, files.host!, files.client!, 'echo', async (dialer) => {
      expect(app.ctrl!.fabric.circuitsOf(router.id)).toHaveLength(1);
      await dialRevokedWithinASecond(admin, cli, sdk, dialer, files.client!, 'echo');
    });
  });
});

describe('ziti tunnel through a stock router', { timeout: 180_000 }, () => {
  it('ziti tunnel host hosts a plain HTTP server that ziti tunnel proxy reaches, both through the stock router', async () => {
    const http = createServer((req, res) => res.end(`hello through the stock router: ${req.url}`));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const httpPort = (http.address() as AddressInfo).port;
    await identity('tunnel-host');
    await cli.create('config', 'web-host', 'host.v1', JSON.stringify({ protocol: 'tcp', address: '127.0.0.1', port: httpPort }));
    await cli.create('service', 'web', '--configs', 'web-host');
    await cli.create('service-policy', 'web-bind', 'Bind', '--identity-roles', '@tunnel-host', '--service-roles', '@web');
    await cli.create('service-policy', 'web-dial', 'Dial', '--identity-roles', '#clients', '--service-roles', '@web');
    const host = new ToolProcess(cli.bin, ['tunnel', 'host', '-i', files['tunnel-host']!], { cwd: cli.cwd });
    const proxyPort = await freePort();
    const proxy = new ToolProcess(cli.bin, ['tunnel', 'proxy', `web:${proxyPort}`, '-i', files.client!], { cwd: cli.cwd });
    try {
      await eventually(
        async () => (await terminatorsOf('web')).some((t) => t.routerId === router.id),
        30_000,
        'ziti tunnel host to bind at the stock router',
      );
      const url = `http://127.0.0.1:${proxyPort}/path?q=1`;
      const body = await eventually(
        async () =>
          await fetch(url).then(
            (r) => (r.ok ? r.text() : undefined),
            () => undefined,
          ),
        30_000,
        'ziti tunnel proxy',
      );
      expect(body).toBe('hello through the stock router: /path?q=1');
    } finally {
      proxy.kill();
      host.kill();
      await Promise.all([proxy.exited, host.exited]);
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    }
  });
});

describe('a stock router that dies and comes back', { timeout: 180_000 }, () => {
  it('killed: offline, its terminators gone, a dial fails cleanly; restarted: online, resynced, the host binds again and dials work', async () => {
    const server = await echoServer('host', 'echo');
    try {
      routerProc.kill('SIGKILL');
      await routerProc.exited;
      await eventually(async () => !(await admin.get(`/edge-routers/${router.id}`)).body.data.isOnline, 30_000, 'the router offline');
      await eventually(async () => (await terminatorsOf('echo')).length === 0, 30_000, 'its terminators gone');
      const refused = await run(sdk, ['dial', '--identity', files.client!, '--service', 'echo']);
      expect(refused.code).not.toBe(0);

      routerProc = runRouter(openzitiTools().ziti, router);
      await eventually(async () => (await admin.get(`/edge-routers/${router.id}`)).body.data.isOnline, 60_000, 'the router online again');
      // the SDK hosting the service binds again through the restarted router (its data model resynced: the
      // session JWTs verify), and a dial goes through
      await eventually(async () => (await terminatorsOf('echo')).length === 1, 60_000, 'the host bound again');
      const echoed = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', '100000'], 60_000);
      expect(echoed[0]).toMatchObject({ bytes: 100000 });
    } finally {
      server.end();
      await server.exited;
    }
  });
});
