// Prometheus' own text-format parser and linter (test/prometheus: github.com/prometheus/common/expfmt and promlint,
// what `promtool check metrics` runs), built once per source fingerprint into the cache with the Go toolchain.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const SOURCE = join(import.meta.dirname, '..', 'prometheus');

export interface PromSample {
  labels: Record<string, string>;
  /** counters and gauges (NaN and ±Inf as strings) */
  value?: number | string;
  /** histograms */
  count?: number;
  sum?: number;
}

export interface PromFamily {
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  help: string;
  samples: PromSample[];
}

export interface PromParse {
  families: Record<string, PromFamily>;
  /** promlint's findings, as `metric: text` */
  problems: string[];
}

let built: string | undefined;

/**
 * The checker's binary, built when missing (a build writes a temporary file and renames it: parallel test files are
 * safe). A fresh machine downloads the Go modules first: call it in a beforeAll with a long timeout.
 */
export function prometheusChecker(): string {
  if (built) return built;
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) h.update(readFileSync(join(SOURCE, f)));
  const dir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'weft', 'prometheus-check');
  const bin = join(dir, `prometheus-check-${h.digest('hex').slice(0, 16)}`);
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${bin}.${process.pid}.tmp`;
    const go = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
    execFileSync(go, ['build', '-o', tmp, '.'], { cwd: SOURCE, env: { ...process.env, GOFLAGS: '-buildvcs=false' }, stdio: 'pipe' });
    renameSync(tmp, bin);
  }
  return (built = bin);
}

/** Parses an exposition with Prometheus' parser (throws with its message on a syntax error) and lints it. */
export function parsePrometheus(text: string): PromParse {
  const r = spawnSync(prometheusChecker(), [], { input: text, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`Prometheus' parser refused the exposition: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as PromParse;
}

/** The samples of a family whose labels include `labels` (none when the family has none: the parser drops it then). */
export function samplesOf(p: PromParse, name: string, labels: Record<string, string> = {}): PromSample[] {
  const f = p.families[name];
  if (!f) return [];
  return f.samples.filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
