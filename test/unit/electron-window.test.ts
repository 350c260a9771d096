// What the Electron entry decides, tested under Node: the hardened window, where navigation may go, how it starts.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { desktopStartOptions, navigationDecision, preloadPath, windowOptions } from '../../src/main/console/desktop';

describe('the console window', () => {
  it('isolates and sandboxes the page, with no Node integration anywhere', () => {
    const w = windowOptions('/app/out/preload/index.cjs').webPreferences!;
    expect(w).toMatchObject({
      preload: '/app/out/preload/index.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
    });
    expect(windowOptions('x')).toMatchObject({ width: 1280, height: 800, show: false });
  });

  it('keeps navigation on the console origin and sends web links to the system browser', () => {
    const origin = 'http://127.0.0.1:1281';
    expect(navigationDecision('http://127.0.0.1:1281/#/identities', origin)).toBe('allow');
    expect(navigationDecision('http://127.0.0.1:1281/login/link?token=x', origin)).toBe('allow');
    expect(navigationDecision('https://openziti.io/docs', origin)).toBe('external');
    expect(navigationDecision('http://127.0.0.1:1280/edge/management/v1', origin)).toBe('external');
    expect(navigationDecision('http://localhost:1281/', origin)).toBe('external');
    expect(navigationDecision('mailto:ops@example.com', origin)).toBe('external');
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,<h1>x', 'ms-settings:', 'not a url', 'chrome://settings']) {
      expect(navigationDecision(url, origin)).toBe('deny');
    }
  });

  it('starts like the CLI: --data-dir/--config or env, else .weft in development and userData when packaged', () => {
    const base = { argv: ['electron', '.'], env: {}, isPackaged: false, userDataDir: '/home/u/.config/Weft', mainDir: '/app/out/main' };
    expect(desktopStartOptions(base)).toMatchObject({ dataDir: undefined, configFile: undefined, consoleRendererDir: join('/app/out/renderer') });
    expect(desktopStartOptions({ ...base, isPackaged: true }).dataDir).toBe(join('/home/u/.config/Weft', 'data'));
    expect(desktopStartOptions({ ...base, argv: ['electron', '.', '--data-dir', '/d', '--config=/c.yml'] })).toMatchObject({
      dataDir: '/d',
      configFile: '/c.yml',
    });
    expect(desktopStartOptions({ ...base, env: { WEFT_DATA_DIR: '/e', WEFT_CONFIG: '/e.yml' } })).toMatchObject({
      dataDir: '/e',
      configFile: '/e.yml',
    });
    expect(desktopStartOptions({ ...base, argv: ['electron', '.', '--data-dir'] }).dataDir).toBeUndefined();
    expect(preloadPath('/app/out/main')).toBe(join('/app/out/preload/index.cjs'));
  });
});
