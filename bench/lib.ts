import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';

/** One measured target: throughput and latency percentiles. */
export interface Measurement {
  /** completed requests per second (successful or not) */
  rps: number;
  /** successful requests per second */
  okRps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  /** statuses of the failed requests seen while recording, e.g. {"429": 12} */
  statuses?: Record<string, number>;
}

export interface RequestSpec {
  path: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  origin: string;
  path: string;
  /** a fresh request for every call (e.g. creates that must not repeat); overrides path/method/headers/body */
  next?: () => RequestSpec;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** concurrent connections (each runs requests back to back) */
  connections?: number;
  durationMs?: number;
  warmupMs?: number;
  ca?: string;
  /** status considered success (default 2xx) */
  ok?: (status: number) => boolean;
}

/**
 * A small closed-loop HTTP load generator over keep-alive connections (undici Pool).
 * Runs a warm-up, then counts completed requests and their latencies for `durationMs`.
 */
export async function load(opts: LoadOptions): Promise<Measurement> {
  const connections = opts.connections ?? 8;
  const pool = new Pool(opts.origin, { connections, pipelining: 1, connect: opts.ca ? { ca: opts.ca } : undefined });
  const ok = opts.ok ?? ((s: number) => s >= 200 && s < 300);
  const latencies: number[] = [];
  let errors = 0;
  let recording = false;
  let stop = false;
  const statuses: Record<string, number> = {};
  const worker = async () => {
    while (!stop) {
      const r: RequestSpec = opts.next?.() ?? opts;
      const t0 = process.hrtime.bigint();
      let good = false;
      let status = 'error';
      try {
        const res = await pool.request({ path: r.path, method: r.method ?? 'GET', headers: r.headers, body: r.body });
        await res.body.dump();
        good = ok(res.statusCode);
        status = String(res.statusCode);
      } catch {
        // counted below
      }
      if (!recording) continue;
      // latency percentiles are those of successful requests (a quick refusal is not a fast answer)
      if (good) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      else {
        errors++;
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }
  };
  const workers = Array.from({ length: connections }, worker);
  await sleep(opts.warmupMs ?? 500);
  recording = true;
  const start = process.hrtime.bigint();
  await sleep(opts.durationMs ?? 3000);
  recording = false;
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  const requests = latencies.length + errors;
  stop = true;
  await Promise.all(workers);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  return {
    rps: requests / elapsed,
    okRps: latencies.length / elapsed,
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
    requests,
    errors,
    ...(errors ? { statuses } : {}),
  };
}

/**
 * Measures several targets in interleaved rounds (a, b, c, a, b, c, ...), so a burst of load from elsewhere on the
 * machine hits every target alike; returns each target's rounds combined, and per round the rates.
 */
export async function interleaved<K extends string>(
  targets: Record<K, LoadOptions>,
  opts: { rounds: number; durationMs: number },
): Promise<{ combined: Record<K, Measurement>; rounds: Record<K, Measurement[]> }> {
  const rounds = Object.fromEntries(Object.keys(targets).map((k) => [k, [] as Measurement[]])) as Record<K, Measurement[]>;
  const per = Math.max(500, Math.round(opts.durationMs / opts.rounds));
  for (let r = 0; r < opts.rounds; r++) {
    for (const [name, t] of Object.entries(targets) as Array<[K, LoadOptions]>) {
      rounds[name].push(await load({ ...t, durationMs: per, warmupMs: t.warmupMs ?? (r === 0 ? 500 : 200) }));
    }
  }
  const combined = Object.fromEntries(Object.entries(rounds).map(([k, ms]) => [k, combine(ms as Measurement[])])) as Record<K, Measurement>;
  return { combined, rounds };
}

/** Rounds of one target as one measurement: total requests over total time, median percentiles. */
export function combine(ms: Measurement[]): Measurement {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const seconds = ms.reduce((t, m) => t + (m.rps ? m.requests / m.rps : 0), 0);
  const requests = ms.reduce((t, m) => t + m.requests, 0);
  const errors = ms.reduce((t, m) => t + m.errors, 0);
  const statuses: Record<string, number> = {};
  for (const m of ms) for (const [k, v] of Object.entries(m.statuses ?? {})) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    rps: seconds ? requests / seconds : 0,
    okRps: seconds ? (requests - errors) / seconds : 0,
    p50Ms: median(ms.map((m) => m.p50Ms)),
    p99Ms: median(ms.map((m) => m.p99Ms)),
    requests,
    errors,
    ...(errors ? { statuses } : {}),
  };
}

/**
 * a's rate over b's: the median of the per-round ratios (each pair measured back to back) from 3 rounds on, else
 * the ratio of the rounds combined (a median of two would be the worse round).
 */
export function medianRatio(a: Measurement[], b: Measurement[], of: (m: Measurement) => number = (m) => m.okRps): number {
  if (a.length < 3) return of(combine(a)) / of(combine(b));
  const rs = a.map((m, i) => of(m) / of(b[i]!)).sort((x, y) => x - y);
  return rs.length % 2 ? rs[(rs.length - 1) / 2]! : (rs[rs.length / 2 - 1]! + rs[rs.length / 2]!) / 2;
}

/** Resident memory of a process (Linux /proc): current and peak, in MiB; undefined elsewhere. */
export function memoryMiB(pid: number | undefined): { rss: number; peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Node flags for a benchmarked Weft process: WEFT_BENCH_CPU_PROF=DIR writes a CPU profile of it into DIR. */
export function weftNodeArgs(): string[] {
  const dir = process.env.WEFT_BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
}

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Times a synchronous function: mean microseconds per call over `iterations` after a warm-up. */
export function timeSync(fn: () => unknown, iterations = 2000): number {
  for (let i = 0; i < Math.min(200, iterations); i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1e3 / iterations;
}

export interface Child {
  proc: ChildProcess;
  /** the first JSON line the child printed on stdout */
  info: Record<string, any>;
  stop(): Promise<void>;
}

/** Starts a TypeScript module in its own Node process (via tsx) and waits for its first JSON line on stdout. */
export async function startChild(module: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Promise<Child> {
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', module, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: proc.stdout! });
  const info = await new Promise<Record<string, any>>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${module} exited with ${code} before it was ready`)));
    lines.once('line', (l) => resolve(JSON.parse(l)));
  });
  return {
    proc,
    info,
    stop: async () => {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    },
  };
}

export interface Row {
  scenario: string;
  target: string;
  rps?: number;
  p50Ms?: number;
  p99Ms?: number;
  note?: string;
  /** check rows: the goal, what was measured, and whether it was met */
  check?: { goal: string; measured: string; met: boolean };
  /** any further numbers a row carries (JSON output) */
  values?: Record<string, number>;
}

export function rowOf(scenario: string, target: string, m: Measurement, note?: string): Row {
  const failed = m.errors
    ? `${m.errors} errors${
        m.statuses
          ? ` (${Object.entries(m.statuses)
              .map(([k, v]) => `${k}: ${v}`)
              .join(', ')})`
          : ''
      }`
    : undefined;
  return {
    scenario,
    target,
    rps: m.okRps,
    p50Ms: m.p50Ms,
    p99Ms: m.p99Ms,
    note: [failed, note].filter(Boolean).join('; ') || undefined,
    ...(m.errors ? { values: { errors: m.errors, requests: m.requests } } : {}),
  };
}

/** A check row: `measured` against `goal`, MET or NOT MET. */
export function checkRow(scenario: string, measured: string, goal: string, met: boolean, note?: string): Row {
  return {
    scenario,
    target: 'check',
    note: `${measured}; goal ${goal} ${met ? 'MET' : 'NOT MET'}${note ? ` (${note})` : ''}`,
    check: { goal, measured, met },
  };
}

/** Prints rows as an aligned text table: scenario, target, three numbers (right-aligned), note. */
export function printColumns<R extends { scenario: string; target: string; note?: string }>(
  title: string,
  head: [string, string, string],
  rows: R[],
  nums: (r: R) => Array<number | undefined>,
): void {
  const cells = rows.map((r) => [r.scenario, r.target, ...nums(r).map((n, i) => (n === undefined ? '' : n.toFixed(i === 0 ? 0 : 2))), r.note ?? '']);
  const all = ['scenario', 'target', ...head, 'note'];
  const widths = all.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => (i >= 2 && i <= 4 ? x.padStart(widths[i]!) : x.padEnd(widths[i]!))).join('  ');
  console.log(`\n## ${title}\n`);
  console.log(line(all));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}

/** Prints request rows as an aligned text table. */
export function printTable(title: string, rows: Row[]): void {
  printColumns(title, ['req/s', 'p50 ms', 'p99 ms'], rows, (r: Row) => [r.rps, r.p50Ms, r.p99Ms]);
}

/** CPU time (user + system, µs) a process has used, from /proc on Linux; undefined elsewhere. */
export function cpuMicros(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000; // clock ticks of 10 ms
  } catch {
    return undefined;
  }
}

/**
 * A config file for benchmarked servers: the per-client and authentication rate limits are real defences
 * that a single-origin load generator would trip, so benches turn them off.
 */
export function benchConfigFile(dir: string, extraYaml = ''): string {
  const file = join(dir, `bench-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(file, `rate_limits:\n  per_client:\n    enabled: false\n  auth:\n    enabled: false\n${extraYaml}`);
  return file;
}

/** Runs `make(0…n-1)` in transactions of 2,000 (seeding through the core), the results in order. */
export async function inBatches<T>(store: { tx<R>(fn: () => Promise<R>): Promise<R> }, n: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += 2000)
    await store.tx(async () => {
      for (let j = i; j < Math.min(n, i + 2000); j++) out.push(await make(j));
    });
  return out;
}
