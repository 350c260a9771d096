// Every console page in Chromium — the pages the navigation lists (the console's own and those generated for the
// other types) and the create forms their lists link to — at 1280×800 and at 390 px: each renders its heading,
// nothing overflows sideways, and the browser logs no error. Then the theme toggle: light, dark or the system's,
// remembered across reloads.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { SCREENSHOTS, screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';

describe('console: every page at both widths, and the theme (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  const errors: string[] = [];
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    page.on('console', (m) => void (m.type() === 'error' && errors.push(`${page.url()}: ${m.text()}`)));
    page.on('pageerror', (e) => void errors.push(`${page.url()}: ${e.message}`));
  });

  /** Waits until a page shows its heading and has nothing loading. */
  async function settled() {
    await page.locator('main h1').first().waitFor();
    await page.locator('main .spinner').first().waitFor({ state: 'detached' });
  }

  /** Every page of the navigation (the console's own and the generated ones), then the create forms they link to. */
  async function allPages(): Promise<string[]> {
    await go('/');
    await settled();
    const nav = (await page.locator('#nav a').evaluateAll((links) => links.map((a) => a.getAttribute('href')!))).map((h) => h.replace(/^#/, ''));
    const forms = new Set<string>();
    for (const path of nav) {
      await go(path);
      await settled();
      for (const link of await page.locator('main a[href$="/new"]').evaluateAll((l) => l.map((a) => a.getAttribute('href')!))) {
        forms.add(link.replace(/^#/, ''));
      }
    }
    return [...new Set([...nav, ...forms])];
  }

  it('every page of the navigation, and every create form a list links to, renders at 1280×800 and 390 px', { timeout: 180_000 }, async () => {
    const paths = await allPages();
    expect(paths.length).toBeGreaterThan(45);
    // one width at a time (a screenshot of the viewport each; full-page shots of every page would take minutes)
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      for (const path of paths) {
        await go(path);
        await settled();
        const name = path.slice(1).replace(/\//g, '-') || 'dashboard';
        await page.screenshot({ path: join(SCREENSHOTS, `console-all-${name}${width === 1280 ? '' : '-390'}.png`) });
        expect({ path, width, scrollWidth: await page.evaluate(() => document.documentElement.scrollWidth) }).toEqual({
          path,
          width,
          scrollWidth: width,
        });
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(errors).toEqual([]);
  });

  it('switches between light, dark and the system theme, and remembers the choice', async () => {
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const theme = page.getByRole('combobox', { name: 'Theme' });
    await page.emulateMedia({ colorScheme: 'light' });
    await go('/identities');
    await settled();
    expect(await theme.inputValue()).toBe('system');
    const light = await background();
    await theme.selectOption('dark');
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const dark = await background();
    expect(dark).not.toBe(light);
    await screenshotBothWidths(page, 'theme-dark');

    await page.reload();
    await settled();
    expect(await theme.inputValue()).toBe('dark');
    expect(await background()).toBe(dark);

    // the system's theme: follows the OS setting again
    await theme.selectOption('system');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBeUndefined();
    expect(await background()).toBe(light);
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await background()).toBe(dark);
    // light chosen while the OS is dark
    await theme.selectOption('light');
    expect(await background()).toBe(light);
    await page.reload();
    await settled();
    expect(await theme.inputValue()).toBe('light');
    expect(await background()).toBe(light);
    await theme.selectOption('system');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(errors).toEqual([]);
  });
});
