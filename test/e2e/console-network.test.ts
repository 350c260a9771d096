// The console in Chromium builds a small network through its forms — a config from its type's JSON schema, a
// service, an edge router, the three policies (checking their live role previews) — then asks the policy advice
// page why access works; creates and removes a public share; runs the integrity check and a snapshot. Saves a
// screenshot of every page, at 1280×800 and at 390 px (where nothing may overflow sideways).
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { SCREENSHOTS as SHOTS, screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';
import { frontendSection, writeConfigFile } from '../support/shares';

describe('console: a small network, policy advice, shares, operations (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);
  /** console-<name>.png at 1280×800 and console-<name>-390.png (nothing overflowing sideways at 390 px) */
  const shot = (name: string) => screenshotBothWidths(page, name);
  /** one screenshot at the current (narrow) viewport, for the flows that only exist there (the menu) */
  const narrowShot = (name: string) => page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true });
  const field = (name: string) => page.getByRole('textbox', { name, exact: true });
  const select = (name: string) => page.getByRole('combobox', { name, exact: true });
  /** The control a label names (required fields show " *" after the label). */
  const byLabel = (label: string) => page.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\*)?$`));
  /** Types a role or attribute; `commit` presses Enter to add it as a chip. */
  async function typeRole(label: string, value: string, commit = true) {
    const input = byLabel(label);
    await input.fill(value);
    if (commit) await input.press('Enter');
  }

  useConsoleSession(
    async (s) => {
      ({ app, page } = s);
      // the network the forms build is the whole network: no built-in router (the live traffic page has its own test)
    },
    { configFile: writeConfigFile({ frontend: frontendSection() }), routerListener: 'off' },
  );

  it('creates a config with the form generated from its config type; schema errors show at the field', async () => {
    await go('/configs/new');
    await field('Name').fill('web-intercept');
    await select('Config type').selectOption({ label: 'intercept.v1' });
    await page.getByRole('checkbox', { name: 'tcp' }).check();
    await page.getByRole('button', { name: 'Add portRanges' }).click();
    await page.getByRole('spinbutton', { name: 'low' }).fill('443');
    await page.getByRole('spinbutton', { name: 'high' }).fill('443');
    await page.getByRole('button', { name: 'Create config' }).click();
    // addresses is required by the schema: the server's error lands on that field
    await page.locator('.field-error').filter({ hasText: 'is required' }).waitFor();
    await expect.poll(() => byLabel('addresses').getAttribute('aria-invalid')).toBe('true');
    await shot('config-error');
    await typeRole('addresses', 'web.weft.internal');
    await page.getByRole('button', { name: 'Create config' }).click();
    await page.getByRole('heading', { name: 'web-intercept' }).waitFor();
    const data = JSON.parse((await page.locator('pre.code').textContent())!);
    expect(data).toEqual({ protocols: ['tcp'], addresses: ['web.weft.internal'], portRanges: [{ low: 443, high: 443 }] });
    await shot('config-detail');
  });

  it('creates an identity, a service with that config and an edge router through their forms', async () => {
    await go('/identities/new');
    await field('Name').fill('alice');
    await typeRole('Role attributes', 'staff');
    await page.getByRole('radio', { name: 'None' }).check();
    await page.getByRole('button', { name: 'Create identity' }).click();
    await page.getByRole('heading', { name: 'alice' }).waitFor();

    await go('/services/new');
    await field('Name').fill('web');
    await typeRole('Role attributes', 'intranet');
    await select('Configs (one per config type)').selectOption({ label: 'web-intercept' });
    await page.getByRole('list', { name: 'Chosen' }).getByText('web-intercept').waitFor();
    await shot('service-new');
    await page.getByRole('button', { name: 'Create service' }).click();
    await page.getByRole('heading', { name: 'web' }).waitFor();

    await go('/edge-routers/new');
    await field('Name').fill('er-1');
    await typeRole('Role attributes', 'public');
    await page.getByRole('button', { name: 'Create edge router' }).click();
    await page.getByRole('heading', { name: 'er-1' }).waitFor();
    expect(await page.getByLabel('Router enrollment token (JWT)').inputValue()).toMatch(/^ey/);
    await page.getByRole('img', { name: 'QR code of the router enrollment token jwt' }).waitFor();
    await shot('edge-router-detail');
  });

  it('creates the three policies; each form previews the entities its roles match as you type', async () => {
    await go('/service-policies/new');
    await field('Name').fill('staff-dial-web');
    await select('Type').selectOption('Dial');
    await typeRole('Identity roles', '#staff', false);
    await page.getByText('Matches 1 identity: alice').waitFor(); // not yet added: the preview counts what is typed
    await byLabel('Identity roles').press('Enter');
    await typeRole('Identity roles', '#nobody', false);
    await page.getByText('Matches 1 identity: alice').waitFor(); // AnyOf: #staff or #nobody
    await byLabel('Identity roles').fill('');
    await typeRole('Service roles', '#intranet');
    await page.getByText('Matches 1 service: web').waitFor();
    await shot('service-policy-new');
    await page.getByRole('button', { name: 'Create service policy' }).click();
    await page.getByRole('heading', { name: 'staff-dial-web' }).waitFor();

    await go('/edge-router-policies/new');
    await field('Name').fill('staff-routers');
    await typeRole('Identity roles', '#staff');
    await typeRole('Edge router roles', '#public');
    await page.getByText('Matches 1 edge router: er-1').waitFor();
    await page.getByRole('button', { name: 'Create edge router policy' }).click();
    await page.getByRole('heading', { name: 'staff-routers' }).waitFor();

    await go('/service-edge-router-policies/new');
    await field('Name').fill('web-routers');
    await typeRole('Service roles', '#intranet');
    await typeRole('Edge router roles', '#all');
    await page.getByText('Matches 1 edge router: er-1').waitFor();
    await page.getByRole('button', { name: 'Create service edge router policy' }).click();
    await page.getByRole('heading', { name: 'web-routers' }).waitFor();
  });

  it('policy advice explains in one sentence why alice can reach web, and what is still missing', async () => {
    await go('/policy-advice');
    await select('Identity').selectOption({ label: 'alice' });
    await select('Service').selectOption({ label: 'web' });
    const sentence = page.locator('.advice-sentence');
    await expect
      .poll(() => sentence.textContent())
      .toBe('Identity "alice" may dial service "web" through 1 common edge router (er-1), but none of them is online.');
    await page.locator('dd.ok').filter({ hasText: 'allowed' }).waitFor();
    await shot('policy-advice');
  });

  it('creates a public share with an OAuth provider and email patterns, serves it, and removes it', async () => {
    const shareUrl = (token: string) => app.urls.frontend!.shareUrl.replace('{token}', token);
    const askFrontend = async (token: string) => {
      const url = new URL(shareUrl(token));
      const res = await request(`${app.urls.frontend!.publicListener}/`, { headers: { host: url.host, accept: 'application/json' } });
      await res.body.dump();
      return res.statusCode;
    };
    await go('/shares');
    await page.getByText(/Shares are served at/).waitFor();
    await field('Token (the first label of the share’s host name)').fill('Bad Token');
    await field('Target (http(s) URL, or an absolute directory for web)').fill('http://127.0.0.1:9/');
    await page.getByRole('button', { name: 'Create share' }).click();
    await page
      .locator('.field-error')
      .filter({ hasText: /pattern|must/ })
      .first()
      .waitFor();

    await field('Token (the first label of the share’s host name)').fill('demo-app');
    await page.getByRole('checkbox', { name: 'Require an OAuth login' }).check();
    await select('OAuth provider').selectOption('github');
    await typeRole('Allowed email patterns (globs; none = any verified email)', '*@example.com');
    await page.getByRole('button', { name: 'Create share' }).click();
    await page.getByText(/Share demo-app created/).waitFor();
    const table = page.getByRole('table', { name: 'Shares' });
    await table.getByText('github (*@example.com)').waitFor();
    await table.getByRole('link', { name: shareUrl('demo-app') }).waitFor();
    await shot('shares');
    // the frontend now knows the share and asks for a login
    expect(await askFrontend('demo-app')).toBe(401);

    await table.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('button', { name: 'Remove share demo-app' }).click();
    await table.getByText('None yet.').waitFor();
    expect(await askFrontend('demo-app')).toBe(404);
  });

  it('runs a data integrity check with progress and writes a snapshot', async () => {
    await go('/database');
    await page.getByRole('button', { name: 'Check data integrity' }).click();
    await page.getByText(/No problems found|finding\(s\), finished/).waitFor();
    await page.getByRole('button', { name: 'Write a database snapshot' }).click();
    await page.getByText(/Snapshot written to/).waitFor();
    expect(await page.locator('.notice code').last().textContent()).toMatch(/snapshots\/weft-.*\.db$/);
    await shot('database');
  });

  it('every page renders (screenshots), also at a narrow width with the menu', async () => {
    const pages = [
      'dashboard',
      'identities',
      'auth-policies',
      'auth-policies/new',
      'cas',
      'mfa',
      'services',
      'configs',
      'config-types',
      'config-types/new',
      'service-policies',
      'edge-router-policies',
      'service-edge-router-policies',
      'posture-checks',
      'posture-checks/new',
      'edge-routers',
      'routers',
      'routers/new',
      'api-sessions',
      'shares',
    ];
    for (const p of pages) {
      await go(`/${p}`);
      await page.locator('main h1').waitFor();
      await page.locator('main .spinner').waitFor({ state: 'detached' });
      await shot(`page-${p.replace('/', '-')}`);
    }
    await page.setViewportSize({ width: 390, height: 800 });
    await go('/service-policies');
    await page.getByRole('table', { name: 'Service policies' }).getByText('staff-dial-web').waitFor();
    await narrowShot('narrow-service-policies');
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Identities' }).click();
    await page.getByRole('heading', { name: 'Identities' }).waitFor();
    await narrowShot('narrow-identities');
  });
});
