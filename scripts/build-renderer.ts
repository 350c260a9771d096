// Builds the console renderer into out/renderer (`node --import tsx scripts/build-renderer.ts [--if-stale]`).
// Progress goes to stderr: stdout belongs to the CLI that may run after it (npm start).
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'out', 'renderer');
const SOURCES = [
  join(ROOT, 'src', 'renderer'),
  join(ROOT, 'src', 'shared'),
  join(ROOT, 'scripts', 'renderer-config.ts'),
  join(ROOT, 'package-lock.json'),
];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(info.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** True when out/renderer is missing or older than a renderer source. */
export function isRendererStale(): boolean {
  const index = join(OUT, 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return SOURCES.some((s) => newestMtime(s) > built);
}

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
