import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { openzitiStamp } from '../scripts/openziti-stamp.mjs';
import { createCsr } from '../src/main/core/pki/index';
import { benchConfigFile, cpuMicros, printColumns, startChild, type Child } from './lib';
import { startOpenZiti, zitiBinary } from './openziti';
import { enrollStockRouter, writeStockRouterConfig } from './stockRouter';
import { freePort } from '../test/support/freePort';

/**
 * The data plane: the real OpenZiti Go SDK (weft-sdk-client `dial` against `echo-server`) through Weft's built-in
 * edge router, side by side in one run with the same Go client and server speaking plain TLS through a bare
 * node:tls relay (the floor): one dial's echo stream, 50 concurrent dials, and dial setup latency.
 * The service has encryptionRequired=false, so both paths carry the same bytes (TLS on each hop, no SDK
 * end-to-end encryption). Every process is its own: Weft, the relay, the Go servers and each Go client run.
 * With the pinned `ziti` built, the same runs go through a stock `ziti router run` attached to Weft's control channel
 * too (OpenZiti's own data plane), and the built-in router is checked against it.
 * WEFT_BENCH_CPU_PROF=DIR writes a V8 CPU profile of the Weft process into DIR (node --cpu-prof).
 */

const ADMIN = { username: 'admin', password: 'bench-admin-password' };
const GOAL = 0.7;
const MiB = 1 << 20;
const INSTALL_COMMAND = 'npm run openziti-tools';

export interface DataplaneRow {
  scenario: string;
  target: string;
  mibps?: number;
  p50Ms?: number;
  p99Ms?: number;
  note?: string;
}

/** weft-sdk-client from scripts/openziti-tools.sh's cache, or why it cannot be used. */
function sdkClientPath(): { bin: string } | { missing: string } {
  const dir = process.env.WEFT_OPENZITI_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'weft', 'openziti');
  const bin = join(dir, 'weft-sdk-client');
  if (!existsSync(bin)) return { missing: `${bin} is missing` };
  const stamp = existsSync(join(dir, 'stamp')) ? readFileSync(join(dir, 'stamp'), 'utf8').trim() : '';
  if (stamp !== openzitiStamp()) return { missing: `${bin} is out of date` };
  return { bin };
}

// ---- Go tool processes ------------------------------------------------------------------------------------

type Line = Record<string, any>;

/** Runs weft-sdk-client to completion; its JSON lines (throws with its stderr when it fails). */
function runTool(bin: string, args: string[], timeoutMs = 120_000): Promise<Line[]> {
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    proc.stdout.on('data', (d: Buffer) => out.push(d));
    proc.stderr.on('data', (d: Buffer) => err.push(d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      const text = Buffer.concat(out).toString();
      if (code !== 0)
        return reject(
          new Error(`weft-sdk-client ${args.join(' ')} exited ${code}\n${text.slice(-2000)}\n${Buffer.concat(err).toString().slice(-2000)}`),
        );
      resolve(
        text
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Line),
      );
    });
  });
}

/** A long-running weft-sdk-client server: resolves once it printed {"bound": true}; stop() closes its stdin. */
async function startServerTool(bin: string, args: string[]): Promise<{ proc: ChildProcess; bound: Line; stop(): Promise<void> }> {
  const proc = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const err: string[] = [];
  proc.stderr!.on('data', (d: Buffer) => err.push(d.toString()));
  const bound = await new Promise<Line>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`weft-sdk-client ${args[0]} did not bind in 30 s\n${err.join('').slice(-2000)}`)), 30_000);
    proc.once('exit', (code) => reject(new Error(`weft-sdk-client ${args[0]} exited ${code}\n${err.join('').slice(-2000)}`)));
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      try {
        const v = JSON.parse(l) as Line;
        if (v.bound === true) {
          clearTimeout(timer);
          resolve(v);
        }
      } catch {
        // not JSON
      }
    });
  });
  proc.removeAllListeners('exit');
  return {
    proc,
    bound,
    stop: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.stdin!.end();
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---- the floor: a bare node:tls relay ------------------------------------------------------------------------

/**
 * Runs in its own process (`dataplane.ts relay <spec.json>`): a node:tls server that, for every connection, opens a
 * TLS connection to the upstream echo server and pipes both ways. Prints {"address": "host:port"} once listening.
 */
function runRelay(specFile: string): void {
  const spec = JSON.parse(readFileSync(specFile, 'utf8')) as { key: string; cert: string; ca: string; upstream: string };
  const i = spec.upstream.lastIndexOf(':');
  const upstream = { host: spec.upstream.slice(0, i), port: Number(spec.upstream.slice(i + 1)) };
  const server = createServer({ key: spec.key, cert: spec.cert }, (client: TLSSocket) => {
    client.setNoDelay(true);
    const up = connect({ ...upstream, ca: spec.ca });
    up.setNoDelay(true);
    client.pipe(up);
    up.pipe(client);
    const end = () => {
      client.destroy();
      up.destroy();
    };
    for (const s of [client, up]) {
      s.on('error', end);
      s.on('close', end);
    }
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ address: `127.0.0.1:${(server.address() as { port: number }).port}` }) + '\n');
  });
  process.on('SIGTERM', () => process.exit(0));
}

// ---- Weft set-up over its APIs ---------------------------------------------------------------------------------

class Http {
  private readonly agent: Agent;
  token?: string;
  constructor(
    readonly origin: string,
    readonly ca: string,
  ) {
    this.agent = new Agent({ connect: { ca } });
  }
  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<any> {
    const headers: Record<string, string> = this.token ? { 'zt-session': this.token } : {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await request(this.origin + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: this.agent,
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text);
  }
  async create(kind: string, body: unknown): Promise<string> {
    return (await this.call('POST', `/edge/management/v1/${kind}`, body)).data.id;
  }
  close(): Promise<void> {
    return this.agent.close();
  }
}

/** An identity enrolled by OTT through the Client API, written as the SDK's identity file. */
async function enrolledIdentity(http: Http, dir: string, name: string, roleAttributes: string[]): Promise<string> {
  const id = await http.create('identities', { name, type: 'Device', isAdmin: false, roleAttributes, enrollment: { ott: true } });
  const token = (await http.call('GET', `/edge/management/v1/identities/${id}`)).data.enrollment.ott.token;
  const { csrPem, keyPem } = await createCsr({ commonName: name });
  const enrolled = (await http.call('POST', '/edge/client/v1/enroll/ott', { token, clientCsr: csrPem })).data as { cert: string; ca: string };
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    // OpenZiti's /enroll/ott answers the certificate alone: the CA bundle is the controller's
    JSON.stringify({
      ztAPI: `${http.origin}/edge/client/v1`,
      id: { cert: `pem:${enrolled.cert}`, key: `pem:${keyPem}`, ca: `pem:${enrolled.ca ?? http.ca}` },
    }),
  );
  return file;
}

// ---- measurements -------------------------------------------------------------------------------------------------

interface Target {
  name: string;
  /** the process relaying the bytes (Weft, or the bare relay) and the Go echo server, for their CPU time */
  relayPid?: number;
  serverPid?: number;
  /** weft-sdk-client arguments that make connections (dial or tls-dial, without --bytes/--count) */
  dialArgs: string[];
}

interface Transfer {
  mibps: number;
  /** CPU time (µs) used meanwhile by the relaying process, the Go echo server and the Go client */
  cpuUs?: { relay: number; server: number; client: number };
  lines: Line[];
}

/** Writes the payload in writes of this size, as io.Copy does (and as the echo servers write it back). */
const CHUNK = 32 * 1024;

async function transfer(bin: string, t: Target, bytes: number, count: number): Promise<Transfer> {
  const before = [cpuMicros(t.relayPid), cpuMicros(t.serverPid)];
  const lines = await runTool(bin, [...t.dialArgs, '--bytes', String(bytes), '--count', String(count), '--chunk', String(CHUNK), '--warmup']);
  const after = [cpuMicros(t.relayPid), cpuMicros(t.serverPid)];
  const summary = lines.at(-1)!;
  if (summary.failed !== 0) throw new Error(`${t.name}: ${summary.failed} connections failed`);
  const known = [...before, ...after].every((x) => x !== undefined) && typeof summary.cpuSeconds === 'number';
  return {
    mibps: (bytes * count) / MiB / summary.seconds,
    cpuUs: known ? { relay: after[0]! - before[0]!, server: after[1]! - before[1]!, client: summary.cpuSeconds * 1e6 } : undefined,
    lines,
  };
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Series {
  runs: Transfer[];
  bytesPerRun: number;
}

/** MiB/s over all rounds (total bytes over total time), and CPU per MiB echoed in each process. */
function summarize(s: Series): { mibps: number; range: string; cpu?: { relay: number; server: number; client: number } } {
  const mib = (s.bytesPerRun / MiB) * s.runs.length;
  const seconds = s.runs.reduce((t, r) => t + s.bytesPerRun / MiB / r.mibps, 0);
  const sorted = s.runs.map((r) => r.mibps).sort((a, b) => a - b);
  const cpu = s.runs.every((r) => r.cpuUs)
    ? (['relay', 'server', 'client'] as const).reduce(
        (o, k) => ({ ...o, [k]: s.runs.reduce((t, r) => t + r.cpuUs![k], 0) / 1000 / mib }),
        {} as { relay: number; server: number; client: number },
      )
    : undefined;
  return { mibps: mib / seconds, range: `${sorted[0]!.toFixed(0)}-${sorted.at(-1)!.toFixed(0)}`, cpu };
}

/**
 * Rounds that run every target back to back, so a burst of other load on the machine hits them alike, after an
 * unmeasured warm-up transfer on each (JIT, buffers).
 */
async function pairedRounds(bin: string, targets: Target[], bytes: number, count: number, rounds: number): Promise<Series[]> {
  for (const t of targets) await transfer(bin, t, Math.min(bytes, 4 * MiB), Math.min(count, 10));
  const series = targets.map(() => ({ runs: [] as Transfer[], bytesPerRun: bytes * count }));
  for (let r = 0; r < rounds; r++) {
    for (const [i, t] of targets.entries()) series[i]!.runs.push(await transfer(bin, t, bytes, count));
  }
  return series;
}

/** Sequential dials of one byte each: setup (the dial returning a connected conn) and first echo, both in ms. */
async function setupLatency(bin: string, dialArgs: string[], dials: number): Promise<{ cold: Line; setup: number[]; firstEcho: number[] }> {
  const lines = (await runTool(bin, [...dialArgs, '--bytes', '1', '--count', String(dials + 1), '--sequential'])).filter((l) => 'conn' in l);
  const warm = lines.filter((l) => l.conn !== 0);
  return {
    cold: lines.find((l) => l.conn === 0)!,
    setup: warm.map((l) => l.setupMs as number),
    firstEcho: warm.map((l) => (l.seconds as number) * 1000),
  };
}

const ms = (x: number) => x.toFixed(2);

/** An echo service of its own: Bind for one role, Dial for another, served by the routers named (service edge router policy). */
async function echoService(http: Http, name: string, roles: { bind: string; dial: string }, routerIds: string[]): Promise<string> {
  const serviceId = await http.create('services', { name, encryptionRequired: false });
  for (const [type, role] of [
    ['Bind', roles.bind],
    ['Dial', roles.dial],
  ] as const) {
    await http.create('service-policies', {
      name: `${name}-${type}`,
      type,
      semantic: 'AnyOf',
      identityRoles: [role],
      serviceRoles: [`@${serviceId}`],
    });
  }
  if (routerIds.length > 0)
    await http.create('service-edge-router-policies', {
      name: `${name}-routers`,
      semantic: 'AnyOf',
      serviceRoles: [`@${serviceId}`],
      edgeRouterRoles: routerIds.map((id) => `@${id}`),
    });
  return serviceId;
}

/** The identities with attribute `role` may use that router (an edge router policy naming it alone). */
function routerOnly(http: Http, role: string, routerId: string): Promise<string> {
  return http.create('edge-router-policies', {
    name: `${role}-at-${routerId}`,
    semantic: 'AnyOf',
    identityRoles: [`#${role}`],
    edgeRouterRoles: [`@${routerId}`],
  });
}

/** A stock `ziti router run` created, enrolled and attached to Weft's control channel (with a link listener: it links). */
async function stockRouter(http: Http, dir: string, zitiBin: string, name: string, stops: Array<() => Promise<void>>, links = false) {
  const routerId = await http.create('edge-routers', { name, roleAttributes: [], isTunnelerEnabled: false });
  const routerDir = join(dir, name);
  mkdirSync(routerDir, { recursive: true });
  const jwtFile = join(routerDir, 'router.jwt');
  writeFileSync(jwtFile, (await http.call('GET', `/edge/management/v1/edge-routers/${routerId}`)).data.enrollmentJwt);
  const config = writeStockRouterConfig(routerDir, await freePort(), links ? await freePort() : undefined);
  await enrollStockRouter(zitiBin, routerDir, config, jwtFile);
  const proc = spawn(zitiBin, ['router', 'run', config], { cwd: routerDir, env: { ...process.env, HOME: routerDir }, stdio: 'ignore' });
  stops.push(async () => {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const er = (await http.call('GET', `/edge/management/v1/edge-routers/${routerId}`)).data;
    if (er.isOnline && er.supportedProtocols?.tls) break;
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`the stock router ${name} did not come online in 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { routerId, proc };
}

/**
 * Stock `ziti router run`s attached to Weft's control channel, for the stock router rows: one serving an echo service
 * of its own (its service edge router policy names only it, the host bound through it); and two linked ones, the
 * dialing SDK allowed only the first and the host only the second (edge router policies), so every dial crosses the
 * link (2 hops). Skipped (with the reason) when the pinned `ziti` is not built.
 */
async function stockRouterTargets(
  http: Http,
  dir: string,
  bin: string,
  ids: { host: string; client: string; builtinId: string; builtinPid?: number },
  stops: Array<() => Promise<void>>,
): Promise<{ one?: Target; twoHops?: Target; toBuiltin?: Target; missing?: string }> {
  const ziti = zitiBinary();
  if ('missing' in ziti) return { missing: ziti.missing };
  const one = await stockRouter(http, dir, ziti.bin, 'bench-stock', stops);
  const a = await stockRouter(http, dir, ziti.bin, 'bench-stock-a', stops, true);
  const b = await stockRouter(http, dir, ziti.bin, 'bench-stock-b', stops, true);
  const single = 'bench-echo-stock';
  await echoService(http, single, { bind: '#bench-hosts', dial: '#bench-clients' }, [one.routerId]);
  const linked = 'bench-echo-2hops';
  await echoService(http, linked, { bind: '#bench-hosts-b', dial: '#bench-clients-a' }, [a.routerId, b.routerId]);
  await routerOnly(http, 'bench-clients-a', a.routerId);
  await routerOnly(http, 'bench-hosts-b', b.routerId);
  // stock router A → the built-in router: a host allowed the built-in router only, the same dialer at A
  const toBuiltin = 'bench-echo-a-builtin';
  await echoService(http, toBuiltin, { bind: '#bench-hosts-builtin', dial: '#bench-clients-a' }, [a.routerId, ids.builtinId]);
  await routerOnly(http, 'bench-hosts-builtin', ids.builtinId);
  const hostB = await enrolledIdentity(http, dir, 'bench-host-b', ['bench-hosts-b']);
  const hostBuiltin = await enrolledIdentity(http, dir, 'bench-host-builtin', ['bench-hosts-builtin']);
  const clientA = await enrolledIdentity(http, dir, 'bench-client-a', ['bench-clients-a']);
  const deadline = Date.now() + 60_000;
  const hasLink = async (x: string, y: string) =>
    ((await http.call('GET', '/fabric/v1/links')).data as Array<{ sourceRouter: { id: string }; destRouter: { id: string } }>).some(
      (l) => [l.sourceRouter.id, l.destRouter.id].sort().join() === [x, y].sort().join(),
    );
  while (!(await hasLink(a.routerId, b.routerId)) || !(await hasLink(a.routerId, ids.builtinId))) {
    if (Date.now() > deadline) throw new Error('the stock routers did not link (with each other and the built-in router) in 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const echo = await startServerTool(bin, ['echo-server', '--identity', ids.host, '--service', single]);
  const echoB = await startServerTool(bin, ['echo-server', '--identity', hostB, '--service', linked]);
  const echoBuiltin = await startServerTool(bin, ['echo-server', '--identity', hostBuiltin, '--service', toBuiltin]);
  stops.push(
    () => echo.stop(),
    () => echoB.stop(),
    () => echoBuiltin.stop(),
  );
  return {
    one: {
      name: 'stock',
      relayPid: one.proc.pid,
      serverPid: echo.proc.pid,
      dialArgs: ['dial', '--identity', ids.client, '--service', single, '--cache-posture'],
    },
    twoHops: {
      name: 'stock-2hops',
      // the dialer's router: its CPU is the ingress half of the path
      relayPid: a.proc.pid,
      serverPid: echoB.proc.pid,
      dialArgs: ['dial', '--identity', clientA, '--service', linked, '--cache-posture'],
    },
    toBuiltin: {
      name: 'stock-to-builtin',
      // the built-in router's CPU: the egress half, in place of router B's
      relayPid: ids.builtinPid,
      serverPid: echoBuiltin.proc.pid,
      dialArgs: ['dial', '--identity', clientA, '--service', toBuiltin, '--cache-posture'],
    },
  };
}

/**
 * The real OpenZiti controller with its own router (`ziti edge quickstart`), the same echo service, policies and Go
 * ends as on Weft: the peer for "built-in router ≥ 1× OpenZiti's router" and for circuit setup through the controller.
 */
async function openZitiTarget(bin: string, dir: string, stops: Array<() => Promise<void>>): Promise<{ target?: Target; missing?: string }> {
  const ziti = zitiBinary();
  if ('missing' in ziti) return { missing: ziti.missing };
  const ctrl = await startOpenZiti(ziti.bin, join(dir, 'openziti'), ADMIN.password, await freePort());
  stops.push(() => ctrl.stop());
  const http = new Http(ctrl.origin, ctrl.ca);
  try {
    http.token = (
      await http.call('POST', '/edge/management/v1/authenticate?method=password', { username: 'admin', password: ADMIN.password })
    ).data.token;
    // the quickstart's router, online
    const deadline = Date.now() + 60_000;
    for (;;) {
      const routers = (await http.call('GET', '/edge/management/v1/edge-routers')).data as Array<{ id: string; isOnline: boolean }>;
      if (routers.some((r) => r.isOnline)) break;
      if (Date.now() > deadline) throw new Error("the OpenZiti quickstart's router did not come online in 60 s");
      await new Promise((r) => setTimeout(r, 200));
    }
    const service = 'bench-echo';
    await echoService(http, service, { bind: '#bench-hosts', dial: '#bench-clients' }, []);
    await http.create('service-edge-router-policies', { name: 'bench-all', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
    await http.create('edge-router-policies', { name: 'bench-all', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
    const ozDir = join(dir, 'openziti-ids');
    mkdirSync(ozDir, { recursive: true });
    const host = await enrolledIdentity(http, ozDir, 'oz-host', ['bench-hosts']);
    const client = await enrolledIdentity(http, ozDir, 'oz-client', ['bench-clients']);
    const echo = await startServerTool(bin, ['echo-server', '--identity', host, '--service', service]);
    stops.push(() => echo.stop());
    return {
      target: {
        name: 'openziti',
        relayPid: ctrl.proc.pid,
        serverPid: echo.proc.pid,
        dialArgs: ['dial', '--identity', client, '--service', service, '--cache-posture'],
      },
    };
  } finally {
    await http.close();
  }
}

// ---- the scenario ---------------------------------------------------------------------------------------------------

/**
 * The data-plane table: one dial's echo stream and 50 concurrent dials through Weft's router (Go SDK on both ends)
 * against the same Go programs over plain TLS through a bare node:tls relay, and dial setup latency.
 */
export async function dataplaneBench(workDir: string, opts: { quick: boolean }): Promise<DataplaneRow[]> {
  const title = `Data plane: echo through the built-in edge router${opts.quick ? ' (quick)' : ''}`;
  const tool = sdkClientPath();
  if ('missing' in tool) {
    console.log(`\n## ${title}\n\nskipped: the OpenZiti test tools are not installed (${tool.missing}); install them with \`${INSTALL_COMMAND}\``);
    return [];
  }
  const bin = tool.bin;
  const dir = join(workDir, 'dataplane');
  const dataDir = join(dir, 'data');
  mkdirSync(dir, { recursive: true });
  const single = opts.quick ? 16 * MiB : 64 * MiB;
  const manyBytes = opts.quick ? MiB : 4 * MiB;
  const many = 50;
  const dials = opts.quick ? 40 : 200;

  const profDir = process.env.WEFT_BENCH_CPU_PROF;
  const config = benchConfigFile(dir, 'router:\n  listener: tls:127.0.0.1:0\n  link_listener: tls:127.0.0.1:0\nconsole:\n  enabled: false\n');
  const stops: Array<() => Promise<void>> = [];
  const rows: DataplaneRow[] = [];
  try {
    const weft: Child = await startChild(
      new URL('./weftServer.ts', import.meta.url).pathname,
      [dataDir, config],
      { WEFT_ADMIN_USERNAME: ADMIN.username, WEFT_ADMIN_PASSWORD: ADMIN.password },
      profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [],
    );
    stops.push(() => weft.stop());
    const origin = weft.info.origin as string;
    const pki = join(dataDir, 'pki');
    const caFile = join(pki, 'ca-bundle.pem');
    const ca = readFileSync(caFile, 'utf8');

    // Weft: a service without end-to-end encryption, Bind/Dial policies, two identities enrolled over the Client API
    const http = new Http(origin, ca);
    try {
      http.token = (await http.call('POST', '/edge/management/v1/authenticate?method=password', ADMIN)).data.token;
      const service = 'bench-echo';
      const serviceId = await http.create('services', { name: service, encryptionRequired: false });
      await http.create('service-policies', {
        name: 'bench-bind',
        type: 'Bind',
        semantic: 'AnyOf',
        identityRoles: ['#bench-hosts'],
        serviceRoles: [`@${serviceId}`],
      });
      await http.create('service-policies', {
        name: 'bench-dial',
        type: 'Dial',
        semantic: 'AnyOf',
        identityRoles: ['#bench-clients'],
        serviceRoles: [`@${serviceId}`],
      });
      await http.create('edge-router-policies', {
        name: 'bench-routers',
        semantic: 'AnyOf',
        identityRoles: ['#bench-hosts', '#bench-clients'],
        edgeRouterRoles: ['#all'],
      });
      // each service on its own router: the built-in one here, a stock router's below
      const builtinId = (await http.call('GET', `/edge/management/v1/edge-routers?filter=${encodeURIComponent('name = "er-builtin"')}`)).data[0].id;
      await http.create('service-edge-router-policies', {
        name: 'bench-services',
        semantic: 'AnyOf',
        serviceRoles: [`@${serviceId}`],
        edgeRouterRoles: [`@${builtinId}`],
      });
      const host = await enrolledIdentity(http, dir, 'bench-host', ['bench-hosts']);
      const client = await enrolledIdentity(http, dir, 'bench-client', ['bench-clients']);

      const weftEcho = await startServerTool(bin, ['echo-server', '--identity', host, '--service', service]);
      stops.push(() => weftEcho.stop());
      const stock = await stockRouterTargets(http, dir, bin, { host, client, builtinId, builtinPid: weft.proc.pid }, stops);
      const openziti = await openZitiTarget(bin, dir, stops);

      // the floor: the same Go pair over plain TLS (Weft's own server certificate), through a bare node:tls relay
      const certFile = join(pki, 'server-chain.pem');
      const keyFile = join(pki, 'server.key.pem');
      const floorEcho = await startServerTool(bin, ['tls-echo-server', '--listen', '127.0.0.1:0', '--cert', certFile, '--key', keyFile]);
      stops.push(() => floorEcho.stop());
      const relaySpec = join(dir, 'relay.json');
      writeFileSync(
        relaySpec,
        JSON.stringify({ key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), ca, upstream: floorEcho.bound.address }),
      );
      const relay = await startChild(new URL(import.meta.url).pathname, ['relay', relaySpec]);
      stops.push(() => relay.stop());

      // The Go SDK collects posture data (lsb_release, MAC addresses) again on every Dial, under a lock: ~10 ms
      // of the SDK's own, whatever router it dials. Throughput runs have it collected once (--cache-posture);
      // the setup rows show both.
      const weftDial = ['dial', '--identity', client, '--service', service];
      const weftTarget: Target = { name: 'weft', relayPid: weft.proc.pid, serverPid: weftEcho.proc.pid, dialArgs: [...weftDial, '--cache-posture'] };
      const floorTarget: Target = {
        name: 'floor',
        relayPid: relay.proc.pid,
        serverPid: floorEcho.proc.pid,
        dialArgs: ['tls-dial', '--addr', relay.info.address, '--ca', caFile],
      };
      const WEFT = 'weft router (Go SDK ↔ Go SDK)';
      const FLOOR = 'floor (Go TLS ↔ node:tls relay ↔ Go TLS)';
      const STOCK = 'stock ziti router on Weft (Go SDK ↔ Go SDK)';
      const STOCK2 = 'two linked stock ziti routers on Weft, 2 hops (Go SDK ↔ Go SDK)';
      const TO_BUILTIN = 'stock ziti router → built-in router, 2 hops (Go SDK ↔ Go SDK)';
      const OZ = 'OpenZiti controller + its router, quickstart (Go SDK ↔ Go SDK)';

      // throughput: one stream, then 50 concurrent dials; each round runs Weft then the floor back to back
      const cases = [
        { scenario: `1 dial, ${single / MiB} MiB echoed`, bytes: single, count: 1, rounds: 5 },
        { scenario: `${many} concurrent dials × ${manyBytes / MiB} MiB`, bytes: manyBytes, count: many, rounds: 3 },
      ];
      for (const c of cases) {
        const targets = [
          weftTarget,
          floorTarget,
          ...(stock.one && stock.twoHops && stock.toBuiltin ? [stock.one, stock.twoHops, stock.toBuiltin] : []),
          ...(openziti.target ? [openziti.target] : []),
        ];
        const series = await pairedRounds(bin, targets, c.bytes, c.count, c.rounds);
        const [w, f] = series;
        const [st, st2, stb] = stock.one ? series.slice(2, 5) : [];
        const oz = openziti.target ? series.at(-1) : undefined;
        const ws = summarize(w!);
        const fs = summarize(f!);
        // for concurrent dials, p50/p99 are each connection's time from dial to its whole echo back
        const perConn = (s: Series) => s.runs.flatMap((r) => r.lines.filter((l) => 'conn' in l).map((l) => (l.seconds as number) * 1000));
        const p = (s: Series) => (c.count > 1 ? { p50Ms: percentile(perConn(s), 0.5), p99Ms: percentile(perConn(s), 0.99) } : {});
        const note = (x: ReturnType<typeof summarize>, relayName: string) =>
          [
            `rounds ${x.range} MiB/s`,
            x.cpu && `CPU ms/MiB: ${relayName} ${ms(x.cpu.relay)}, Go server ${ms(x.cpu.server)}, Go client ${ms(x.cpu.client)}`,
            c.count > 1 && 'p50/p99: dial to full echo per connection',
          ]
            .filter(Boolean)
            .join('; ');
        rows.push({ scenario: c.scenario, target: WEFT, mibps: ws.mibps, ...p(w!), note: note(ws, 'router') });
        rows.push({ scenario: c.scenario, target: FLOOR, mibps: fs.mibps, ...p(f!), note: note(fs, 'relay') });
        if (st && st2 && stb) {
          const ss = summarize(st);
          rows.push({ scenario: c.scenario, target: STOCK, mibps: ss.mibps, ...p(st), note: note(ss, 'stock router') });
          const s2 = summarize(st2);
          rows.push({ scenario: c.scenario, target: STOCK2, mibps: s2.mibps, ...p(st2), note: note(s2, 'ingress stock router') });
          const sb = summarize(stb);
          rows.push({ scenario: c.scenario, target: TO_BUILTIN, mibps: sb.mibps, ...p(stb), note: note(sb, 'Weft (egress)') });
          const vsTwo = median(stb.runs.map((r, i) => r.mibps / st2.runs[i]!.mibps));
          rows.push({
            scenario: c.scenario,
            target: 'check',
            note:
              `stock router → built-in router at ${vsTwo.toFixed(2)}× two linked stock routers (median of paired rounds; the ` +
              `built-in router as the second hop in place of a stock one); goal ≥ 1× ${vsTwo >= 1 ? 'MET' : 'NOT MET'}`,
          });
          const vsStock = median(w!.runs.map((r, i) => r.mibps / st.runs[i]!.mibps));
          rows.push({
            scenario: c.scenario,
            target: 'check',
            note:
              `built-in router at ${vsStock.toFixed(2)}× the stock OpenZiti router (median of paired rounds; the stock router's ` +
              `throughput does not depend on its controller once a circuit exists); goal ≥ 1× ${vsStock >= 1 ? 'MET' : 'NOT MET'}`,
          });
        } else rows.push({ scenario: c.scenario, target: STOCK, note: `skipped: ${stock.missing}` });
        if (oz) {
          const os = summarize(oz);
          rows.push({ scenario: c.scenario, target: OZ, mibps: os.mibps, ...p(oz), note: note(os, 'OpenZiti controller+router') });
          const vsOz = median(w!.runs.map((r, i) => r.mibps / oz.runs[i]!.mibps));
          rows.push({
            scenario: c.scenario,
            target: 'check',
            note: `built-in router at ${vsOz.toFixed(2)}× OpenZiti's own router on its controller (median of paired rounds); goal ≥ 1× ${vsOz >= 1 ? 'MET' : 'NOT MET'}`,
          });
        } else rows.push({ scenario: c.scenario, target: OZ, note: `skipped: ${openziti.missing}` });
        const ratios = w!.runs.map((r, i) => r.mibps / f!.runs[i]!.mibps).sort((a, b) => a - b);
        const ratio = median(ratios);
        const cpuRatio = ws.cpu && fs.cpu ? `; router CPU per MiB ${(ws.cpu.relay / fs.cpu.relay).toFixed(2)}× the relay's` : '';
        rows.push({
          scenario: c.scenario,
          target: 'check',
          note:
            `Weft at ${(ratio * 100).toFixed(0)}% of the floor (median of ${ratios.length} paired rounds, ` +
            `${(ratios[0]! * 100).toFixed(0)}-${(ratios.at(-1)! * 100).toFixed(0)}%); goal ≥ ${GOAL * 100}% ${ratio >= GOAL ? 'MET' : 'NOT MET'}${cpuRatio}`,
        });
      }

      // dial setup latency: sequential dials after a first, cold one (service session, router connection), 1 byte each
      const scenario = `dial setup, ${dials} sequential dials`;
      const shipped = await setupLatency(bin, weftDial, dials);
      const cached = await setupLatency(bin, weftTarget.dialArgs, dials);
      const fl = await setupLatency(bin, floorTarget.dialArgs, dials);
      const viaStock = stock.one ? await setupLatency(bin, stock.one.dialArgs, dials) : undefined;
      const viaTwo = stock.twoHops ? await setupLatency(bin, stock.twoHops.dialArgs, dials) : undefined;
      const viaToBuiltin = stock.toBuiltin ? await setupLatency(bin, stock.toBuiltin.dialArgs, dials) : undefined;
      const viaOz = openziti.target ? await setupLatency(bin, openziti.target.dialArgs, dials) : undefined;
      const firstEcho = (x: { firstEcho: number[] }) => `first echo p50 ${ms(median(x.firstEcho))} / p99 ${ms(percentile(x.firstEcho, 0.99))} ms`;
      rows.push({
        scenario,
        target: `${WEFT}, SDK as shipped`,
        p50Ms: median(shipped.setup),
        p99Ms: percentile(shipped.setup, 0.99),
        note: `Dial until connected, incl. the SDK's posture collection on every Dial; ${firstEcho(shipped)}; cold first dial ${ms(shipped.cold.setupMs as number)} ms`,
      });
      rows.push({
        scenario,
        target: `${WEFT}, posture cached`,
        p50Ms: median(cached.setup),
        p99Ms: percentile(cached.setup, 0.99),
        note: `Dial → router → hosting SDK → StateConnected, over the open router connection; ${firstEcho(cached)}`,
      });
      if (viaStock) {
        rows.push({
          scenario,
          target: `${STOCK}, posture cached`,
          p50Ms: median(viaStock.setup),
          p99Ms: percentile(viaStock.setup, 0.99),
          note: `Dial → stock router → CreateCircuitV2 to Weft → Route → hosting SDK; ${firstEcho(viaStock)}`,
        });
      }
      if (viaTwo) {
        rows.push({
          scenario,
          target: `${STOCK2}, posture cached`,
          p50Ms: median(viaTwo.setup),
          p99Ms: percentile(viaTwo.setup, 0.99),
          note: `Dial → router A → CreateCircuitV2 to Weft → Routes to A and B → hosting SDK at B; ${firstEcho(viaTwo)}`,
        });
      }
      if (viaToBuiltin) {
        rows.push({
          scenario,
          target: `${TO_BUILTIN}, posture cached`,
          p50Ms: median(viaToBuiltin.setup),
          p99Ms: percentile(viaToBuiltin.setup, 0.99),
          note: `Dial → router A → CreateCircuitV2 to Weft → Route to A, the built-in router's route in process → hosting SDK at the built-in router; ${firstEcho(viaToBuiltin)}`,
        });
      }
      if (viaOz) {
        rows.push({
          scenario,
          target: `${OZ}, posture cached`,
          p50Ms: median(viaOz.setup),
          p99Ms: percentile(viaOz.setup, 0.99),
          note: `Dial → OpenZiti's router → its controller → Route → hosting SDK; ${firstEcho(viaOz)}`,
        });
      }
      if (viaStock && viaOz) {
        // sequential dials: the rate one dialer gets is 1000 / the mean setup time
        const rate = (x: { setup: number[] }) => 1000 / (x.setup.reduce((a, b) => a + b, 0) / x.setup.length);
        const ratio = rate(viaStock) / rate(viaOz);
        rows.push({
          scenario,
          target: 'check',
          note:
            `circuit setup through the controller with a stock router: Weft ${rate(viaStock).toFixed(0)} dials/s vs the OpenZiti ` +
            `controller ${rate(viaOz).toFixed(0)} dials/s (${ratio.toFixed(2)}×); goal ≥ 1× ${ratio >= 1 ? 'MET' : 'NOT MET'}`,
        });
      }
      rows.push({
        scenario,
        target: FLOOR,
        p50Ms: median(fl.setup),
        p99Ms: percentile(fl.setup, 0.99),
        note: `new TCP connection + TLS handshake to the relay; ${firstEcho(fl)} (incl. the relay's upstream TLS)`,
      });
      rows.push({
        scenario,
        target: 'comparison',
        note:
          `dial to first echo p50: Weft ${ms(median(cached.firstEcho))} ms (${ms(median(shipped.firstEcho))} ms with the SDK's per-dial posture collection) ` +
          `vs ${ms(median(fl.firstEcho))} ms for the floor's new TLS connection; no goal set (reported)`,
      });
    } finally {
      await http.close();
    }
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
  printColumns(title, ['MiB/s', 'p50 ms', 'p99 ms'], rows, (r: DataplaneRow) => [r.mibps, r.p50Ms, r.p99Ms]);
  if (profDir) console.log(`\nCPU profile of the Weft process written to ${profDir}`);
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2] === 'relay') runRelay(process.argv[3]!);
