// Builds the console renderer into out/renderer (`node --import tsx scripts/build-renderer.ts [--if-stale]`).
// Progress goes to stderr: stdout belongs to the CLI that may run after it (npm start).
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isRendererStale, RENDERER_OUT } from './freshness.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = RENDERER_OUT;
export { isRendererStale };

export async function buildRenderer(): Promise<void> {
  const started = Date.now();
  process.stderr.write('weft: building the console renderer (out/renderer)...\n');
  // build beside the old output, then swap: a console serving meanwhile never sees a half-written directory
  const temp = join(ROOT, 'out', `.renderer-${process.pid}`);
  // loaded only when building: the freshness check stays quick
  const [{ build }, { rendererConfig }] = await Promise.all([import('vite'), import('./renderer-config')]);
  await build({ ...rendererConfig(ROOT, temp), configFile: false });
  const old = join(ROOT, 'out', `.renderer-old-${process.pid}`);
  if (existsSync(OUT)) renameSync(OUT, old);
  renameSync(temp, OUT);
  rmSync(old, { recursive: true, force: true });
  process.stderr.write(`weft: console renderer built in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  (process.argv.includes('--if-stale') && !isRendererStale() ? Promise.resolve() : buildRenderer()).catch((e) => {
    process.stderr.write(`weft: building the console renderer failed: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
}
