// The Electron entry (src/main/electron.ts) in the real Electron: it opens one window on the console URL, signed in,
// with Node kept out of the page and navigation locked to the console origin. Needs the Electron binary (it cannot
// be downloaded everywhere) and a display: without them the test is skipped with the reason printed. Everything
// the entry calls is covered under Node: electron-window.test.ts (its decisions) and the console tests.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { _electron, type ElectronApplication, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayProblem, electronBinary, ensureNativeModules } from '../../scripts/desktop-lib';
import { tempDir } from '../support/app';

const ROOT = join(import.meta.dirname, '..', '..');
const binary = electronBinary(ROOT);
const skipReason = !binary.present ? binary.reason : displayProblem(process.platform, process.env);
if (skipReason) console.log(`[electron-entry] skipped: ${skipReason}`);

describe.skipIf(!!skipReason)('Electron entry', () => {
  let electronApp: ElectronApplication;
  let win: Page;
  const dataDir = tempDir('weft-electron-');

  beforeAll(async () => {
    const { build } = await import('electron-vite');
    await build({ configFile: join(ROOT, 'electron.vite.config.ts'), logLevel: 'warn' });
    await ensureNativeModules(ROOT, binary.version, (line) => console.log(`[electron-entry] ${line}`));
    electronApp = await _electron.launch({
      executablePath: binary.path!,
      args: [ROOT, '--data-dir', dataDir, ...(process.platform === 'linux' ? ['--no-sandbox'] : [])],
      env: { ...process.env, WEFT_ADMIN_PASSWORD: 'electron-admin-1', ELECTRON_RUN_AS_NODE: '' },
      cwd: ROOT,
    });
    win = await electronApp.firstWindow();
    await win.getByRole('heading', { name: 'Dashboard' }).waitFor();
  }, 300_000);

  afterAll(async () => {
    await electronApp?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('opens one window on the console URL, signed in through a one-time link', async () => {
    const urls = await electronApp.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().map((w) => w.webContents.getURL()));
    expect(urls).toHaveLength(1);
    expect(urls[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const csp = await win.evaluate(() => fetch('/').then((r) => r.headers.get('content-security-policy')));
    expect(csp).toContain("default-src 'none'");
    await win.screenshot({ path: join(ROOT, 'test-results', 'screenshots', 'electron-dashboard.png') });
  });

  it('keeps Node out of the page: context isolation, sandbox, no Node integration', async () => {
    const seen = await win.evaluate(() => {
      const w = window as unknown as { require?: unknown; process?: unknown; module?: unknown; weftDesktop?: { sandboxed: boolean } };
      return {
        require: typeof w.require,
        process: typeof w.process,
        module: typeof w.module,
        bridge: w.weftDesktop,
        frozen: Object.isFrozen(w.weftDesktop),
      };
    });
    // contextBridge only works with contextIsolation; `sandboxed` is what the sandboxed preload saw
    expect(seen).toEqual({
      require: 'undefined',
      process: 'undefined',
      module: 'undefined',
      bridge: { platform: process.platform, sandboxed: true },
      frozen: true,
    });
  });

  it('locks navigation and new windows to the console origin; web links go to the system browser', async () => {
    await electronApp.evaluate(({ shell }) => {
      const opened: string[] = [];
      (globalThis as { opened?: string[] }).opened = opened;
      shell.openExternal = async (url: string) => void opened.push(url);
    });
    const before = win.url();
    expect(await win.evaluate(() => window.open('https://example.com/new-window'))).toBeNull();
    await win.evaluate(() => {
      window.location.href = 'https://example.com/navigate';
    });
    await win.evaluate(() => {
      window.location.href = 'file:///etc/passwd';
    });
    await expect
      .poll(() => electronApp.evaluate(() => (globalThis as { opened?: string[] }).opened))
      .toEqual(['https://example.com/new-window', 'https://example.com/navigate']);
    expect(win.url()).toBe(before);
    expect(await electronApp.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(1);
  });
});
