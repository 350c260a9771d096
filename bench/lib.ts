import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';

/** One measured target: throughput and latency percentiles. */
export interface Measurement {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
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
  const worker = async () => {
    while (!stop) {
      const r: RequestSpec = opts.next?.() ?? opts;
      const t0 = process.hrtime.bigint();
      try {
        const res = await pool.request({ path: r.path, method: r.method ?? 'GET', headers: r.headers, body: r.body });
        await res.body.dump();
        if (!ok(res.statusCode)) errors++;
      } catch {
        errors++;
      }
      if (recording) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  const workers = Array.from({ length: connections }, worker);
  await sleep(opts.warmupMs ?? 500);
  recording = true;
  const start = process.hrtime.bigint();
  await sleep(opts.durationMs ?? 3000);
  recording = false;
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  const requests = latencies.length;
  stop = true;
  await Promise.all(workers);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  return { rps: requests / elapsed, p50Ms: pct(0.5), p99Ms: pct(0.99), requests, errors };
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
}

export function rowOf(scenario: string, target: string, m: Measurement, note?: string): Row {
  return { scenario, target, rps: m.rps, p50Ms: m.p50Ms, p99Ms: m.p99Ms, note: m.errors ? `${m.errors} errors${note ? '; ' + note : ''}` : note };
}

/** Prints rows as an aligned text table. */
export function printTable(title: string, rows: Row[]): void {
  const cells = rows.map((r) => [
    r.scenario,
    r.target,
    r.rps === undefined ? '' : r.rps.toFixed(0),
    r.p50Ms === undefined ? '' : r.p50Ms.toFixed(2),
    r.p99Ms === undefined ? '' : r.p99Ms.toFixed(2),
    r.note ?? '',
  ]);
  const head = ['scenario', 'target', 'req/s', 'p50 ms', 'p99 ms', 'note'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => (i >= 2 && i <= 4 ? x.padStart(widths[i]!) : x.padEnd(widths[i]!))).join('  ');
  console.log(`\n## ${title}\n`);
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
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
