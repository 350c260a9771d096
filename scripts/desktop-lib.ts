// The pieces of `npm run desktop` that decide things (tested under Node in test/unit/electron-desktop.test.ts).
import { existsSync, readFileSync } from 'node:fs';
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
  if (!existsSync(pathTxt)) return { present: false, version, reason: `the Electron ${version} binary was never downloaded (node_modules/electron/dist is missing)` };
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
  return env.DISPLAY || env.WAYLAND_DISPLAY ? undefined : 'no display: neither DISPLAY nor WAYLAND_DISPLAY is set (run it in a graphical session, or use npm start)';
}
