import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { dataplaneBench } from './dataplane';
import { foundationBench } from './foundation';
import { frontendBench } from './frontend';
import { policyBench } from './policy';

/**
 * `npm run bench`: seeds reference models through the core, starts Weft in its own process and measures it
 * side by side with floor servers. Options: --only <scenario>, --quick (smaller models, shorter runs).
 */
const { values } = parseArgs({ options: { only: { type: 'string' }, quick: { type: 'boolean' } } });
const quick = !!values.quick;
const workDir = mkdtempSync(join(tmpdir(), 'weft-bench-'));
const scenarios: Record<string, () => Promise<unknown>> = {
  foundation: () => foundationBench(workDir, { identities: quick ? 10_000 : 100_000, durationMs: quick ? 1000 : 3000 }),
  frontend: () => frontendBench(workDir, { quick, durationMs: quick ? 1000 : 3000 }),
  policy: () => policyBench(workDir, { quick, durationMs: quick ? 1000 : 3000 }),
  dataplane: () => dataplaneBench(workDir, { quick }),
};
try {
  for (const [name, run] of Object.entries(scenarios)) {
    if (values.only && values.only !== name) continue;
    await run();
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
