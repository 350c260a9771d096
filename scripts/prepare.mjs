// Runs before npm test and at the start of npm start (bin/weft.mjs calls it: one process, plain JS, so the quick
// path compiles no TypeScript): puts back Node's native builds if a packaging run left Electron's in node_modules,
// builds the console renderer and the CLI bundle when they are missing or older than their sources. Before npm test
// (--test) it also builds the pinned OpenZiti tools the interop tests drive when Go is available and they are
// missing or stale (the first build takes minutes; later runs reuse it).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildCliBundle, isCliBundleFresh } from './cli-bundle.mjs';
import { isRendererStale } from './freshness.mjs';
import { openzitiDir, openzitiStamp } from './openziti-stamp.mjs';

const { restoreNodeBuilds } = createRequire(import.meta.url)('./native-backup.cjs');

/** The builds npm start and npm test need; `test` also brings the OpenZiti tools. */
export async function prepare({ test = false } = {}) {
  if (restoreNodeBuilds()) process.stderr.write("weft: restored Node's native module builds after an interrupted packaging run\n");
  if (isRendererStale()) {
    const { register } = await import('tsx/esm/api');
    register();
    const { buildRenderer } = await import('./build-renderer.ts');
    await buildRenderer();
  }
  if (!isCliBundleFresh()) await buildCliBundle();
  if (test) prepareOpenzitiTools();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    await prepare({ test: process.argv.includes('--test') });
  } catch (e) {
    process.stderr.write(`weft: preparing failed: ${e?.stack ?? e}\n`);
    process.exit(1);
  }
}

function prepareOpenzitiTools() {
  const stamp = join(openzitiDir(), 'stamp');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === openzitiStamp()) return;
  if (spawnSync('go', ['version'], { stdio: 'ignore' }).status !== 0) {
    process.stderr.write('weft: Go is not installed, so the OpenZiti interop tests will fail: install Go, then run npm run openziti-tools\n');
    return;
  }
  const r = spawnSync('bash', [join(import.meta.dirname, 'openziti-tools.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) process.stderr.write('weft: building the OpenZiti tools failed; the interop tests will fail (see above)\n');
}
