// Builds the console renderer into out/renderer. With --if-stale (npm start / npm test) it does nothing when the
// build is newer than every renderer source, so starting stays fast. Progress goes to stderr: stdout is the CLI's.
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { rendererConfig } from './renderer-config';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'out', 'renderer');
const SOURCES = [join(ROOT, 'src', 'renderer'), join(ROOT, 'src', 'shared'), join(ROOT, 'scripts', 'renderer-config.ts'), join(ROOT, 'package-lock.json')];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(info.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

function isStale(): boolean {
  const index = join(OUT, 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return SOURCES.some((s) => newestMtime(s) > built);
}

async function main(): Promise<void> {
  if (process.argv.includes('--if-stale') && !isStale()) return;
  const started = Date.now();
  process.stderr.write('weft: building the console renderer (out/renderer)...\n');
  // build beside the old output, then swap: a console serving meanwhile never sees a half-written directory
  const temp = join(ROOT, 'out', `.renderer-${process.pid}`);
  await build({ ...rendererConfig(ROOT, temp), configFile: false });
  const old = join(ROOT, 'out', `.renderer-old-${process.pid}`);
  if (existsSync(OUT)) renameSync(OUT, old);
  renameSync(temp, OUT);
  rmSync(old, { recursive: true, force: true });
  process.stderr.write(`weft: console renderer built in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
}

main().catch((e) => {
  process.stderr.write(`weft: building the console renderer failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
