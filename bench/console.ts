import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { benchConfigFile, checkRow, memoryMiB, weftNodeArgs, type Row } from './lib';
import { describeModel, LARGE, planModel, scaled } from './model';
import { seedWeft } from './policy';
import { freePort } from '../test/support/freePort';

/**
 * Issue 27's rows: the operator console at OpenZiti's large reference model. The model is seeded through the
 * core, then Weft starts as `npm start` does (node bin/weft.mjs start) on that data dir: the time to the first 200
 * on /edge/client/v1/version (median of 3 starts), the p95 of each console page's tRPC calls (batched as the
 * renderer's client sends them, with varied pages, sorts and searches), and the RSS of the Weft process after the
 * pages and a round of Management API lists.
 */

/** the administrator seedWeft creates (bench/policy.ts) */
const ADMIN = { username: 'admin', password: 'bench-admin-password' };
const ROOT = new URL('..', import.meta.url).pathname;
const GOAL_PAGE_P95_MS = 300;
const GOAL_COLD_START_MS = 1500;
const GOAL_RSS_MIB = 300;
const CSRF = { 'x-weft-console': '1' };

/** The list pages of the console: each loads the resource's description and its first page (ResourceTable). */
const LIST_PAGES = [
  'identities',
  'services',
  'service-policies',
  'edge-router-policies',
  'service-edge-router-policies',
  'edge-routers',
  'api-sessions',
  'sessions',
  'terminators',
] as const;

interface Started {
  proc: ChildProcess;
  api: string;
  console: string;
  ms: number;
  stop(): Promise<void>;
}

/** Weft started on the data dir with the user's flags, by `npm start` or `node bin/weft.mjs start`; resolves at the first 200 on /version. */
async function startWeft(dataDir: string, configFile: string, dispatcher: Agent, viaNpm = false): Promise<Started> {
  const [apiPort, consolePort] = [await freePort(), await freePort()];
  const bin = new URL('../bin/weft.mjs', import.meta.url).pathname;
  const t0 = process.hrtime.bigint();
  const args = [
    'start',
    '--data-dir',
    dataDir,
    '--config',
    configFile,
    '--api-address',
    `127.0.0.1:${apiPort}`,
    '--console-address',
    `127.0.0.1:${consolePort}`,
    '--router-listener',
    'tls:127.0.0.1:0',
    '--ctrl-listener',
    'off',
    '--metrics-address',
    'off',
    '--log-format',
    'json',
  ];
  // npm start runs its prepare step (a freshness check) and then `node bin/weft.mjs`; its own process group, so
  // stopping it stops Weft too
  const proc = viaNpm
    ? spawn('npm', ['start', '--silent', '--', ...args], { stdio: ['ignore', 'ignore', 'ignore'], cwd: ROOT, detached: true })
    : spawn(process.execPath, [...weftNodeArgs(), bin, ...args], { stdio: ['ignore', 'ignore', 'ignore'], cwd: dataDir });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    if (!viaNpm) {
      proc.kill('SIGTERM');
      await once(proc, 'exit');
      return;
    }
    process.kill(-proc.pid!, 'SIGTERM');
    // the group is gone when Weft (holding the data dir) has exited too
    for (;;) {
      try {
        process.kill(-proc.pid!, 0);
      } catch {
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const api = `https://127.0.0.1:${apiPort}`;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`weft start exited with ${proc.exitCode}`);
    try {
      const res = await request(`${api}/edge/client/v1/version`, { dispatcher });
      await res.body.dump();
      if (res.statusCode === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { proc, api, console: `http://127.0.0.1:${consolePort}`, ms, stop };
}

class Console {
  cookie = '';
  constructor(readonly base: string) {}
  async login(): Promise<this> {
    const res = await request(`${this.base}/trpc/session.login`, {
      method: 'POST',
      headers: { ...CSRF, 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    await res.body.dump();
    const set = res.headers['set-cookie'];
    this.cookie = String(Array.isArray(set) ? set[0] : set).split(';')[0]!;
    if (res.statusCode !== 200) throw new Error(`console login failed: ${res.statusCode}`);
    return this;
  }
  async query(path: string, input: unknown): Promise<any> {
    const res = await request(`${this.base}/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, {
      headers: { ...CSRF, cookie: this.cookie },
    });
    const body = (await res.body.json()) as any;
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${JSON.stringify(body).slice(0, 300)}`);
    return body.result.data;
  }
  /** one batched GET as the renderer's httpBatchLink sends it; the time until every result is in */
  async batch(calls: Array<{ path: string; input?: unknown }>): Promise<number> {
    const paths = calls.map((c) => c.path).join(',');
    const inputs = JSON.stringify(Object.fromEntries(calls.map((c, i) => [i, c.input ?? null])));
    const t0 = process.hrtime.bigint();
    const res = await request(`${this.base}/trpc/${paths}?batch=1&input=${encodeURIComponent(inputs)}`, {
      headers: { ...CSRF, cookie: this.cookie },
    });
    const body = (await res.body.json()) as any[];
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const failed = body.find((r) => r.error);
    if (res.statusCode !== 200 || failed) throw new Error(`${paths}: ${res.statusCode} ${JSON.stringify(failed?.error ?? body).slice(0, 300)}`);
    return ms;
  }
}

const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!;

/** What a user does on a list page: page through, sort by name both ways, search by name. */
function listInputs(resource: string, n: number, named: boolean): Array<Array<{ path: string; input?: unknown }>> {
  const out: Array<Array<{ path: string; input?: unknown }>> = [];
  const words = ['1', '2', '42', 'a', 'e', 'x', '7', 'zz'];
  for (let i = 0; i < n; i++) {
    const kind = i % 4;
    const input: Record<string, unknown> = { resource, limit: 25, offset: 0 };
    if (kind === 1) input.offset = 25 * (i % 40);
    if (kind === 2) input.sort = { field: named ? 'name' : 'createdAt', dir: i % 8 < 4 ? 'asc' : 'desc' };
    if (kind === 3 && !named) input.offset = 25 * (i % 7);
    if (kind === 3 && named) input.filter = `name contains "${words[i % words.length]}"`;
    // the first load of a page also asks for the resource's description (cached afterwards)
    out.push(
      i === 0
        ? [
            { path: 'resources.describe', input: { resource } },
            { path: 'resources.list', input },
          ]
        : [{ path: 'resources.list', input }],
    );
  }
  return out;
}

export async function consoleBench(workDir: string, opts: { quick: boolean; samples: number }): Promise<Row[]> {
  const started = Date.now();
  const spec = opts.quick ? scaled(LARGE, 0.1, 'large/10') : LARGE;
  const dataDir = join(workDir, `console-${spec.name.replace('/', '-')}`);
  console.log(`seeding ${spec.name}: ${describeModel(spec)}…`);
  const seeded = await seedWeft(dataDir, planModel(spec), { onlineRouters: true, apiSessions: 50 });
  console.log(`  seeded in ${seeded.seconds.toFixed(1)} s`);
  const configFile = benchConfigFile(workDir);
  const dispatcher = new Agent({ connect: { ca: readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8') } });
  const rows: Row[] = [];
  const starts: number[] = [];
  let weft: Started | undefined;
  try {
    // what an earlier `npm start` left: the CLI bundle and the renderer built (npm start's prepare step)
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'prepare.mjs')], { stdio: 'inherit' });
    for (let i = 0; i < 3; i++) {
      await weft?.stop();
      weft = await startWeft(dataDir, configFile, dispatcher, true);
      starts.push(weft.ms);
    }
    await weft?.stop();
    // the instance the pages and the memory rows use: Weft's own process, no npm in between
    weft = await startWeft(dataDir, configFile, dispatcher);
    const median = [...starts].sort((a, b) => a - b)[1]!;
    rows.push(
      checkRow(
        `console ${spec.name}: cold start (npm start to the first 200 on /version)`,
        `median ${median.toFixed(0)} ms (${starts.map((s) => s.toFixed(0)).join(', ')})`,
        `≤ ${GOAL_COLD_START_MS} ms`,
        median <= GOAL_COLD_START_MS,
      ),
      { scenario: `console ${spec.name}: cold start without npm (node bin/weft.mjs start)`, target: 'weft', note: `${weft.ms.toFixed(0)} ms` },
    );
    const ui = await new Console(weft!.console).login();
    const pages: Record<string, Array<Array<{ path: string; input?: unknown }>>> = {};
    for (const r of LIST_PAGES) {
      const description = await ui.query('resources.describe', { resource: r });
      pages[r] = listInputs(r, opts.samples, description.filterable.includes('name') && description.sortable.includes('name'));
    }
    pages['network map'] = Array.from({ length: opts.samples }, (_, i) => {
      const query = [{}, { name: `svc-${i}` }, { attribute: 'svc-attr-1' }, { identityId: seeded.sampleIdentity }][i % 4]!;
      return [{ path: 'network.graph', input: { query: { ...query, expand: [] } } }, { path: 'network.live' }, { path: 'network.fabric' }];
    });
    pages['dashboard'] = Array.from({ length: opts.samples }, () => [{ path: 'dashboard.overview' }]);
    for (const [page, loads] of Object.entries(pages)) {
      const times: number[] = [];
      for (const calls of loads) times.push(await ui.batch(calls));
      const p = p95(times);
      rows.push(
        checkRow(
          `console ${spec.name}: ${page} page`,
          `p95 ${p.toFixed(0)} ms (${times.length} loads, median ${[...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!.toFixed(0)} ms)`,
          `≤ ${GOAL_PAGE_P95_MS} ms`,
          p <= GOAL_PAGE_P95_MS,
        ),
      );
    }
    // a round of Management API lists
    const auth = await request(`${weft!.api}/edge/management/v1/authenticate?method=password`, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const token = ((await auth.body.json()) as any).data.token as string;
    for (const path of LIST_PAGES)
      for (const q of [
        'limit=100',
        'limit=100&offset=500',
        ...(['api-sessions', 'sessions', 'terminators'].includes(path) ? [] : ['limit=25&filter=name%20contains%20%221%22']),
      ]) {
        const res = await request(`${weft!.api}/edge/management/v1/${path}?${q}`, { dispatcher, headers: { 'zt-session': token } });
        await res.body.dump();
        if (res.statusCode !== 200) throw new Error(`GET ${path}?${q}: ${res.statusCode}`);
      }
    const after = memoryMiB(weft!.proc.pid);
    await new Promise((r) => setTimeout(r, 2000));
    const settled = memoryMiB(weft!.proc.pid);
    if (after && settled)
      rows.push(
        checkRow(
          `console ${spec.name}: RSS of the Weft process after the pages and Management lists`,
          `peak ${after.peak.toFixed(0)} MiB, settled ${settled.rss.toFixed(0)} MiB`,
          `≤ ${GOAL_RSS_MIB} MiB`,
          after.peak <= GOAL_RSS_MIB,
        ),
      );
  } finally {
    await weft?.stop();
    await dispatcher.close();
  }
  console.log(`\n## Console at scale (${spec.name}), ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  for (const r of rows) console.log(`${r.scenario}: ${r.note}`);
  return rows;
}
