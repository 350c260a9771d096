import { createPublicKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { Agent, request } from 'undici';
import { startApp } from '../src/main/app';
import { createResource } from '../src/main/core/entities/resource';
import { edgeRouterPolicies } from '../src/main/core/policy/edgeRouterPolicies';
import { identities } from '../src/main/core/policy/identities';
import { serviceEdgeRouterPolicies } from '../src/main/core/policy/serviceEdgeRouterPolicies';
import { servicePolicies } from '../src/main/core/policy/servicePolicies';
import { services } from '../src/main/core/policy/services';
import { EdgeType, Header, message, str, u32 } from '../src/main/router/channel/wire';
import { ConsoleClient } from '../test/support/consoleTrpc';
import { RawEdge } from '../test/support/edge';
import { csr } from '../test/support/pki';
import { benchConfigFile, checkRow, inBatches, printTable, startChild, weftNodeArgs, type Row } from './lib';
import { Http } from './policy';

/**
 * Issue 27's bursts: many clients arriving at once. 250 OTT enrollments started together over HTTPS; a fleet of
 * hosting SDKs binding tens of thousands of terminators through the built-in edge router; and thousands of
 * identities through the console's CSV import (the tRPC mutation the console calls). Services, policies and the
 * identities to enroll are seeded through the core; Weft then runs in its own process.
 */

const ADMIN = { username: 'admin', password: 'bench-admin-password' };
/** services each hosting identity binds (a tunneler on a server hosting its applications) */
const SERVICES_PER_HOST = 100;
/** hosting identities per service (each service runs on several servers) */
const HOSTS_PER_SERVICE = 4;
/** Bind requests a hosting SDK has outstanding on its router connection */
const BIND_WINDOW = 2;
/** rows per CSV file: the import's cap per call (MAX_IMPORT_ROWS) */
const CSV_ROWS = 1000;
const GOALS = { enrollP95Ms: 1000, bindsSeconds: 300, bindsAt: 40_000, importSeconds: 60, importAt: 10_000 } as const;

export interface BurstSizes {
  enrollments: number;
  binds: number;
  imports: number;
}

interface Seeded {
  /** OTT tokens of the identities enrolled in the burst, by name */
  devices: Array<{ name: string; token: string }>;
  /** OTT tokens of the hosting identities and the services each may bind */
  hosts: Array<{ name: string; token: string; services: string[] }>;
  seconds: number;
}

/** Seeds services, Bind policies (one per group of hosts and services), router policies and the identities to enroll. */
async function seed(dataDir: string, sizes: BurstSizes): Promise<Seeded> {
  const started = performance.now();
  const app = await startApp({
    dataDir,
    apiAddress: '127.0.0.1:0',
    logger: pino({ level: 'silent' }),
    routerListener: 'off',
    consoleAddress: '127.0.0.1:0',
    metricsAddress: 'off',
    env: { WEFT_ADMIN_USERNAME: ADMIN.username, WEFT_ADMIN_PASSWORD: ADMIN.password },
  });
  const ctx = app.core.system;
  const store = app.core.store;
  const hosts = Math.ceil(sizes.binds / SERVICES_PER_HOST);
  const groups = Math.ceil(hosts / HOSTS_PER_SERVICE);
  const serviceCount = groups * SERVICES_PER_HOST;
  const batches = <T>(n: number, make: (i: number) => Promise<T>) => inBatches(store, n, make);
  const serviceIds = await batches(serviceCount, (i) =>
    createResource(ctx, services, { name: `burst-svc-${i}`, encryptionRequired: false, roleAttributes: [`burst-svc-${i % groups}`] }),
  );
  await batches(groups, (g) =>
    createResource(ctx, servicePolicies, {
      name: `burst-bind-${g}`,
      type: 'Bind',
      semantic: 'AnyOf',
      identityRoles: [`#burst-hosts-${g}`],
      serviceRoles: [`#burst-svc-${g}`],
    }),
  );
  await createResource(ctx, edgeRouterPolicies, { name: 'burst-routers', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
  await createResource(ctx, serviceEdgeRouterPolicies, {
    name: 'burst-services',
    semantic: 'AnyOf',
    serviceRoles: ['#all'],
    edgeRouterRoles: ['#all'],
  });
  const identity = (name: string, roleAttributes: string[]) =>
    createResource(ctx, identities, { name, type: 'Device', isAdmin: false, roleAttributes, enrollment: { ott: true } });
  await batches(hosts, (h) => identity(`burst-host-${h}`, [`burst-hosts-${h % groups}`]));
  await batches(sizes.enrollments, (i) => identity(`burst-device-${i}`, ['burst-devices']));
  const tokens = new Map(
    (
      await store.allSql<{ name: string; token: string }>(
        "SELECT i.name, e.token FROM enrollments e JOIN identities i ON i.id = e.identity_id WHERE e.method = 'ott'",
      )
    ).map((r) => [r.name, r.token]),
  );
  await app.close();
  return {
    devices: Array.from({ length: sizes.enrollments }, (_, i) => ({ name: `burst-device-${i}`, token: tokens.get(`burst-device-${i}`)! })),
    hosts: Array.from({ length: hosts }, (_, h) => ({
      name: `burst-host-${h}`,
      token: tokens.get(`burst-host-${h}`)!,
      services: serviceIds.filter((_, i) => i % groups === h % groups),
    })),
    seconds: (performance.now() - started) / 1000,
  };
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

/** Runs `fn` over `items` with at most `concurrency` at a time. */
async function pool<T, R>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}

/** POST /enroll/ott with a CSR: the signed certificate, checked to be for the CSR's key; or the error. */
async function enroll(origin: string, dispatcher: Agent, token: string, c: { csrPem: string; keyPem: string }): Promise<string> {
  const res = await request(`${origin}/edge/client/v1/enroll/ott`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, clientCsr: c.csrPem }),
    dispatcher,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${text.slice(0, 200)}`);
  const cert = JSON.parse(text).data?.cert as string;
  const leaf = new X509Certificate(cert);
  const want = createPublicKey(c.keyPem).export({ type: 'spki', format: 'der' });
  if (!leaf.publicKey.export({ type: 'spki', format: 'der' }).equals(want)) throw new Error('the certificate is not for the CSR key');
  return cert;
}

async function totalCount(http: Http, admin: string, path: string): Promise<number> {
  const r = await http.call('GET', `/edge/management/v1/${path}${path.includes('?') ? '&' : '?'}limit=1`, admin);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
  return r.json.meta.pagination.totalCount as number;
}

/** Goal 1: every OTT enrollment started at once, each over its own HTTPS connection (250 devices, 250 handshakes). */
async function enrollmentBurst(origin: string, ca: string, http: Http, admin: string, seeded: Seeded): Promise<Row[]> {
  const csrs = await Promise.all(seeded.devices.map((d) => csr('EC-P256', d.name)));
  const certFilter = `authenticators?filter=${encodeURIComponent('method = "cert"')}`;
  const before = await totalCount(http, admin, certFilter);
  const dispatcher = new Agent({ connect: { ca }, pipelining: 0 });
  const latencies: number[] = [];
  const errors: string[] = [];
  const t0 = performance.now();
  await Promise.all(
    seeded.devices.map(async (d, i) => {
      const start = performance.now();
      try {
        await enroll(origin, dispatcher, d.token, csrs[i]!);
        latencies.push(performance.now() - start);
      } catch (e) {
        errors.push((e as Error).message);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await dispatcher.close();
  const enrolled = (await totalCount(http, admin, certFilter)) - before;
  const n = seeded.devices.length;
  const p95 = percentile(latencies, 0.95);
  const label = `${n} concurrent OTT enrollments (EC P-256 CSRs, one HTTPS connection each)`;
  return [
    {
      scenario: label,
      target: 'weft',
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      note: `all done in ${seconds.toFixed(2)} s; ${enrolled} more cert authenticators afterwards${errors.length ? `; first error: ${errors[0]}` : ''}`,
    },
    checkRow(
      label,
      `p95 ${p95.toFixed(0)} ms, ${errors.length} errors, ${enrolled} of ${n} enrolled (scenario ${seconds.toFixed(2)} s)`,
      `p95 ≤ ${GOALS.enrollP95Ms} ms, 0 errors`,
      p95 <= GOALS.enrollP95Ms && errors.length === 0 && enrolled === n,
    ),
  ];
}

interface Host {
  name: string;
  services: string[];
  cert: string;
  key: string;
  apiSession: string;
  bindTokens: string[];
  edge?: RawEdge;
}

/**
 * Goal 2: a fleet of hosting SDKs, each enrolled, logged in with its certificate, holding a Bind session per service
 * (prepared before the clock), connected to the built-in router with its hello answered; then every host binds its
 * services (BIND_WINDOW requests outstanding per connection) and each Bind must be answered StateConnected.
 */
async function bindBurst(origin: string, routerUrl: string, ca: string, http: Http, admin: string, seeded: Seeded): Promise<Row[]> {
  const total = seeded.hosts.reduce((t, h) => t + h.services.length, 0);
  const label = `${total} SDK binds: ${seeded.hosts.length} hosting identities × ${SERVICES_PER_HOST} services, each service on ${HOSTS_PER_SERVICE} hosts`;
  const shared = new Agent({ connect: { ca }, connections: 32 });
  const rows: Row[] = [];
  const hosts: Host[] = [];
  try {
    const prep = performance.now();
    hosts.push(
      ...(await pool(seeded.hosts, 16, async (h) => {
        const keys = await csr('EC-P256', h.name);
        const cert = await enroll(origin, shared, h.token, keys);
        const own = new Agent({ connect: { ca, cert, key: keys.keyPem } });
        const login = await request(`${origin}/edge/client/v1/authenticate?method=cert`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
          dispatcher: own,
        });
        const body = (await login.body.json()) as any;
        await own.close();
        if (login.statusCode !== 200) throw new Error(`cert login ${h.name}: ${login.statusCode} ${JSON.stringify(body)}`);
        return { name: h.name, services: h.services, cert, key: keys.keyPem, apiSession: body.data.token as string, bindTokens: [] as string[] };
      })),
    );
    const enrolledSeconds = (performance.now() - prep) / 1000;
    const sessionsStart = performance.now();
    const work = hosts.flatMap((h) => h.services.map((s, i) => ({ h, s, i })));
    await pool(work, 32, async ({ h, s, i }) => {
      const r = await http.call('POST', '/edge/client/v1/sessions', h.apiSession, { serviceId: s, type: 'Bind' });
      if (r.status !== 201) throw new Error(`Bind session ${h.name}: ${r.status} ${r.text}`);
      h.bindTokens[i] = r.json.data.token;
    });
    const sessionSeconds = (performance.now() - sessionsStart) / 1000;
    await pool(hosts, 32, async (h) => {
      h.edge = await RawEdge.connect(routerUrl, ca, { cert: h.cert, key: h.key });
      const hello = await h.edge.hello(h.apiSession);
      if (hello.headers.get(Header.ResultSuccess)?.[0] !== 1) throw new Error(`hello ${h.name} refused: ${hello.body.toString()}`);
    });
    rows.push({
      scenario: label,
      target: 'before the clock',
      note: `${hosts.length} hosts enrolled and logged in (${enrolledSeconds.toFixed(1)} s); ${work.length} Bind sessions over the Client API (${sessionSeconds.toFixed(1)} s, ${(work.length / sessionSeconds).toFixed(0)}/s); ${hosts.length} router connections with their hello answered`,
    });

    const latencies: number[] = [];
    const failures: string[] = [];
    const t0 = performance.now();
    await Promise.all(
      hosts.map(async (h, hi) => {
        let next = 0;
        const binder = async () => {
          while (next < h.services.length) {
            const i = next++;
            const connId = i + 1;
            const bind = message(
              EdgeType.Bind,
              [
                [Header.ConnId, u32(connId)],
                [Header.ListenerId, str(`listener-${hi}-${i}`)],
                [Header.Cost, Buffer.alloc(2)],
                [Header.Precedence, Buffer.from([0])],
                [Header.RouterProvidedConnId, Buffer.from([1])],
              ],
              h.bindTokens[i]!,
            );
            const start = performance.now();
            try {
              const reply = await h.edge!.channel.request(bind, 600_000);
              if (reply.contentType === EdgeType.StateConnected) latencies.push(performance.now() - start);
              else failures.push(reply.body.toString('utf8') || `reply type ${reply.contentType}`);
            } catch (e) {
              failures.push((e as Error).message);
            }
          }
        };
        await Promise.all(Array.from({ length: BIND_WINDOW }, binder));
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const terminators = await totalCount(http, admin, 'terminators');
    const goalSeconds = (GOALS.bindsSeconds * total) / GOALS.bindsAt;
    rows.push({
      scenario: label,
      target: 'weft (built-in router)',
      rps: latencies.length / seconds,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      note: `binds/s; ${terminators} terminators (Management API) afterwards${failures.length ? `; ${failures.length} failed, first: ${failures[0]}` : ''}`,
    });
    rows.push(
      checkRow(
        label,
        `${latencies.length} of ${total} answered StateConnected in ${seconds.toFixed(1)} s (${(total / seconds).toFixed(0)} binds/s), ${terminators} terminators`,
        `≤ ${goalSeconds.toFixed(0)} s${total === GOALS.bindsAt ? '' : ` (${GOALS.bindsSeconds} s for ${GOALS.bindsAt})`}, every bind answered, ${total} terminators`,
        seconds <= goalSeconds && failures.length === 0 && latencies.length === total && terminators === total,
      ),
    );
    return rows;
  } finally {
    await shared.close();
    for (const h of hosts) h.edge?.close();
  }
}

/** Goal 3: CSV files of CSV_ROWS rows through the console's import, each previewed then imported, as the console page does. */
async function importBurst(consoleUrl: string, http: Http, admin: string, count: number): Promise<Row[]> {
  const ui = await new ConsoleClient(consoleUrl).login(ADMIN.username, ADMIN.password);
  const before = await totalCount(http, admin, 'identities');
  const files: string[] = [];
  for (let f = 0; f * CSV_ROWS < count; f++) {
    const lines = ['name,type,attributes,enrollment'];
    for (let i = f * CSV_ROWS; i < Math.min(count, (f + 1) * CSV_ROWS); i++) lines.push(`burst-csv-${i},Device,burst-import;file-${f},ott`);
    files.push(lines.join('\n'));
  }
  let importMs = 0;
  let created = 0;
  const problems: string[] = [];
  const t0 = performance.now();
  for (const csv of files) {
    const rows = csv.split('\n').length - 1;
    const preview = await ui.mutate('bulk.importIdentities', { csv, dryRun: true });
    if (preview.status !== 200 || preview.data.created !== rows)
      problems.push(`preview: ${preview.status} ${JSON.stringify(preview.error ?? preview.data.failed)}`);
    const s = performance.now();
    const done = await ui.mutate('bulk.importIdentities', { csv, dryRun: false });
    importMs += performance.now() - s;
    if (done.status !== 200 || done.data.created !== rows) problems.push(`import: ${done.status} ${JSON.stringify(done.error ?? done.data.failed)}`);
    else created += done.data.created;
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = await totalCount(http, admin, 'identities');
  const goalSeconds = (GOALS.importSeconds * count) / GOALS.importAt;
  const label = `${count} identities through the console's CSV import (${files.length} files of ≤ ${CSV_ROWS} rows, OTT enrollment, tRPC over HTTP)`;
  return [
    {
      scenario: label,
      target: 'weft (console)',
      rps: count / seconds,
      note: `identities/s, preview + import; the imports alone ${(importMs / 1000).toFixed(1)} s; ${after - before} more identities afterwards${problems.length ? `; ${problems.length} problems, first: ${problems[0]}` : ''}`,
    },
    checkRow(
      label,
      `${created} created in ${seconds.toFixed(1)} s (each file previewed, then imported), ${after - before} more identities (Management API)`,
      `≤ ${goalSeconds.toFixed(0)} s${count === GOALS.importAt ? '' : ` (${GOALS.importSeconds} s for ${GOALS.importAt})`}, every row created`,
      seconds <= goalSeconds && problems.length === 0 && created === count && after - before === count,
    ),
  ];
}

export async function burstBench(workDir: string, sizes: BurstSizes): Promise<Row[]> {
  const dataDir = join(workDir, 'burst');
  console.log(`seeding the burst model (${sizes.binds / HOSTS_PER_SERVICE} services, ${Math.ceil(sizes.binds / SERVICES_PER_HOST)} hosts)…`);
  const seeded = await seed(dataDir, sizes);
  console.log(`  seeded in ${seeded.seconds.toFixed(1)} s`);
  const config = benchConfigFile(workDir, 'router:\n  listener: tls:127.0.0.1:0\nconsole:\n  address: 127.0.0.1:0\nmetrics:\n  enabled: false\n');
  const weft = await startChild(new URL('./weftServer.ts', import.meta.url).pathname, [dataDir, config], {}, weftNodeArgs());
  const rows: Row[] = [];
  try {
    const origin = weft.info.origin as string;
    const ca = readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
    const http = new Http(origin, ca);
    const admin = await http.login('management', ADMIN.username, ADMIN.password);
    const timed = async (name: string, run: () => Promise<Row[]>) => {
      const t0 = performance.now();
      const got = await run();
      console.log(`  ${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      rows.push(...got);
    };
    await timed('enrollments', () => enrollmentBurst(origin, ca, http, admin, seeded));
    await timed('binds', () => bindBurst(origin, weft.info.router as string, ca, http, admin, seeded));
    await timed('CSV import', () => importBurst(weft.info.console as string, http, admin, sizes.imports));
    await http.close();
  } finally {
    await weft.stop();
  }
  printTable(`Bursts: enrollments, binds and CSV import (${seeded.hosts.length} hosts, seeded in ${seeded.seconds.toFixed(1)} s)`, rows);
  return rows;
}
