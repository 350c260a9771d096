// The console's audit log page in Chromium: entries of REST writes, logins and the console's own writes, filtered
// (ZitiQL) and sorted on the server, and an entry's detail view. Screenshots at 1280×800 and 390 px.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';

describe('console: audit log (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  let serviceId = '';
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);

  useConsoleSession(
    async (s) => {
      ({ app, page } = s);
      admin = await app.adminClient();
      serviceId = await admin.create('/services', { name: 'audited-service', encryptionRequired: true });
      expect((await app.client().post('/authenticate?method=password', { username: 'intruder', password: 'guess-guess' })).status).toBe(401);
      await admin.close();
    },
    { routerListener: 'off' },
  );

  it('lists entries newest first; a ZitiQL filter and a column sort run on the server; an entry opens', async () => {
    await go('/audit-log');
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const table = page.getByRole('table', { name: 'Audit log' });
    // the REST create, the REST logins (the admin's, the intruder's) and the console's link login
    await table.locator('tbody tr').filter({ hasText: serviceId }).waitFor();
    expect(await table.locator('tbody tr').count()).toBeGreaterThanOrEqual(4);
    await expect.poll(() => table.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('descending');
    expect(await table.locator('tbody tr').first().textContent()).toContain('intruder');
    // sorted by the server: oldest first is the console's sign-in through the one-time link
    await table.getByRole('button', { name: 'Time' }).click();
    await expect.poll(() => table.locator('tbody tr').first().textContent()).toMatch(/login.*Default Admin.*console/);
    await table.getByRole('button', { name: 'Time' }).click();
    await expect.poll(() => table.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('descending');

    await page.getByLabel('Filter').fill('action = "login" and outcome = "failure"');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    const row = table.locator('tbody tr').first();
    expect(await row.textContent()).toContain('intruder');
    expect(await row.textContent()).toContain('failure (INVALID_AUTH)');
    await screenshotBothWidths(page, 'audit-log');

    await page.getByLabel('Filter').fill('entityType = "services"');
    await table.locator('tbody tr').filter({ hasText: serviceId }).waitFor();
    expect(await table.locator('tbody tr').count()).toBe(1);
    expect(await table.locator('tbody tr').first().textContent()).toContain('create');
    await table.locator('tbody tr').first().getByRole('link').first().click();
    await page.getByText('POST /services').waitFor();
    expect(await page.locator('main').textContent()).toContain(serviceId);

    // the console's own sign-in (the one-time link) is there too
    await go('/audit-log');
    await page.getByLabel('Filter').fill('source = "console"');
    await expect.poll(() => table.locator('tbody tr').allTextContents()).toEqual([expect.stringMatching(/login.*Default Admin.*console/)]);
  });
});
