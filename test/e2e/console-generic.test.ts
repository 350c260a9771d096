// Pages the console generates from `resources.describe`, in Chromium: the registered types without a page spec of
// their own are listed under "More" (by the server's list of console types) and get a list and detail view with the
// writes the core offers; any type's generated page is at /generic/<resource>, where a config type is created
// through the form generated from its create schema (a server error shown at its field), edited through the one
// generated from its update schema, and deleted. Screenshots at 1280×800 and 390 px.
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { CONSOLE_RESOURCES } from '../../src/main/console/registry';
import { PAGES } from '../../src/renderer/pages/registry';
import type { TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, useConsoleSession, unlabelledControls } from '../support/consoleBrowser';

describe('console: generated pages for types without a page spec (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);
  const shot = (name: string) => screenshotBothWidths(page, name);
  const button = (name: string) => page.getByRole('button', { name, exact: true });
  /** The control a label names (required fields show " *" after the label). */
  const byLabel = (label: string, scope: Pick<Page, 'getByLabel'> = page) =>
    scope.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\*)?$`));
  /** The error shown at the field a label names. */
  const fieldError = (label: string, scope: Pick<Page, 'locator'>) =>
    scope
      .locator('.field')
      .filter({ has: byLabel(label) })
      .locator('.field-error');
  const settled = async () => {
    await page.locator('main h1').waitFor();
    await page.locator('main .spinner').first().waitFor({ state: 'detached' });
  };

  /** The console types the renderer has no page spec of. */
  const withSpec = new Set<string>(PAGES.flatMap((p) => (p.spec ? [p.spec.resource] : [])));
  const unspecified = Object.keys(CONSOLE_RESOURCES).filter((n) => !withSpec.has(n));

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    admin = await app.adminClient();
  });

  afterAll(async () => {
    await admin?.close();
  });

  it('lists the types without a page spec under "More" and gives each a page with the writes the core offers', async () => {
    await go('/');
    await settled();
    const nav = page.getByRole('navigation', { name: 'Console' });
    const more = nav.locator('.nav-group').filter({ has: page.getByRole('heading', { name: 'More', exact: true }) });
    if (!unspecified.length) {
      expect(await more.count()).toBe(0);
      return;
    }
    await more.waitFor();
    expect(await more.getByRole('link').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).toEqual(unspecified.map((n) => `#/${n}`));

    for (const resource of unspecified) {
      await more.locator(`a[href="#/${resource}"]`).click();
      await expect.poll(() => page.evaluate(() => location.hash)).toBe(`#/${resource}`);
      await settled();
      const title = await page.locator('main h1').innerText();
      const table = page.getByRole('table', { name: title });
      // a query refused under a loaded machine shows its error with Retry: retried as a user would, reported if it stays
      await expect
        .poll(
          async () => {
            if (await table.isVisible()) return 'table';
            const alert = page.locator('main .error-box');
            if (await alert.isVisible()) {
              const text = await alert.innerText();
              await alert.getByRole('button', { name: 'Retry' }).click();
              return text;
            }
            return 'loading';
          },
          { timeout: 60_000, interval: 500, message: resource },
        )
        .toBe('table');
      // the first column is the name (or the ID where the type has none), then the creation time (once the page's
      // first answer has rendered them)
      const headers = async () => (await table.locator('thead th').allInnerTexts()).map((t) => t.replace(/[▲▼]/g, '').trim());
      await expect.poll(headers, { message: resource }).toEqual([expect.stringMatching(/^(Name|ID)$/), 'Created']);
      expect(await unlabelledControls(page), resource).toEqual([]);
    }
  });

  it('shows a read-only type (posture check types) without writes, with a detail view', async () => {
    if (!unspecified.includes('posture-check-types')) return;
    await go('/posture-check-types');
    await settled();
    const table = page.getByRole('table', { name: 'Posture check types' });
    await table.getByRole('link', { name: 'Windows Domain Check' }).waitFor();
    expect(await page.getByRole('main').getByRole('link', { name: /^New / }).count()).toBe(0);
    await shot('generic-list');
    await table.getByRole('link', { name: 'Windows Domain Check' }).click();
    await page.getByRole('heading', { name: 'Windows Domain Check' }).waitFor();
    await page.getByRole('link', { name: 'All posture check types' }).waitFor();
    expect(await button('Edit').count()).toBe(0);
    expect(await button('Delete').count()).toBe(0);
  });

  it('offers only create and delete where the core does (enrollments)', async () => {
    if (!unspecified.includes('enrollments')) return;
    await go('/enrollments');
    await settled();
    await page.getByRole('link', { name: 'New enrollment' }).click();
    const form = page.getByRole('form', { name: 'New enrollment' });
    await form.waitFor();
    // an enum is a select of its values, required fields are marked
    expect(await byLabel('Method', form).locator('option').allInnerTexts()).toEqual(['Choose…', 'ott', 'ottca', 'updb']);
    expect(await byLabel('Identity ID', form).getAttribute('required')).not.toBeNull();
    expect(await unlabelledControls(page)).toEqual([]);
  });

  it('creates, edits and deletes a config type through the generated forms; server errors are shown at their field', async () => {
    await go('/generic/config-types');
    await settled();
    const table = page.getByRole('table', { name: 'Config types' });
    await table.waitFor();
    // sortable where the core says so
    await table.getByRole('button', { name: 'Name' }).waitFor();
    await table.getByRole('button', { name: 'Created' }).waitFor();

    await page.getByRole('link', { name: 'New config type' }).click();
    const form = page.getByRole('form', { name: 'New config type' });
    await form.waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
    // fields from the create schema: string → text, enum → select, object → JSON, tags → tags
    expect(await byLabel('Name', form).evaluate((el) => (el as HTMLInputElement).type)).toBe('text');
    expect(await byLabel('Target', form).locator('option').allInnerTexts()).toEqual(['(none)', 'service', 'router']);
    expect(await byLabel('Schema', form).evaluate((el) => el.tagName)).toBe('TEXTAREA');
    await form.getByRole('button', { name: 'Add tag' }).waitFor();

    // nothing given: the core's validation error lands at the generated field
    await button('Create config type').click();
    await fieldError('Name', form).waitFor();
    expect(await byLabel('Name', form).getAttribute('aria-invalid')).toBe('true');
    expect(await fieldError('Name', form).innerText()).toMatch(/\S/);
    await shot('generic-create-error');

    await byLabel('Name', form).fill('gen-port');
    await byLabel('Schema', form).fill('{"type":"object","properties":{"port":{"type":"integer"}}}');
    await byLabel('Target', form).selectOption('router');
    await form.getByRole('button', { name: 'Add tag' }).click();
    await form.getByLabel('Tag 1 name').fill('env');
    await form.getByLabel('Tag 1 value').fill('lab');
    await button('Create config type').click();
    await page.getByRole('heading', { name: 'gen-port' }).waitFor();
    const id = decodeURIComponent(new URL(page.url()).hash.split('/').pop()!);
    expect(new URL(page.url()).hash).toBe(`#/generic/config-types/${encodeURIComponent(id)}`);
    const created = (await admin.get(`/config-types/${id}`)).body.data;
    expect(created).toMatchObject({
      name: 'gen-port',
      target: 'router',
      tags: { env: 'lab' },
      schema: { properties: { port: { type: 'integer' } } },
    });

    // the edit form is generated from the update schema, filled from the entity
    await button('Edit').click();
    const edit = page.getByRole('form', { name: 'Edit config type' });
    await edit.waitFor();
    expect(await byLabel('Name', edit).inputValue()).toBe('gen-port');
    expect(await byLabel('Target', edit).inputValue()).toBe('router');
    expect(JSON.parse(await byLabel('Schema', edit).inputValue())).toEqual(created.schema);
    // a schema emptied is sent as null, which a patch may not: the core's error lands at the field
    await byLabel('Schema', edit).fill('');
    await button('Save').click();
    await fieldError('Schema', edit).waitFor();
    expect(await fieldError('Schema', edit).innerText()).toMatch(/expected record/);
    expect(await byLabel('Schema', edit).getAttribute('aria-invalid')).toBe('true');
    await byLabel('Schema', edit).fill('{"type":"object"}');
    await byLabel('Name', edit).fill('gen-port-2');
    await byLabel('Target', edit).selectOption('service');
    await button('Save').click();
    await page.getByRole('heading', { name: 'gen-port-2' }).waitFor();
    expect((await admin.get(`/config-types/${id}`)).body.data).toMatchObject({
      name: 'gen-port-2',
      target: 'service',
      schema: { type: 'object' },
      tags: { env: 'lab' },
    });
    await shot('generic-detail');

    await button('Delete').click();
    await button('Delete config type gen-port-2').click();
    await page.getByRole('heading', { name: 'Config types' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/generic/config-types');
    expect((await admin.get(`/config-types/${id}`)).status).toBe(404);
  });

  it('answers an unknown type with "Not found"', async () => {
    await go('/generic/no-such-type');
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
  });
});
