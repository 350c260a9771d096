#!/usr/bin/env node
// Runs the CLI: the prebuilt bundle while it is current (npm start builds it first), else the TypeScript sources
// through tsx's loader (no build step needed while developing).
import { CLI_BUNDLE, SHIM_BUNDLE, isCliBundleFresh } from '../scripts/cli-bundle.mjs';
import { pathToFileURL } from 'node:url';

// npm start prepares first in this process (a second process for a prestart script cost a third of a start); the
// bundle is current afterwards (prepare builds it when stale), so its freshness is not walked for a second time
let bundled;
if (process.env.npm_lifecycle_event === 'start') {
  const { prepare } = await import('../scripts/prepare.mjs');
  try {
    await prepare();
  } catch (e) {
    process.stderr.write(`weft: preparing failed: ${e?.stack ?? e}\n`);
    process.exit(1);
  }
  bundled = true;
} else bundled = isCliBundleFresh();
let cli;
if (bundled) {
  await import(pathToFileURL(SHIM_BUNDLE).href);
  cli = await import(pathToFileURL(CLI_BUNDLE).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import('../src/main/cli.ts');
}
await cli.main(process.argv.slice(2));
