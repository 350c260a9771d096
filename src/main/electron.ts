// The desktop app: the controller, public frontend and console run in Electron's main process; one window shows
// the console. Kept thin — the decisions live in console/desktop.ts and are tested under Node.
import { app, BrowserWindow, dialog, session, shell, type WebContents } from 'electron';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp, type App } from './app';
import { desktopStartOptions, navigationDecision, preloadPath, windowOptions } from './console/desktop';

const mainDir = dirname(fileURLToPath(import.meta.url));

function lockDown(contents: WebContents, consoleOrigin: string): void {
  const guard = (event: { preventDefault(): void }, url: string) => {
    const decision = navigationDecision(url, consoleOrigin);
    if (decision === 'allow') return;
    event.preventDefault();
    if (decision === 'external') void shell.openExternal(url);
  };
  contents.on('will-navigate', guard);
  contents.on('will-redirect', guard);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (navigationDecision(url, consoleOrigin) === 'external') void shell.openExternal(url);
    return { action: 'deny' };
  });
}

async function main(): Promise<void> {
  // one controller per data directory: a second launch focuses the first window
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  await app.whenReady();
  const weft: App = await startApp(
    desktopStartOptions({ argv: process.argv, env: process.env, isPackaged: app.isPackaged, userDataDir: app.getPath('userData'), mainDir }),
  );
  if (!weft.console) throw new Error('the console is disabled in the configuration (console.enabled: false); the desktop app needs it');
  const consoleOrigin = new URL(weft.console.url).origin;
  if (weft.admin.generatedPassword) process.stdout.write(`Weft admin ${weft.admin.username}, generated password: ${weft.admin.generatedPassword}\n`);

  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  app.on('web-contents-created', (_event, contents) => lockDown(contents, consoleOrigin));

  const win = new BrowserWindow(windowOptions(preloadPath(mainDir)));
  win.once('ready-to-show', () => win.show());
  app.on('second-instance', () => {
    if (win.isMinimized()) win.restore();
    win.focus();
  });

  let closing = false;
  app.on('window-all-closed', () => app.quit());
  app.on('before-quit', (event) => {
    if (closing) return;
    event.preventDefault();
    closing = true;
    void weft.close().finally(() => app.exit(0));
  });
  // the window signs in with a one-time link, like the link `npm start` prints
  await win.loadURL(weft.console.createLoginLink());
}

main().catch((e: Error) => {
  dialog.showErrorBox('Weft could not start', e.message);
  app.exit(1);
});
