// Signing in to the console in Chromium against the real CLI (`npm start` runs bin/weft.mjs): the one-time link
// it prints, the link refused the second time, the username/password form, signing out.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, isRendererStale } from '../../scripts/build-renderer';
import { tempDir } from '../support/app';
import { launchChromium, type LaunchedBrowser } from '../support/browser';
import { startWeftProcess } from '../support/weftProcess';
import { screenshotBothWidths } from '../support/consoleBrowser';

const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = join(ROOT, 'test-results', 'screenshots');
const PASSWORD = 'console-e2e-password-1';

/** Starts `weft` like `npm start` does and reads its banner. */
async function startCli(dataDir: string): Promise<{ proc: ChildProcess; banner: string }> {
  return startWeftProcess(dataDir, ['--api-address', '127.0.0.1:0', '--console-address', '127.0.0.1:0'], {
    WEFT_ADMIN_USERNAME: 'admin',
    WEFT_ADMIN_PASSWORD: PASSWORD,
  });
}

describe('console sign-in (real CLI, Chromium)', () => {
  const dataDir = tempDir('weft-console-cli-');
  let cli: { proc: ChildProcess; banner: string };
  let browser: LaunchedBrowser;
  let page: Page;
  let consoleUrl: string;
  let link: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    if (isRendererStale()) await buildRenderer(); // npm test builds it first (pretest); this covers running the file alone
    cli = await startCli(dataDir);
    consoleUrl = /console:\s+(http:\/\/\S+)/.exec(cli.banner)![1]!;
    link = /console login:\s+(http:\/\/\S+)/.exec(cli.banner)![1]!;
    browser = await launchChromium();
    page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  afterAll(async () => {
    await browser?.close();
    if (cli && cli.proc.exitCode === null) {
      const exited = new Promise((r) => cli.proc.once('exit', r));
      cli.proc.kill('SIGINT');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('npm start prints the console URL and a one-time login link on loopback', () => {
    expect(consoleUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(link.startsWith(`${consoleUrl}/login/link?token=`)).toBe(true);
    expect(cli.banner).toMatch(/one-time link, valid 15m/);
  });

  it('the link opens the console signed in as the admin', async () => {
    await page.goto(link);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    await expect.poll(() => page.getByRole('banner').textContent()).toContain('Default Admin (admin)');
    await page.getByRole('table', { name: 'Controller certificates' }).getByText('Root CA').waitFor();
    await screenshotBothWidths(page, 'dashboard');
    const cookies = await browser.context.cookies(consoleUrl);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
  });

  it('signing out ends the session; the used link is refused and the form signs in', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Weft' }).waitFor();
    await page.getByText('You have signed out.').waitFor();

    const other = await browser.context.newPage();
    await other.goto(link);
    await other.getByText('That login link has expired or was already used').waitFor();
    await other.screenshot({ path: join(SHOTS, 'console-login.png') });
    await other.getByLabel('Username').fill('admin');
    await other.getByLabel('Password').fill('not-the-password');
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
    await other.getByLabel('Password').fill(PASSWORD);
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await other.close();
  });
});
