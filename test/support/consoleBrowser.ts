import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { buildRenderer, isRendererStale } from '../../scripts/build-renderer';
import type { StartOptions } from '../../src/main/app';
import { startTestApp, type TestApp } from './app';
import { launchChromium, type LaunchedBrowser } from './browser';

export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots');

export interface ConsoleSession {
  app: TestApp;
  browser: LaunchedBrowser;
  /** a 1280×800 page signed in to the console through the one-time login link */
  page: Page;
}

/**
 * For a whole test file: the real app with its console, Chromium, and a page signed in as the admin; closed
 * afterwards. The renderer is built first when stale (npm test does it in pretest; this covers running a file alone).
 */
export function useConsoleSession(use: (s: ConsoleSession) => void | Promise<void>, opts: StartOptions = {}): void {
  let session: ConsoleSession | undefined;
  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    if (isRendererStale()) await buildRenderer();
    const app = await startTestApp({ consoleAddress: '127.0.0.1:0', ...opts });
    const browser = await launchChromium();
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(app.console!.createLoginLink());
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    session = { app, browser, page };
    await use(session);
  });
  afterAll(async () => {
    await session?.browser.close();
    await session?.app.stop();
  });
}

/**
 * A full-page screenshot at 1280×800 and one at 390 px wide (checking nothing overflows sideways there), as
 * `console-<name>.png` and `console-<name>-390.png`; the page is back at 1280×800 afterwards.
 */
export async function screenshotBothWidths(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `console-${name}.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 800 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: join(SCREENSHOTS, `console-${name}-390.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Form controls in the page's main area without an accessible name (labels, aria-label or aria-labelledby). */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page
    .locator('main')
    .evaluate((main) =>
      [...main.querySelectorAll('input, select, textarea')]
        .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
        .map((el) => el.outerHTML.slice(0, 120)),
    );
}
