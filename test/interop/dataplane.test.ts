// Weft's built-in edge router carrying traffic for the real OpenZiti Go SDK and `ziti tunnel`, against `npm start`
// on port 0: binds become terminators, dials echo bytes back, policy and session state refuse or end connections.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/app';
import type { ApiClient } from '../support/client';
import { startWeftProcess, type WeftProcess } from '../support/weftProcess';
import { eventually, openzitiTools, run, sdkClient, ToolProcess, ZitiCli, echoServer as startEchoServer, idByName } from './tools';

const PASSWORD = 'interop-admin-password-1';
let weft: WeftProcess;
let cli: ZitiCli;
let admin: ApiClient;
let sdk: string;
let routerId: string;
const files: Record<string, string> = {};

/** An identity enrolled with the CLI; returns its id. */
async function identity(name: string, ...attrs: string[]): Promise<string> {
  const { id, file } = await cli.enrolledIdentity(name, attrs);
  files[name] = file;
  return id;
}

const terminatorsOf = async (service: string) =>
  (await admin.get(`/terminators?filter=${encodeURIComponent(`service = "${await idOf('services', service)}"`)}`)).body.data as any[];
const idOf = (kind: string, name: string) => idByName(admin, kind, name);

/** `weft-sdk-client echo-server` for a service, once its terminator is established. */
const echoServer = (identityName: string, service: string): Promise<ToolProcess> => startEchoServer(sdk, files[identityName]!, service);

beforeAll(async () => {
  const tools = openzitiTools();
  sdk = tools.sdkClient;
  weft = await startWeftProcess(
    tempDir(),
    ['--api-address', '127.0.0.1:0', '--console-address', '127.0.0.1:0', '--router-listener', 'tls:127.0.0.1:0'],
    {
      WEFT_ADMIN_USERNAME: 'admin',
      WEFT_ADMIN_PASSWORD: PASSWORD,
    },
  );
  cli = new ZitiCli(tools.ziti);
  await cli.ok('edge', 'login', weft.api, '-u', 'admin', '-p', PASSWORD, '-y');
  admin = await weft.login('admin', PASSWORD);
  routerId = (await idOf('edge-routers', 'er-builtin'))!;
  await identity('host', 'hosts');
  await identity('client', 'clients');
  await identity('stranger');
  await cli.create('service', 'echo', '-e', 'ON');
  await cli.create('service-policy', 'echo-bind', 'Bind', '--identity-roles', '#hosts', '--service-roles', '@echo');
  await cli.create('service-policy', 'echo-dial', 'Dial', '--identity-roles', '#clients', '--service-roles', '@echo');
  await cli.create('edge-router-policy', 'all-routers', '--identity-roles', '#all', '--edge-router-roles', '#all');
  await cli.create('service-edge-router-policy', 'all-services', '--service-roles', '#all', '--edge-router-roles', '#all');
});
afterAll(async () => {
  await admin?.close();
  await weft?.stop();
});

describe('the built-in edge router with the Go SDK', { timeout: 180_000 }, () => {
  it('is an online edge router offered in sessions and in /current-identity/edge-routers', async () => {
    const er = (await admin.get(`/edge-routers/${routerId}`)).body.data;
    expect(er).toMatchObject({ name: 'er-builtin', isOnline: true, isVerified: true, isTunnelerEnabled: true });
    expect(er.supportedProtocols.tls).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
    expect(weft.banner).toContain(`edge router:     ${er.supportedProtocols.tls}`);
    const [probe] = await sdkClient(sdk, ['probe', '--identity', files.client!, '--service', 'echo']);
    // the Go SDK keeps `urls` as sent and turns supportedProtocols into its address form, tls:host:port
    const address = { tls: er.supportedProtocols.tls.replace('tls://', 'tls:') };
    expect(probe!.session.edgeRouters).toEqual([{ name: 'er-builtin', urls: er.supportedProtocols, supportedProtocols: address }]);
  });

  it('Bind: a terminator appears, and goes when the binding ends or the SDK disconnects', async () => {
    const server = await echoServer('host', 'echo');
    const [t] = await terminatorsOf('echo');
    expect(t).toMatchObject({ binding: 'edge', routerId, router: { id: routerId, name: 'er-builtin' } });
    const serviceId = await idOf('services', 'echo');
    expect((await admin.get(`/services/${serviceId}/terminators`)).body.data.map((x: any) => x.id)).toEqual([t.id]);
    server.end(); // the SDK closes its listener: Unbind
    await server.exited;
    await eventually(async () => (await terminatorsOf('echo')).length === 0, 20_000, 'the terminator to go after unbind');

    const killed = await echoServer('host', 'echo');
    expect(await terminatorsOf('echo')).toHaveLength(1);
    killed.kill('SIGKILL'); // no Unbind: the connection just drops
    await eventually(async () => (await terminatorsOf('echo')).length === 0, 20_000, 'the terminator to go after a disconnect');
  });

  it('Dial: a 10 MB echo comes back byte-identical over an end-to-end encrypted service; 50 concurrent dials succeed', async () => {
    expect((await admin.get(`/services/${await idOf('services', 'echo')}`)).body.data.encryptionRequired).toBe(true);
    const server = await echoServer('host', 'echo');
    try {
      const big = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', String(10 * 1024 * 1024)], 120_000);
      expect(big[0]).toMatchObject({ bytes: 10 * 1024 * 1024 });
      const many = await sdkClient(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--bytes', '65536', '--count', '50'], 120_000);
      expect(many.at(-1)).toMatchObject({ ok: 50, failed: 0 });
    } finally {
      server.end();
      await server.exited;
    }
  });

  it("refuses an identity without a Dial policy with the SDK's normal error", async () => {
    const r = await run(sdk, ['dial', '--identity', files.stranger!, '--service', 'echo']);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/service 'echo' not found/);
  });

  for (const [what, end] of [
    [
      'its session is deleted',
      async () => {
        const sessions = (
          await admin.get(`/sessions?filter=${encodeURIComponent(`identityId = "${await idOf('identities', 'client')}" and type = "Dial"`)}`)
        ).body.data;
        for (const s of sessions) expect((await admin.del(`/sessions/${s.id}`)).status).toBe(200);
      },
    ],
    [
      'the identity is disabled',
      async () => {
        expect((await admin.post(`/identities/${await idOf('identities', 'client')}/disable`, { durationMinutes: 0 })).status).toBe(200);
      },
    ],
    [
      'the service is deleted',
      async () => {
        expect((await admin.del(`/services/${await idOf('services', 'echo')}`)).status).toBe(200);
      },
    ],
  ] as const) {
    it(`closes an open connection when ${what}`, async () => {
      const server = await echoServer('host', 'echo');
      const dialer = new ToolProcess(sdk, ['dial', '--identity', files.client!, '--service', 'echo', '--hold']);
      try {
        await dialer.waitFor((l) => l.holding === true);
        await end();
        const line = await dialer.waitFor((l) => 'ended' in l);
        expect(line.ended).not.toBe('stdin closed');
      } finally {
        dialer.end();
        server.end();
        await Promise.all([dialer.exited, server.exited]);
      }
      if (what === 'the identity is disabled') {
        const refused = await run(sdk, ['dial', '--identity', files.client!, '--service', 'echo']);
        expect(refused.code).not.toBe(0);
        await admin.post(`/identities/${await idOf('identities', 'client')}/enable`, {});
      }
      if (what === 'the service is deleted') await cli.create('service', 'echo', '-e', 'ON');
    });
  }
});

describe('ziti tunnel through the built-in router', { timeout: 180_000 }, () => {
  let http: Server;
  let httpPort: number;
  beforeAll(async () => {
    http = createServer((req, res) => res.end(`hello from the hosted server: ${req.url}`));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    httpPort = (http.address() as { port: number }).port;
    await cli.create('config', 'web-host', 'host.v1', JSON.stringify({ protocol: 'tcp', address: '127.0.0.1', port: httpPort }));
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  });

  /** `ziti tunnel proxy <service>:<port>` for the client identity; resolves with the local port once it listens. */
  async function proxy(service: string): Promise<{ url: string; stop(): Promise<void> }> {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const p = new ToolProcess(cli.bin, ['tunnel', 'proxy', `${service}:${port}`, '-i', files.client!], { cwd: cli.cwd });
    const url = `http://127.0.0.1:${port}/path?q=1`;
    await eventually(
      async () =>
        await fetch(url)
          .then((r) => r.ok)
          .catch(() => false),
      30_000,
      `ziti tunnel proxy for ${service}`,
    );
    return { url, stop: async () => (p.kill(), void (await p.exited)) };
  }

  it('ziti tunnel host hosts a plain HTTP server that ziti tunnel proxy reaches as a service', async () => {
    await identity('tunnel-host');
    await cli.create('service', 'web-tunnel', '--configs', 'web-host');
    await cli.create('service-policy', 'web-tunnel-bind', 'Bind', '--identity-roles', '@tunnel-host', '--service-roles', '@web-tunnel');
    await cli.create('service-policy', 'web-tunnel-dial', 'Dial', '--identity-roles', '#clients', '--service-roles', '@web-tunnel');
    const host = new ToolProcess(cli.bin, ['tunnel', 'host', '-i', files['tunnel-host']!], { cwd: cli.cwd });
    try {
      await eventually(async () => (await terminatorsOf('web-tunnel')).length > 0, 30_000, 'ziti tunnel host to bind');
      const p = await proxy('web-tunnel');
      try {
        expect(await (await fetch(p.url)).text()).toBe('hello from the hosted server: /path?q=1');
      } finally {
        await p.stop();
      }
    } finally {
      host.kill();
      await host.exited;
    }
  });

  it('the router itself hosts a host.v1 service its router identity may Bind', async () => {
    await cli.create('service', 'web-router', '--configs', 'web-host');
    await cli.create('service-policy', 'web-router-bind', 'Bind', '--identity-roles', '@er-builtin', '--service-roles', '@web-router');
    await cli.create('service-policy', 'web-router-dial', 'Dial', '--identity-roles', '#clients', '--service-roles', '@web-router');
    const [t] = await eventually(
      async () => {
        const list = await terminatorsOf('web-router');
        return list.length ? list : undefined;
      },
      20_000,
      'the router-hosted terminator',
    );
    expect(t).toMatchObject({ binding: 'tunnel', address: `tcp:127.0.0.1:${httpPort}`, routerId });
    const p = await proxy('web-router');
    try {
      expect(await (await fetch(p.url)).text()).toBe('hello from the hosted server: /path?q=1');
    } finally {
      await p.stop();
    }
    // taking the Bind away takes the terminator away
    await cli.ok('edge', 'delete', 'service-policy', 'web-router-bind');
    await eventually(async () => (await terminatorsOf('web-router')).length === 0, 20_000, 'the router-hosted terminator to go');
  });
});
