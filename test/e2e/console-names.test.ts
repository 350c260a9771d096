// Names, not ids, and plain messages, in Chromium: policy roles are picked by name (type-ahead over the right kind)
// or typed as `@name`, stored as `@id` (checked over REST) and shown by name in the list, the detail page and the
// editor's chips; an unknown name is a field error naming it and nothing is created; the wizard's dry run succeeds
// with `@laptop-1`, its Create goes to the service without a false "dry run failed", and it names every missing field
// at once; a duplicate name reads "An identity named eve already exists"; detail pages show no placeholder junk.
// Every page shot at 1280×800 and 390 px (no sideways overflow) and no console error beyond the 400s provoked.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, unlabelledControls, useConsoleSession } from '../support/consoleBrowser';
import { externalCa } from '../support/pki';

describe('console: names, not ids, and plain messages (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  const ids: Record<string, string> = {};
  const problems: string[] = [];
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);
  const shot = (name: string) => screenshotBothWidths(page, `names-${name}`);
  const byName = async (path: string, name: string): Promise<any[]> =>
    (await admin.get(`${path}?filter=${encodeURIComponent(`name = "${name}"`)}`)).body.data;
  const main = () => page.locator('main');

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    admin = await app.adminClient();
    page.on('console', (m) => {
      // the validation errors these tests provoke come back as 400s; anything else is a problem
      if (m.type() === 'error' && !/status of 400/.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
    ids['laptop-1'] = await admin.create('/identities', { name: 'laptop-1', type: 'Device', isAdmin: false, roleAttributes: ['staff'] });
    ids.eve = await admin.create('/identities', { name: 'eve', type: 'User', isAdmin: false });
    ids.wiki = await admin.create('/services', { name: 'wiki', encryptionRequired: true, roleAttributes: ['web'] });
  });

  it('picks roles by name, stores @id, and shows names in the list, the page and the editor', async () => {
    await go('/service-policies/new');
    const identities = page.getByRole('combobox', { name: 'Identity roles' });
    await identities.fill('lap');
    const option = page.getByRole('option', { name: /@laptop-1/ });
    await option.waitFor();
    await shot('picker');
    await option.click();
    await page.getByRole('list', { name: 'Added' }).getByText('@laptop-1', { exact: true }).waitFor();
    // a second role by keyboard: the attribute, chosen with the arrow keys
    await identities.fill('#sta');
    await page.getByRole('option', { name: /#staff/ }).waitFor();
    await identities.press('ArrowDown');
    await identities.press('Enter');
    await main().getByText('#staff', { exact: true }).waitFor();
    // a typed @name is kept as typed; the preview already resolves it
    const services = page.getByRole('combobox', { name: 'Service roles' });
    await services.fill('@wiki');
    await services.press('Enter');
    await main().getByText('Matches 1 service: wiki').waitFor();
    await main().getByText('Matches 1 identity: laptop-1').waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('names-dial');
    await page.getByRole('button', { name: 'Create service policy' }).click();
    await page.getByRole('heading', { name: 'names-dial' }).waitFor();

    const stored = (await byName('/service-policies', 'names-dial'))[0];
    expect(stored.identityRoles.sort()).toEqual(['#staff', `@${ids['laptop-1']}`].sort());
    expect(stored.serviceRoles).toEqual([`@${ids.wiki}`]);
    // the page: roles by name, no ids, no raw *RolesDisplay pairs
    const text = await main().innerText();
    expect(text).toContain('@laptop-1');
    expect(text).toContain('@wiki');
    expect(text).not.toContain(ids['laptop-1']!);
    expect(text).not.toContain(ids.wiki!);
    expect(text).not.toMatch(/RolesDisplay|"role"/);
    await shot('policy-detail');
    // the editor's chips show names too
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('button', { name: 'Remove @laptop-1' }).waitFor();
    await page.getByRole('button', { name: 'Remove @wiki' }).waitFor();
    await page.getByRole('button', { name: 'Close editor' }).click();

    await go('/service-policies');
    const row = page.getByRole('row', { name: /names-dial/ });
    await row.waitFor();
    expect(await row.innerText()).toContain('@laptop-1');
    expect(await row.innerText()).not.toContain(ids['laptop-1']!);
    await shot('policy-list');
  });

  it('an unknown name is a field error naming it, and nothing is created', async () => {
    await go('/edge-router-policies/new');
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('names-bad');
    const identities = page.getByRole('combobox', { name: 'Identity roles' });
    await identities.fill('@nobody');
    await identities.press('Enter');
    await main().getByText('no identity has the name or id @nobody', { exact: false }).first().waitFor();
    const routers = page.getByRole('combobox', { name: 'Edge router roles' });
    await routers.fill('@nowhere');
    await routers.press('Enter');
    await page.getByRole('button', { name: 'Create edge router policy' }).click();
    // both sides at fault are named at once
    await page.getByRole('alert').filter({ hasText: 'no identity has the name or id @nobody' }).first().waitFor();
    await page.getByRole('alert').filter({ hasText: 'no edge router has the name or id @nowhere' }).first().waitFor();
    expect(await identities.getAttribute('aria-invalid')).toBe('true');
    expect(await routers.getAttribute('aria-invalid')).toBe('true');
    await shot('unknown-name');
    expect(await byName('/edge-router-policies', 'names-bad')).toEqual([]);
  });

  it('the wizard dry-runs with @laptop-1 and creates without a false "dry run failed"', async () => {
    await go('/service-wizard');
    await page.getByRole('heading', { name: 'New service (wizard)' }).waitFor();
    await page.getByRole('textbox', { name: 'Name' }).first().fill('names-app');
    await page.getByLabel('Host name clients use').fill('names-app.lab.internal');
    await page.getByLabel('Port it listens on').fill('8090');
    const dial = page.getByRole('combobox', { name: 'Who may dial' });
    await dial.fill('@laptop-1');
    await dial.press('Enter');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByText('Dry run passed').waitFor();
    const dialStep = page.getByTestId('plan-dial-policy');
    expect(await dialStep.innerText()).toContain('@laptop-1');
    await shot('wizard-preview');
    // watch for the dry-run failure box from the click on until the service page is shown
    await page.evaluate(() => {
      const w = window as unknown as { sawFailure: boolean };
      w.sawFailure = false;
      new MutationObserver(() => {
        if (document.body.innerText.includes('The dry run failed')) w.sawFailure = true;
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByRole('button', { name: 'Create service names-app' }).click();
    await page.getByRole('heading', { name: 'names-app', exact: true }).waitFor();
    await page.getByRole('heading', { name: /Why laptop-1 can/ }).waitFor();
    expect(await page.evaluate(() => (window as unknown as { sawFailure: boolean }).sawFailure)).toBe(false);
    const policy = (await byName('/service-policies', 'names-app-dial'))[0];
    expect(policy.identityRoles).toEqual([`@${ids['laptop-1']}`]);
  });

  it('the wizard names every missing field at once', async () => {
    await go('/service-wizard');
    await page.getByRole('heading', { name: 'New service (wizard)' }).waitFor();
    await page.getByRole('button', { name: 'Preview' }).click();
    const summary = page.getByTestId('wizard-missing');
    await summary.waitFor();
    const said = await summary.innerText();
    for (const f of ['Name', 'Host name clients use', 'Port it listens on', 'Who may dial']) expect(said).toContain(f);
    for (const f of ['Name', 'Host name clients use', 'Port it listens on']) {
      expect(await page.getByLabel(f).first().getAttribute('aria-invalid')).toBe('true');
    }
    expect(await page.getByRole('combobox', { name: 'Who may dial' }).getAttribute('aria-invalid')).toBe('true');
    await shot('wizard-missing');
  });

  it('a duplicate name reads as a sentence', async () => {
    await go('/identities/new');
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('eve');
    await page.getByRole('button', { name: 'Create identity' }).click();
    await page.getByRole('alert').filter({ hasText: 'An identity named eve already exists' }).first().waitFor();
    expect(await main().innerText()).not.toContain('unique index');
    await shot('duplicate');
  });

  it('detail pages show names and no placeholder junk', async () => {
    const configId = await admin.create('/configs', {
      name: 'wiki-host',
      configTypeId: (await byName('/config-types', 'host.v1'))[0].id,
      data: { protocol: 'tcp', address: '127.0.0.1', port: 80 },
    });
    expect((await admin.patch(`/services/${ids.wiki}`, { configs: [configId] })).status).toBe(200);
    await go(`/services/${ids.wiki}`);
    await page.getByRole('heading', { name: 'wiki', exact: true }).waitFor();
    await main().getByRole('link', { name: 'wiki-host' }).waitFor();
    let text = await main().innerText();
    expect(text).not.toMatch(/\bpermissions\b/);
    expect(text).not.toContain('Invalid');
    expect(text).not.toContain('dummy');
    expect(text).not.toContain(configId);
    await shot('service-detail');

    await go(`/identities/${ids.eve}`);
    await page.getByRole('heading', { name: 'eve', exact: true }).waitFor();
    text = await main().innerText();
    expect(text).not.toContain('authPolicyId');
    await shot('identity-detail');

    const ca = await externalCa('Names CA');
    const caId = await admin.create('/cas', {
      name: 'names-ca',
      certPem: ca.certPem,
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: true,
      identityRoles: [],
    });
    await go(`/cas/${caId}`);
    await page.getByRole('heading', { name: 'names-ca', exact: true }).waitFor();
    await page.getByText('Verification').first().waitFor();
    expect((await main().innerText()).match(/fingerprint/gi)).toHaveLength(1);
    await shot('ca-detail');
    expect(problems).toEqual([]);
  });
});
