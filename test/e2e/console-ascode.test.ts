// The console's Export and import page in Chromium: download the network (YAML), change the file, preview the
// dry-run plan (nothing written), import it, import it again (nothing to do); a file with a reference to nothing is
// refused with the entry named and nothing written. Screenshots at 1280×800 and 390 px.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';

describe('console: export and import (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  const dir = mkdtempSync(join(tmpdir(), 'weft-e2e-ascode-'));
  const services = async (): Promise<string[]> =>
    ((await admin.get(`/services?limit=500&filter=${encodeURIComponent('name contains "asc-"')}`)).body.data as Array<{ name: string }>)
      .map((s) => s.name)
      .sort();

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    admin = await app.adminClient();
  });

  it('downloads the network, previews a changed file, imports it once', async () => {
    await admin.create('/services', { name: 'asc-web', roleAttributes: ['web'], encryptionRequired: true });
    await page.goto(`${app.urls.console}/#/ascode`);
    await page.getByRole('heading', { name: 'Export and import' }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download network (YAML)' }).click()]);
    expect(download.suggestedFilename()).toBe('network.yaml');
    const file = join(dir, 'network.yaml');
    await download.saveAs(file);
    const doc = parseYaml(readFileSync(file, 'utf8'));
    expect(doc.services.find((s: any) => s.name === 'asc-web')).toMatchObject({ roleAttributes: ['web'], encryptionRequired: true });

    doc.services.find((s: any) => s.name === 'asc-web').roleAttributes = ['web', 'public'];
    doc.services.push({ name: 'asc-new', roleAttributes: ['new'], encryptionRequired: true });
    writeFileSync(file, stringifyYaml(doc));
    await page.getByLabel(/File of weft export or ziti ops export/).setInputFiles(file);
    await page.getByRole('button', { name: 'Preview changes' }).click();
    const plan = page.getByRole('table', { name: 'Planned changes' });
    await plan.waitFor();
    await page.getByText(/^Would create 1, update 1, unchanged \d+, skipped 0\.$/).waitFor();
    expect(await plan.locator('tbody tr').allInnerTexts()).toEqual(['update\tservices\tasc-web\troleAttributes', 'create\tservices\tasc-new\t']);
    expect(await services()).toEqual(['asc-web']); // the preview wrote nothing
    await screenshotBothWidths(page, 'ascode-preview');

    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText(/^Imported: created 1, updated 1, unchanged \d+, skipped 0\.$/).waitFor();
    expect(await services()).toEqual(['asc-new', 'asc-web']);
    const web = (await admin.get(`/services?filter=${encodeURIComponent('name = "asc-web"')}`)).body.data[0];
    expect(web.roleAttributes).toEqual(['web', 'public']);

    // the same file again: nothing to do
    await page.getByRole('button', { name: 'Preview changes' }).click();
    await page.getByText(/^Would create 0, update 0, unchanged \d+, skipped 0\.$/).waitFor();
  });

  it('a file naming something that does not exist is refused with the entry named, and nothing is written', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        services: [{ name: 'asc-bad', encryptionRequired: true }],
        servicePolicies: [{ name: 'asc-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['@nobody'], serviceRoles: ['@asc-bad'] }],
      }),
    );
    await page.getByLabel(/File of weft export or ziti ops export/).setInputFiles(file);
    await page.getByRole('button', { name: 'Preview changes' }).click();
    await page.getByText('bad.json cannot be imported (nothing was written):').waitFor();
    await page.getByText(/servicePolicies\[0\] "asc-dial"\.identityRoles\[0\]/).waitFor();
    await page.getByText(/no identity named "nobody"/).waitFor();
    expect(await page.getByRole('button', { name: 'Import', exact: true }).isDisabled()).toBe(true);
    expect(await services()).toEqual(['asc-new', 'asc-web']);
    await screenshotBothWidths(page, 'ascode-refused');
  });
});
