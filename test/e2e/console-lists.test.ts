// Console lists in Chromium: filter (`#attr`), sort and page kept in the URL (a reload and Back restore them), the
// whole filtered result exported as CSV and JSON, the identities' online / last seen / OS / SDK columns (last seen
// kept once a session ended), and the CSV import's result kept when the user leaves the page and comes back.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/main/core/csv';
import type { TestApp } from '../support/app';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';
import { createUser } from '../support/users';

describe('console: lists (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  const errors: string[] = [];
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);
  const hash = () => decodeURIComponent(new URL(page.url()).hash);

  useConsoleSession(
    async (s) => {
      ({ app, page } = s);
      page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
      page.on('pageerror', (e) => void errors.push(e.message));
      const admin = await app.adminClient();
      for (let i = 0; i < 30; i++) {
        await admin.create('/identities', {
          name: `dev-${String(i).padStart(2, '0')}`,
          type: 'Device',
          isAdmin: false,
          roleAttributes: [`dept-${i % 3}`],
        });
      }
      await createUser(admin, 'sdk-user', 'sdk-password-1', { roleAttributes: ['dept-2'] });
      const client = app.client();
      const r = await client.post(
        '/authenticate?method=password',
        {
          username: 'sdk-user',
          password: 'sdk-password-1',
          envInfo: { os: 'linux', osRelease: '6.1.0', arch: 'amd64' },
          sdkInfo: { type: 'ziti-sdk-golang', version: 'v1.2.3' },
        },
        { api: 'client' },
      );
      expect(r.status).toBe(200);
      await client.close();
      // a user whose session ended: offline, still with its last seen time
      await createUser(admin, 'gone-user', 'gone-password-1');
      const gone = app.client();
      await gone.login('gone-user', 'gone-password-1', 'client');
      expect((await gone.del('/current-api-session', { api: 'client' })).status).toBe(200);
      await gone.close();
      await admin.close();
    },
    { routerListener: 'off' },
  );

  const table = () => page.getByRole('table', { name: 'Identities' });
  const pager = () => page.getByRole('navigation', { name: 'Identities pages' });

  it('keeps #attr filter, sort and page in the URL; a reload and Back restore them', async () => {
    await go('/identities');
    await page.getByLabel('Filter').fill('#dept-2');
    await expect.poll(hash).toBe('#/identities?filter=#dept-2');
    // dev-02, dev-05, … dev-29 (10) and sdk-user
    await expect.poll(() => pager().textContent()).toContain('1–11 of 11');
    await page.getByRole('combobox', { name: 'Rows per page' }).selectOption('10');
    await table().getByRole('button', { name: 'Name' }).click();
    await expect.poll(hash).toBe('#/identities?filter=#dept-2&sort=name:desc&limit=10');
    await expect.poll(() => table().locator('tbody tr').first().textContent()).toContain('sdk-user');
    await pager().getByRole('button', { name: 'Next' }).click();
    await expect.poll(hash).toBe('#/identities?filter=#dept-2&sort=name:desc&offset=10&limit=10');
    await expect.poll(() => pager().textContent()).toContain('11–11 of 11');
    // the rows follow the pager once the page's query has answered (the previous rows stay up meanwhile)
    await expect.poll(() => table().locator('tbody tr').first().textContent()).toContain('dev-02');

    await page.reload();
    await expect.poll(() => pager().textContent()).toContain('11–11 of 11');
    expect(await page.getByLabel('Filter').inputValue()).toBe('#dept-2');
    expect(await table().locator('th[aria-sort]').getAttribute('aria-sort')).toBe('descending');
    await expect.poll(() => table().locator('tbody tr').first().textContent()).toContain('dev-02');

    await page.goBack();
    await expect.poll(hash).toBe('#/identities?filter=#dept-2&sort=name:desc&limit=10');
    await expect.poll(() => pager().textContent()).toContain('1–10 of 11');
    await page.goBack();
    await page.goBack();
    await expect.poll(hash).toBe('#/identities?filter=#dept-2');
    await expect.poll(() => pager().textContent()).toContain('1–11 of 11');
    await page.goBack();
    await expect.poll(hash).toBe('#/identities');
    await expect.poll(() => page.getByLabel('Filter').inputValue()).toBe('');
    await expect.poll(() => pager().textContent()).toContain('of 33'); // 32 made here and the default admin
  });

  it('exports the whole filtered result, not the page, as CSV and JSON', async () => {
    await go('/identities?filter=%23dept-2&limit=10');
    await expect.poll(() => pager().textContent()).toContain('1–10 of 11');
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect(csv.suggestedFilename()).toMatch(/^identities-.*\.csv$/);
    const [header, ...rows] = parseCsv(readFileSync((await csv.path())!, 'utf8')).map((r) => r.fields);
    const name = header!.indexOf('name');
    expect(rows.map((r) => r[name]).sort()).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `dev-${String(i * 3 + 2).padStart(2, '0')}`),
      'sdk-user',
    ]);
    await page
      .getByRole('status')
      .filter({ hasText: /^Exported identities-.*\.csv: 11 rows\.$/ })
      .waitFor();

    const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
    const listed = JSON.parse(readFileSync((await json.path())!, 'utf8')) as Array<{ name: string; roleAttributes: string[] }>;
    expect(listed).toHaveLength(11);
    expect(listed.every((i) => i.roleAttributes.includes('dept-2'))).toBe(true);
    await screenshotBothWidths(page, 'lists-identities-filtered');
  });

  it('shows online, last seen, OS and SDK of identities from their SDK login', async () => {
    await go('/identities?filter=sdk-user');
    const row = table().locator('tbody tr').filter({ hasText: 'sdk-user' });
    await row.waitFor();
    const cell = (label: string) => row.locator(`td[data-label="${label}"]`).textContent();
    expect(await cell('Online')).toBe('Online');
    expect(await cell('Last seen')).not.toBe('');
    expect(await cell('OS')).toBe('linux 6.1.0 (amd64)');
    expect(await cell('SDK')).toBe('ziti-sdk-golang v1.2.3');
    await go('/identities?filter=dev-01');
    const offline = table().locator('tbody tr').filter({ hasText: 'dev-01' });
    await offline.waitFor();
    expect(await offline.locator('td[data-label="Online"]').textContent()).toBe('Offline');
    expect(await offline.locator('td[data-label="OS"]').textContent()).toBe('');
    expect(await offline.locator('td[data-label="Last seen"]').textContent()).toBe('');
    // its session ended: offline, last seen kept, in the list and on its page
    await go('/identities?filter=gone-user');
    const gone = table().locator('tbody tr').filter({ hasText: 'gone-user' });
    await gone.waitFor();
    expect(await gone.locator('td[data-label="Online"]').textContent()).toBe('Offline');
    const lastSeen = await gone.locator('td[data-label="Last seen"]').textContent();
    expect(lastSeen).not.toBe('');
    await gone.getByRole('link', { name: 'gone-user' }).click();
    await page.getByText(`Offline, last seen ${lastSeen}`).waitFor();
    await screenshotBothWidths(page, 'lists-identities-sdk');
  });

  it('every list keeps its state in the URL the same way (services, generated pages)', async () => {
    const admin = await app.adminClient();
    for (const n of ['web', 'wiki', 'db'])
      await admin.create('/services', { name: n, encryptionRequired: true, roleAttributes: [n === 'db' ? 'data' : 'apps'] });
    await admin.close();
    await go('/services?filter=%23apps&sort=name:desc');
    const services = page.getByRole('table', { name: 'Services' });
    await expect.poll(() => services.locator('tbody tr').count()).toBe(2);
    expect(await services.locator('tbody tr').first().textContent()).toContain('wiki');
    expect(await page.getByLabel('Filter').inputValue()).toBe('#apps');
    // a malformed state in the URL falls back to the defaults
    await go('/services?sort=name;drop&offset=-4&limit=7000');
    await expect.poll(() => services.locator('tbody tr').count()).toBe(3);
    expect(await services.locator('tbody tr').first().textContent()).toContain('db');
    await screenshotBothWidths(page, 'lists-services');
  });

  it("keeps the CSV import's result and its JWT archive button when the user leaves and comes back", async () => {
    await go('/identity-import');
    await page.getByLabel('Or paste the CSV').fill('name,type,attributes,enrollment\nkept-1,Device,kiosk,ott\nkept-2,Device,kiosk,ott');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('button', { name: 'Import 2 identities' }).click();
    await page.getByRole('heading', { name: 'Imported' }).waitFor();
    await go('/identities');
    await table().waitFor();
    await go('/identity-import');
    await page.getByRole('heading', { name: 'Imported' }).waitFor();
    expect(await page.getByTestId('import-row').count()).toBe(2);
    const [zip] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download their enrollment JWTs (.zip)' }).click(),
    ]);
    expect(zip.suggestedFilename()).toMatch(/\.zip$/);
    await page.getByText(/2 enrollment JWTs/).waitFor();
    // a reload of the tab keeps it too
    await page.reload();
    await page.getByRole('heading', { name: 'Imported' }).waitFor();
    await page.getByText(/2 enrollment JWTs/).waitFor();
    await screenshotBothWidths(page, 'lists-import-kept');
    expect(errors).toEqual([]);
  });
});
