// The pieces of `npm run desktop` (and of the Electron entry test): which Electron binary, which native builds.
// The deciding functions are tested under Node in test/unit/electron-desktop.test.ts.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * Native modules of the main process and what Electron needs of them. better-sqlite3 is built against V8's ABI, so
 * Node's build cannot load in Electron: Electron gets its own build. argon2 uses Node-API, whose ABI is stable
 * across Node and Electron: the same binary loads in both.
 */
export const NATIVE_MODULES = [
  { name: 'better-sqlite3', nodeApi: false },
  { name: 'argon2', nodeApi: true },
] as const;

/** Where Electron's builds live: out/node_modules is searched before the project's node_modules from out/main. */
export const electronModulesDir = (root: string) => join(root, 'out', 'node_modules');
export const stampFile = (root: string) => join(electronModulesDir(root), '.weft-electron-native.json');

export interface ElectronBinary {
  present: boolean;
  version: string;
  /** the executable when present */
  path?: string;
  reason?: string;
}

/** Whether node_modules/electron has its binary (the npm package downloads it in a postinstall script). */
export function electronBinary(root: string): ElectronBinary {
  const dir = join(root, 'node_modules', 'electron');
  const pkgFile = join(dir, 'package.json');
  if (!existsSync(pkgFile)) return { present: false, version: '', reason: 'the electron package is not installed (npm install)' };
  const version = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { version: string }).version;
  const pathTxt = join(dir, 'path.txt');
  if (!existsSync(pathTxt))
    return { present: false, version, reason: `the Electron ${version} binary was never downloaded (node_modules/electron/dist is missing)` };
  const exe = join(dir, 'dist', readFileSync(pathTxt, 'utf8').trim());
  if (!existsSync(exe)) return { present: false, version, reason: `the Electron binary ${exe} is missing` };
  return { present: true, version, path: exe };
}

export interface NativeStamp {
  electron: string;
  modules: Record<string, string>;
}

export function moduleVersion(root: string, name: string): string {
  return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The modules that need an Electron build, given the stamp of the last one (undefined = never built). */
export function modulesToRebuild(root: string, electronVersion: string, stamp: NativeStamp | undefined): string[] {
  return NATIVE_MODULES.filter((m) => !m.nodeApi)
    .map((m) => m.name)
    .filter((name) => {
      const built = existsSync(join(electronModulesDir(root), name, 'package.json'));
      return !built || stamp?.electron !== electronVersion || stamp.modules[name] !== moduleVersion(root, name);
    });
}

export function readStamp(root: string): NativeStamp | undefined {
  try {
    return JSON.parse(readFileSync(stampFile(root), 'utf8')) as NativeStamp;
  } catch {
    return undefined;
  }
}

/** Copy filter for a module's sources: its Node build output stays behind (Electron's replaces it). */
export function copyFilter(moduleDir: string) {
  return (src: string) => {
    const rel = relative(moduleDir, src);
    return !(rel === 'build' || rel.startsWith(`build${sep}`) || rel.split(sep).includes('.git'));
  };
}

/** A display to open a window on (Linux needs X11 or Wayland); undefined when fine. */
export function displayProblem(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string | undefined {
  if (platform !== 'linux') return undefined;
  return env.DISPLAY || env.WAYLAND_DISPLAY
    ? undefined
    : 'no display: neither DISPLAY nor WAYLAND_DISPLAY is set (run it in a graphical session, or use npm start)';
}

/**
 * npm's `nodedir` setting (exported to scripts as npm_config_nodedir) makes node-gyp compile against those Node
 * headers even when asked for Electron: the result would carry Node's ABI. The rebuild must run without it.
 */
export const NODEDIR_VARIABLES = ['npm_config_nodedir', 'NPM_CONFIG_NODEDIR'];

/** The built files of a module (to check each is really Electron's build). */
export const nativeBinaries = (moduleDir: string) => [join(moduleDir, 'build', 'Release', 'better_sqlite3.node')].filter((f) => existsSync(f));

/**
 * Gives Electron its own build of the V8-ABI modules without touching Node's: each is copied to out/native-build,
 * rebuilt there by @electron/rebuild (a prebuilt binary when one is published, else a compile against Electron's
 * headers) and moved to out/node_modules, which Electron's main bundle (out/main) resolves before the project's
 * node_modules. Does nothing when the last build (out/node_modules/.weft-electron-native.json) still fits.
 */
export async function ensureNativeModules(root: string, electronVersion: string, say: (line: string) => void): Promise<void> {
  const todo = modulesToRebuild(root, electronVersion, readStamp(root));
  if (!todo.length) return;
  const nodeApi = NATIVE_MODULES.filter((m) => m.nodeApi).map((m) => m.name);
  say(`building ${todo.join(', ')} for Electron ${electronVersion} (${nodeApi.join(', ')} use Node-API and load as they are)...`);
  const staging = join(root, 'out', 'native-build');
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(join(staging, 'node_modules'), { recursive: true });
  const versions = Object.fromEntries(NATIVE_MODULES.filter((m) => !m.nodeApi).map((m) => [m.name, moduleVersion(root, m.name)]));
  writeFileSync(join(staging, 'package.json'), JSON.stringify({ name: 'weft-electron-native', private: true, dependencies: versions }, null, 2));
  for (const name of todo) {
    const from = join(root, 'node_modules', name);
    cpSync(from, join(staging, 'node_modules', name), { recursive: true, filter: copyFilter(from) });
  }
  for (const v of NODEDIR_VARIABLES) delete process.env[v];
  try {
    const { rebuild } = await import('@electron/rebuild');
    await rebuild({ buildPath: staging, electronVersion, onlyModules: todo, force: true });
  } catch (e) {
    throw new Error(
      `could not build ${todo.join(', ')} for Electron ${electronVersion}: ${(e as Error).message}\n` +
        'It needs network access (Electron headers or a prebuilt binary) and a C/C++ toolchain (python3, make, g++).',
      { cause: e },
    );
  }
  // a binary Node itself can load was built for Node's ABI, not Electron's (node-gyp used other headers)
  for (const name of todo) {
    for (const file of nativeBinaries(join(staging, 'node_modules', name))) {
      const check = spawnSync(process.execPath, ['-e', `process.dlopen({ exports: {} }, ${JSON.stringify(file)})`], { stdio: 'ignore' });
      if (check.status === 0)
        throw new Error(`the rebuild of ${name} produced a build for Node's ABI, not Electron's (is node-gyp configured with other headers?)`);
    }
  }
  const target = electronModulesDir(root);
  mkdirSync(target, { recursive: true });
  for (const name of todo) {
    rmSync(join(target, name), { recursive: true, force: true });
    renameSync(join(staging, 'node_modules', name), join(target, name));
  }
  rmSync(staging, { recursive: true, force: true });
  writeFileSync(stampFile(root), JSON.stringify({ electron: electronVersion, modules: versions }, null, 2));
}
