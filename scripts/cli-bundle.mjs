// The CLI as one prebuilt ES module (out/cli/main/weft.mjs), so `npm start` does not compile the TypeScript
// sources through tsx on every start (that took seconds). bin/weft.mjs runs the bundle while it is newer than
// every main-process source and falls back to tsx otherwise (a source edited since the last `npm start`).
// npm packages are bundled too (resolving and reading hundreds of package files was most of a start); native
// modules stay external, loaded through a require made for the bundle. The bundle sits three folders deep like
// src/main/<dir>/, so the paths the sources resolve from import.meta.url (../../../out/renderer) stay right.
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFresh } from './freshness.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'out', 'cli', 'main');
export const CLI_BUNDLE = join(OUT, 'weft.mjs');
// @peculiar/x509 needs the Reflect metadata shim before it loads: a module of its own that bin/weft.mjs imports
// first, so it runs before anything in the bundle (a module's imports are evaluated before its own code)
export const SHIM_BUNDLE = join(OUT, 'reflectShim.mjs');
// packages with native builds (and Electron, never used by the CLI): loaded from node_modules at run time
const NATIVE = ['better-sqlite3', 'argon2', 'electron', 'pg-native'];
const SOURCES = [join(ROOT, 'src', 'main'), join(ROOT, 'src', 'shared'), join(ROOT, 'package-lock.json'), fileURLToPath(import.meta.url)];

/** True when the bundle exists and no main-process source is newer. */
export function isCliBundleFresh() {
  return isFresh([CLI_BUNDLE, SHIM_BUNDLE], SOURCES);
}

/** Builds into a folder beside the old one, then swaps them (a CLI starting meanwhile never reads half a build). */
export async function buildCliBundle() {
  const { build } = await import('esbuild');
  const temp = join(ROOT, 'out', 'cli', `.main-${process.pid}`);
  await build({
    entryPoints: { weft: join(ROOT, 'src', 'main', 'cli.ts'), reflectShim: join(ROOT, 'src', 'main', 'core', 'pki', 'reflectShim.ts') },
    outdir: temp,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: NATIVE,
    banner: { js: "import { createRequire as __weftRequire } from 'node:module'; const require = __weftRequire(import.meta.url);" },
    sourcemap: 'linked',
    // smaller to read and parse at every start; identifiers kept, so stack traces stay readable
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
  });
  const old = join(ROOT, 'out', 'cli', `.main-old-${process.pid}`);
  if (existsSync(OUT)) renameSync(OUT, old);
  renameSync(temp, OUT);
  rmSync(old, { recursive: true, force: true });
}
