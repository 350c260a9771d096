// npm run desktop's decisions: is the Electron binary there, which native modules need an Electron build, and
// the packaging hooks that keep Node's builds for npm start / npm test.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyFilter, displayProblem, electronBinary, modulesToRebuild, NATIVE_MODULES, stampFile } from '../../scripts/desktop-lib';
import { tempDir } from '../support/app';

const nativeBackup = createRequire(import.meta.url)('../../scripts/native-backup.cjs') as {
  NODE_ABI_FILES: string[];
  saveNodeBuilds(root: string): boolean;
  restoreNodeBuilds(root: string): boolean;
};

function fakeProject(): string {
  const root = tempDir('weft-desktop-');
  for (const [name, version] of [
    ['electron', '41.7.1'],
    ['better-sqlite3', '12.11.1'],
    ['argon2', '0.45.1'],
  ]) {
    mkdirSync(join(root, 'node_modules', name!), { recursive: true });
    writeFileSync(join(root, 'node_modules', name!, 'package.json'), JSON.stringify({ name, version }));
  }
  return root;
}

describe('npm run desktop', () => {
  it('finds the Electron binary, or says why it is missing', () => {
    const root = fakeProject();
    expect(electronBinary(root)).toMatchObject({ present: false, version: '41.7.1', reason: expect.stringMatching(/never downloaded/) });
    writeFileSync(join(root, 'node_modules', 'electron', 'path.txt'), 'electron');
    expect(electronBinary(root).reason).toMatch(/is missing/);
    mkdirSync(join(root, 'node_modules', 'electron', 'dist'));
    writeFileSync(join(root, 'node_modules', 'electron', 'dist', 'electron'), '');
    expect(electronBinary(root)).toEqual({ present: true, version: '41.7.1', path: join(root, 'node_modules', 'electron', 'dist', 'electron') });
    expect(electronBinary(tempDir()).reason).toMatch(/not installed/);
  });

  it('rebuilds only V8-ABI modules, and only when Electron or the module changed', () => {
    expect(NATIVE_MODULES.find((m) => m.name === 'argon2')!.nodeApi).toBe(true);
    const root = fakeProject();
    expect(modulesToRebuild(root, '41.7.1', undefined)).toEqual(['better-sqlite3']);
    mkdirSync(join(root, 'out', 'node_modules', 'better-sqlite3'), { recursive: true });
    writeFileSync(join(root, 'out', 'node_modules', 'better-sqlite3', 'package.json'), '{}');
    const stamp = { electron: '41.7.1', modules: { 'better-sqlite3': '12.11.1' } };
    writeFileSync(stampFile(root), JSON.stringify(stamp));
    expect(modulesToRebuild(root, '41.7.1', stamp)).toEqual([]);
    expect(modulesToRebuild(root, '42.0.0', stamp)).toEqual(['better-sqlite3']);
    expect(modulesToRebuild(root, '41.7.1', { ...stamp, modules: { 'better-sqlite3': '12.0.0' } })).toEqual(['better-sqlite3']);
  });

  it('copies module sources without their Node build', () => {
    const keep = copyFilter('/p/node_modules/better-sqlite3');
    expect(keep('/p/node_modules/better-sqlite3/src/x.cpp')).toBe(true);
    expect(keep('/p/node_modules/better-sqlite3/lib/index.js')).toBe(true);
    expect(keep('/p/node_modules/better-sqlite3/build')).toBe(false);
    expect(keep('/p/node_modules/better-sqlite3/build/Release/better_sqlite3.node')).toBe(false);
    expect(keep('/p/node_modules/better-sqlite3/deps/build.js')).toBe(true);
  });

  it('needs a display on Linux only', () => {
    expect(displayProblem('linux', {})).toMatch(/no display/);
    expect(displayProblem('linux', { DISPLAY: ':0' })).toBeUndefined();
    expect(displayProblem('linux', { WAYLAND_DISPLAY: 'wayland-0' })).toBeUndefined();
    expect(displayProblem('darwin', {})).toBeUndefined();
  });

  it("packaging hooks keep Node's builds and put them back (once)", () => {
    const root = fakeProject();
    const file = join(root, 'node_modules', nativeBackup.NODE_ABI_FILES[0]!);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, 'node-build');
    expect(nativeBackup.restoreNodeBuilds(root)).toBe(false);
    expect(nativeBackup.saveNodeBuilds(root)).toBe(true);
    writeFileSync(file, 'electron-build'); // what electron-builder's npmRebuild leaves behind
    expect(nativeBackup.saveNodeBuilds(root)).toBe(false); // an interrupted run's backup is not overwritten
    expect(nativeBackup.restoreNodeBuilds(root)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('node-build');
    expect(nativeBackup.restoreNodeBuilds(root)).toBe(false);
  });
});
