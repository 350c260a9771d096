// Bulk work and "why" in the console, in Chromium: identities imported from CSV (the preview reports the bad rows
// and keeps nothing, the import creates the good ones, their enrollment JWTs download as one ZIP); multi-select on
// lists (add a role attribute, disable, delete — failures named); and policy advice naming the policy that is
// missing the identity, with the smallest change applied from the page. Screenshots at 1280×800 and 390 px.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';

describe('console: CSV import, bulk actions, policy advice fixes (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);
  const shot = (name: string) => screenshotBothWidths(page, name);
  const byName = async (path: string, name: string) => (await admin.get(`${path}?filter=${encodeURIComponent(`name = "${name}"`)}`)).body.data[0];
  const names = async (contains: string): Promise<string[]> =>
    ((await admin.get(`/identities?limit=500&filter=${encodeURIComponent(`name contains "${contains}"`)}`)).body.data as any[])
      .map((e) => e.name)
      .sort();

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    admin = await app.adminClient();
  });

  it('imports identities from CSV: preview with a bad row, import of the good ones, their JWTs as one ZIP', async () => {
    await go('/identities');
    await page.getByRole('main').getByRole('link', { name: 'Import from CSV' }).click();
    await page.getByRole('heading', { name: 'Import identities' }).waitFor();
    const csv = [
      'name,type,attributes,enrollment',
      'imp-alice,User,staff;eu,ott',
      'imp-robot,Robot,,ott',
      'imp-bob,Device,staff,updb',
      'imp-carol,,kiosk lobby,ott',
    ].join('\n');
    await page.getByLabel('Or paste the CSV').fill(csv);
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('table', { name: 'Import preview' });
    await preview.waitFor();
    await page.getByText('3 rows will be created; 1 has an error and will be skipped. Nothing has been created yet.').waitFor();
    await preview
      .getByRole('row', { name: /imp-robot/ })
      .getByText('type: must be one of User, Device, Service, Router, Default')
      .waitFor();
    expect(await names('imp-')).toEqual([]);
    await shot('import-preview');
    await page.getByRole('button', { name: 'Import 3 identities' }).click();
    const result = page.getByRole('table', { name: 'Import result' });
    await result.waitFor();
    await page.getByText('Created 3 identities; 1 row not imported.').waitFor();
    await result.getByRole('link', { name: 'imp-alice' }).waitFor();
    expect(await names('imp-')).toEqual(['imp-alice', 'imp-bob', 'imp-carol']);
    expect(await byName('/identities', 'imp-carol')).toMatchObject({ typeId: 'User', roleAttributes: ['kiosk', 'lobby'] });

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download their enrollment JWTs (.zip)' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^weft-enrollments-\d{4}-\d\d-\d\d\.zip$/);
    const dir = mkdtempSync(join(tmpdir(), 'weft-e2e-zip-'));
    const file = join(dir, 'jwts.zip');
    await download.saveAs(file);
    execFileSync('unzip', ['-q', file, '-d', join(dir, 'x')]);
    expect(readFileSync(join(dir, 'x', 'imp-alice.jwt'), 'utf8')).toBe((await byName('/identities', 'imp-alice')).enrollment.ott.jwt);
    expect(readFileSync(join(dir, 'x', 'imp-bob.jwt'), 'utf8')).toBe((await byName('/identities', 'imp-bob')).enrollment.updb.jwt);
    expect(readFileSync(join(dir, 'x', 'enrollments.csv'), 'utf8').split('\r\n')[0]).toBe('identity,method,expiresAt,file');
    await page.getByText(/3 enrollment JWTs\./).waitFor();
    await shot('import-done');
  });

  it('the filter box finds role attributes: #attr, several of them, and plain words', async () => {
    await go('/identities');
    const table = page.getByRole('table', { name: 'Identities' });
    const rows = async (text: string) => {
      await page.getByLabel('Filter').fill(text);
      await page.getByLabel('Filter').press('Enter');
      return table;
    };
    const shown = async () =>
      (await table.locator('tbody tr input[type=checkbox]').evaluateAll((boxes) => boxes.map((b) => b.getAttribute('aria-label') ?? ''))).map(
        (label) => label.replace(/^Select /, ''),
      );
    await rows('#staff');
    await expect.poll(async () => (await shown()).sort(), { timeout: 10_000 }).toEqual(['imp-alice', 'imp-bob']);
    await rows('#staff #eu');
    await expect.poll(shown, { timeout: 10_000 }).toEqual(['imp-alice']);
    await rows('lobby'); // a plain word: names, and the role attribute of that name
    await expect.poll(shown, { timeout: 10_000 }).toEqual(['imp-carol']);
    await page.getByText('#attr finds a role attribute').waitFor();
    await rows('');
  });

  it('acts on several selected rows: adds an attribute, disables, deletes (a failure is named)', async () => {
    await go('/identities');
    const table = page.getByRole('table', { name: 'Identities' });
    await page.getByLabel('Filter').fill('imp-');
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 10_000 }).toBe(3);
    await table.getByRole('checkbox', { name: 'Select imp-alice' }).check();
    await table.getByRole('checkbox', { name: 'Select imp-bob' }).check();
    const bar = page.getByRole('region', { name: 'Selected identities' });
    await bar.getByText('2 selected').waitFor();
    await bar.getByLabel('Attribute', { exact: true }).fill('imported');
    await bar.getByRole('button', { name: 'Add to selected' }).click();
    await page.getByText('Added #imported to 2 of 2 identities.').waitFor();
    expect((await byName('/identities', 'imp-alice')).roleAttributes).toEqual(['staff', 'eu', 'imported']);
    expect((await byName('/identities', 'imp-bob')).roleAttributes).toEqual(['staff', 'imported']);
    await bar.getByRole('button', { name: 'Disable selected' }).click();
    await page.getByText('Disabled 2 of 2 identities.').waitFor();
    expect((await byName('/identities', 'imp-bob')).disabled).toBe(true);
    await bar.getByRole('button', { name: 'Enable selected' }).click();
    await page.getByText('Enabled 2 of 2 identities.').waitFor();
    await shot('bulk-identities');
    // select the whole page and delete; the default admin (brought in by a second filter) cannot go
    await page.getByLabel('Filter').fill('');
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 10_000 }).toBeGreaterThan(3);
    await table.getByRole('checkbox', { name: 'Select Default Admin' }).check();
    await page.getByLabel('Filter').fill('imp-');
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 10_000 }).toBe(3);
    await table.getByRole('checkbox', { name: 'Select all rows on this page' }).check();
    await bar.getByText('4 selected').waitFor();
    await bar.getByRole('button', { name: 'Delete selected' }).click();
    await bar.getByRole('button', { name: 'Delete 4 identities' }).click();
    await page.getByText('Deleted 3 of 4 identities.').waitFor();
    await page.getByText('Default Admin: the default admin identity cannot be deleted').waitFor();
    expect(await names('imp-')).toEqual([]);
  });

  it('policy advice names the policy that is missing the identity, and applies the smallest change', async () => {
    const eve = await admin.create('/identities', { name: 'eve', type: 'User', isAdmin: false, roleAttributes: ['contractors'] });
    for (const n of ['c1', 'c2']) await admin.create('/identities', { name: n, type: 'User', isAdmin: false, roleAttributes: ['contractors'] });
    const wiki = await admin.create('/services', { name: 'wiki2', encryptionRequired: true, roleAttributes: ['wiki'] });
    await admin.create('/service-policies', {
      name: 'wiki-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#admins'],
      serviceRoles: ['#wiki'],
    });
    await admin.create('/edge-router-policies', { name: 'all-routers', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
    await admin.create('/service-edge-router-policies', {
      name: 'all-services',
      semantic: 'AnyOf',
      serviceRoles: ['#all'],
      edgeRouterRoles: ['#all'],
    });
    await go(`/policy-advice/${eve}/${wiki}`);
    const why = page.getByTestId('access-explanation');
    await why.getByRole('heading', { name: 'Why eve cannot dial wiki2' }).waitFor();
    await why.getByText('Missing: No Dial service policy selects both the identity and the service.').waitFor();
    const fixes = why.getByRole('region', { name: 'How to grant access' });
    const first = fixes.getByRole('listitem').first();
    await expect.poll(() => first.textContent(), { timeout: 10_000 }).toMatch(/^Add @eve to the identity roles of wiki-dial\./);
    await first.getByRole('link', { name: 'wiki-dial' }).waitFor();
    await fixes.getByText('(also grants up to 2 other identities)').waitFor(); // adding #contractors would
    await shot('advice-why');
    // applying asks first, naming who would newly reach the service
    await first.getByRole('button', { name: /^Apply: Add @eve/ }).click();
    await first.getByTestId('fix-preview').getByText('1 identity would newly dial wiki2:').waitFor();
    await first.getByTestId('fix-preview').getByRole('link', { name: 'eve' }).waitFor();
    await first.getByRole('button', { name: 'Confirm' }).click();
    await why.getByRole('heading', { name: 'Why eve can dial wiki2' }).waitFor();
    await why.getByTestId('chain-dial').getByRole('link', { name: 'wiki-dial' }).waitFor();
    expect((await byName('/service-policies', 'wiki-dial')).identityRoles).toEqual(['#admins', `@${eve}`]);
    expect((await admin.get(`/identities/${eve}/policy-advice/${wiki}`)).body.data.isDialAllowed).toBe(true);
    await admin.close();
  });
});
