// npm run desktop: build everything with electron-vite, make sure the Electron binary is there, give Electron its
// own build of the V8-ABI native modules (without touching the Node builds npm start and npm test use), then run
// Electron on the project (package.json "main": out/main/electron.js). Arguments after `--` go to the app.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  copyFilter, displayProblem, electronBinary, electronModulesDir, modulesToRebuild, moduleVersion, NATIVE_MODULES, readStamp, stampFile,
} from './desktop-lib';

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

/**
 * better-sqlite3 (V8 ABI) is copied to out/native-build, rebuilt there for Electron by @electron/rebuild (a prebuilt
 * binary when one is published, else a compile against Electron's headers), and moved to out/node_modules, which
 * Electron's main bundle (out/main) resolves before the project's node_modules. The Node build is never touched.
 */
async function ensureNativeModules(electronVersion: string): Promise<void> {
  const todo = modulesToRebuild(ROOT, electronVersion, readStamp(ROOT));
  const skipped = NATIVE_MODULES.filter((m) => m.nodeApi).map((m) => m.name);
  if (!todo.length) return;
  say(`building ${todo.join(', ')} for Electron ${electronVersion} (${skipped.join(', ')} use Node-API and load as they are)...`);
  const staging = join(ROOT, 'out', 'native-build');
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(join(staging, 'node_modules'), { recursive: true });
  const versions = Object.fromEntries(NATIVE_MODULES.filter((m) => !m.nodeApi).map((m) => [m.name, moduleVersion(ROOT, m.name)]));
  writeFileSync(join(staging, 'package.json'), JSON.stringify({ name: 'weft-electron-native', private: true, dependencies: versions }, null, 2));
  for (const name of todo) {
    const from = join(ROOT, 'node_modules', name);
    cpSync(from, join(staging, 'node_modules', name), { recursive: true, filter: copyFilter(from) });
  }
  try {
    const { rebuild } = await import('@electron/rebuild');
    await rebuild({ buildPath: staging, electronVersion, onlyModules: todo, force: true });
  } catch (e) {
    fail(
      `could not build ${todo.join(', ')} for Electron ${electronVersion}: ${(e as Error).message}\n` +
        'It needs network access (Electron headers or a prebuilt binary) and a C/C++ toolchain (python3, make, g++).',
    );
  }
  const target = electronModulesDir(ROOT);
  mkdirSync(target, { recursive: true });
  for (const name of todo) {
    rmSync(join(target, name), { recursive: true, force: true });
    renameSync(join(staging, 'node_modules', name), join(target, name));
  }
  rmSync(staging, { recursive: true, force: true });
  writeFileSync(stampFile(ROOT), JSON.stringify({ electron: electronVersion, modules: versions }, null, 2));
}

async function main(): Promise<void> {
  await buildAll();
  const exe = ensureElectronBinary();
  await ensureNativeModules(electronBinary(ROOT).version);
  const display = displayProblem(process.platform, process.env);
  if (display) say(`warning: ${display}`);
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  const child = spawn(exe, [ROOT, ...process.argv.slice(2)], { stdio: 'inherit', env, cwd: ROOT });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

main().catch((e) => fail((e as Error).stack ?? String(e)));
