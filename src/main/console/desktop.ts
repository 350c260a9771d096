import type { BrowserWindowConstructorOptions } from 'electron';
import { join } from 'node:path';
import type { StartOptions } from '../app';

/**
 * What the Electron entry (src/main/electron.ts) decides, as plain functions tested under Node: the window's
 * hardened options, where navigation may go, and how the desktop app starts the controller.
 */

export const WINDOW_TITLE = 'Weft';

/** The console window: no Node in the page, isolated and sandboxed, nothing but the console itself. */
export function windowOptions(preloadPath: string): BrowserWindowConstructorOptions {
  return {
    title: WINDOW_TITLE,
    width: 1280,
    height: 800,
    minWidth: 360,
    minHeight: 480,
    show: false,
    autoHideMenuBar: true,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
    },
  };
}

export type NavigationDecision = 'allow' | 'external' | 'deny';

/**
 * Navigation inside the window stays on the console's origin; web and mail links open in the system browser;
 * anything else (file:, javascript:, data:, custom schemes) goes nowhere.
 */
export function navigationDecision(url: string, consoleOrigin: string): NavigationDecision {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return 'deny';
  }
  if (target.origin === consoleOrigin) return 'allow';
  return ['https:', 'http:', 'mailto:'].includes(target.protocol) ? 'external' : 'deny';
}

export interface DesktopEnvironment {
  argv: string[];
  env: NodeJS.ProcessEnv;
  isPackaged: boolean;
  /** app.getPath('userData') */
  userDataDir: string;
  /** where electron-vite put the main bundle (out/main); the renderer is beside it */
  mainDir: string;
}

/** `--data-dir`/`--config` (or WEFT_DATA_DIR/WEFT_CONFIG) like the CLI; else `.weft` in development, userData when packaged. */
export function desktopStartOptions(e: DesktopEnvironment): StartOptions {
  const arg = (name: string) => {
    const i = e.argv.indexOf(`--${name}`);
    if (i >= 0 && e.argv[i + 1] && !e.argv[i + 1]!.startsWith('--')) return e.argv[i + 1];
    return e.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  };
  return {
    dataDir: arg('data-dir') ?? e.env.WEFT_DATA_DIR ?? (e.isPackaged ? join(e.userDataDir, 'data') : undefined),
    configFile: arg('config') ?? e.env.WEFT_CONFIG ?? undefined,
    consoleRendererDir: join(e.mainDir, '..', 'renderer'),
    env: e.env,
  };
}

export const preloadPath = (mainDir: string) => join(mainDir, '..', 'preload', 'index.cjs');
