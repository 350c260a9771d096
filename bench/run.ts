import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { burstBench } from './burst';
import { consoleBench } from './console';
import { dataplaneBench } from './dataplane';
import { foundationBench } from './foundation';
import { frontendBench } from './frontend';
import type { Row } from './lib';
import { peerBench } from './peer';
import { policyBench } from './policy';
import { storeBench } from './store';

/**
 * `npm run bench`: seeds reference models through the core, starts Weft in its own process and measures it
 * side by side with floor servers and the real OpenZiti controller. Options: --only <scenario>, --quick (smaller
 * models, shorter runs), --json (all rows as JSON on stdout; the tables then go to stderr), --json-file FILE
 * (the same JSON into a file).
 */
const { values } = parseArgs({
  options: { only: { type: 'string' }, quick: { type: 'boolean' }, json: { type: 'boolean' }, 'json-file': { type: 'string' } },
});
const quick = !!values.quick;
if (values.json) console.log = console.error; // stdout carries the JSON alone
const started = Date.now();
const workDir = mkdtempSync(join(tmpdir(), 'weft-bench-'));
const scenarios: Record<string, () => Promise<unknown[]>> = {
  foundation: () => foundationBench(workDir, { identities: quick ? 10_000 : 100_000, durationMs: quick ? 1500 : 4500, rounds: quick ? 2 : 3 }),
  frontend: () => frontendBench(workDir, { quick, durationMs: quick ? 1000 : 3000 }),
  policy: () => policyBench(workDir, { quick, durationMs: quick ? 1200 : 3000 }),
  peer: () => peerBench(workDir, { quick, durationMs: quick ? 1200 : 3000 }),
  dataplane: () => dataplaneBench(workDir, { quick }),
  burst: () => burstBench(workDir, { enrollments: 250, binds: quick ? 2_000 : 40_000, imports: quick ? 2_000 : 10_000 }),
  console: () => consoleBench(workDir, { quick, samples: quick ? 30 : 50 }),
  store: () => storeBench(workDir, { identities: quick ? 10_000 : 50_000, durationMs: quick ? 1200 : 3000, rounds: quick ? 2 : 3 }),
};
if (values.only && !(values.only in scenarios)) {
  console.error(`unknown scenario ${values.only}; one of ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
const results: Array<Row & { table: string; met?: boolean }> = [];
try {
  for (const [name, run] of Object.entries(scenarios)) {
    if (values.only && values.only !== name) continue;
    for (const row of (await run()) as Row[]) {
      // check rows of every scenario state MET / NOT MET; the JSON carries it as a boolean
      const met = row.check?.met ?? (row.target === 'check' && row.note ? !/\bNOT MET\b/.test(row.note) && /\bMET\b/.test(row.note) : undefined);
      results.push({ table: name, ...row, ...(met === undefined ? {} : { met }) });
    }
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
const checks = results.filter((r) => r.met !== undefined);
const failed = checks.filter((r) => !r.met);
console.log(
  `\n${checks.length - failed.length} of ${checks.length} checks met${failed.length ? `; not met: ${failed.map((r) => r.scenario).join(' | ')}` : ''}` +
    ` (${((Date.now() - started) / 1000).toFixed(0)} s)`,
);
if (values.json || values['json-file']) {
  const json = JSON.stringify(
    {
      quick,
      startedAt: new Date(started).toISOString(),
      seconds: (Date.now() - started) / 1000,
      machine: { cpus: availableParallelism(), model: cpus()[0]?.model, node: process.version },
      rows: results,
    },
    null,
    2,
  );
  if (values['json-file']) writeFileSync(values['json-file'], json + '\n');
  if (values.json) process.stdout.write(json + '\n');
}
