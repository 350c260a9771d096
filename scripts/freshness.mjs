// Build outputs are rebuilt when a source is newer: the check, in plain JS so npm start's prepare step runs
// without compiling TypeScript.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The newest modification time of a file or of anything under a folder (0 when it does not exist). */
export function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(info.mtimeMs, ...readdirSync(path).map((name) => newestMtime(`${path}/${name}`)));
}

/** True when every output exists and none is older than a source. */
export function isFresh(outputs, sources) {
  if (!outputs.every((o) => existsSync(o))) return false;
  const built = Math.min(...outputs.map((o) => statSync(o).mtimeMs));
  return sources.every((s) => newestMtime(s) <= built);
}

/** Where the console renderer is built (scripts/build-renderer.ts), and what it is built from. */
export const RENDERER_OUT = join(ROOT, 'out', 'renderer');
const RENDERER_SOURCES = ['src/renderer', 'src/shared', 'scripts/renderer-config.ts', 'package-lock.json'].map((p) => join(ROOT, p));

/** True when out/renderer is missing or older than a renderer source. */
export function isRendererStale() {
  return !isFresh([join(RENDERER_OUT, 'index.html')], RENDERER_SOURCES);
}
