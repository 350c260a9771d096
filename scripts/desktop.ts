// npm run desktop: build everything with electron-vite, make sure the Electron binary is there, give Electron its
// own build of the V8-ABI native modules (without touching the Node builds npm start and npm test use), then run
// Electron on the project (package.json "main": out/main/electron.js). Arguments after `--` go to the app.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { displayProblem, electronBinary, ensureNativeModules } from './desktop-lib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const say = (line: string) => process.stderr.write(`weft desktop: ${line}\n`);

function fail(message: string): never {
  say(message);
  process.exit(1);
}

async function buildAll(): Promise<void> {
  say('building main, preload and renderer (electron-vite build)...');
  const { build } = await import('electron-vite');
  await build({ configFile: join(ROOT, 'electron.vite.config.ts'), logLevel: 'warn' });
}

function ensureElectronBinary(): string {
  let electron = electronBinary(ROOT);
  if (electron.present) return electron.path!;
  say(`${electron.reason}; downloading it now with: node node_modules/electron/install.js`);
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'electron', 'install.js')], { stdio: 'inherit', cwd: ROOT });
  electron = electronBinary(ROOT);
  if (r.status !== 0 || !electron.present) {
    fail(
      `the Electron binary could not be downloaded (${electron.reason ?? `install.js exited ${r.status}`}). ` +
        'Check network access to github.com (or set ELECTRON_MIRROR), then run npm run desktop again. npm start runs the same console headless.',
    );
  }
  return electron.path!;
}

async function main(): Promise<void> {
  await buildAll();
  const exe = ensureElectronBinary();
  try {
    await ensureNativeModules(ROOT, electronBinary(ROOT).version, say);
  } catch (e) {
    fail((e as Error).message);
  }
  const display = displayProblem(process.platform, process.env);
  if (display) say(`warning: ${display}`);
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  const child = spawn(exe, [ROOT, ...process.argv.slice(2)], { stdio: 'inherit', env, cwd: ROOT });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

main().catch((e) => fail((e as Error).stack ?? String(e)));
