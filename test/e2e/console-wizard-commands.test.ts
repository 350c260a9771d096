// The service wizard's preview shows the plan as `ziti edge create` commands and Management API requests, the very
// ones the core generates for it, copyable; at 1280×800 and 390 px with no sideways overflow and no console error.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';
import { ConsoleClient } from '../support/consoleTrpc';

describe('console: the wizard shows the equivalent ziti commands and REST requests (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  const problems: string[] = [];

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    admin = await app.adminClient();
    await s.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.urls.console! });
    page.on('console', (m) => void (m.type() === 'error' && problems.push(`console: ${m.text()}`)));
    page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
    await admin.create('/identities', { name: 'laptop-1', type: 'Device', isAdmin: false, roleAttributes: ['staff'] });
  });

  it('previews the commands and requests of the plan, and copies them', async () => {
    await page.goto(`${app.urls.console}/#/service-wizard`);
    await page.getByLabel(/^Name/).fill("team's wiki");
    await page.getByLabel('Host name clients use').fill('wiki.lab.internal');
    await page.getByLabel('Port it listens on').fill('8080');
    const dial = page.getByLabel(/^Who may dial/);
    await dial.fill('@laptop-1');
    await dial.press('Enter');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByText('Dry run passed').waitFor();

    // what the page shows is what the core generated for this plan
    const ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
    const body = {
      name: "team's wiki",
      intercept: { addresses: ['wiki.lab.internal'], port: 80 },
      host: { kind: 'router', address: '127.0.0.1', port: 8080 },
      dialRoles: ['@laptop-1'],
    };
    const { commands } = await ui.ok('query', 'serviceWizard.preview', { body });
    const cli = page.getByTestId('wizard-cli');
    const shownCli = (await cli.locator('pre').textContent())!;
    expect(shownCli).toBe(commands.cli.join('\n'));
    expect(shownCli).toContain(
      `ziti edge create service-policy 'team'\\''s wiki-dial' Dial --semantic AnyOf --identity-roles @laptop-1 --service-roles '@team'\\''s wiki'`,
    );
    expect(shownCli).toContain("ziti edge create config 'team'\\''s wiki-intercept' intercept.v1");
    expect(shownCli).toContain('ziti edge create edge-router-policy');
    const rest = page.getByTestId('wizard-rest');
    const shownRest = (await rest.locator('pre').textContent())!;
    for (const r of commands.rest) {
      expect(shownRest).toContain(`${r.method} ${r.path}\n${JSON.stringify(r.body, null, 2)}\n# ${r.saveIdAs} = data.id of the response`);
    }
    expect(shownRest).toContain(`"serviceRoles": [\n    "@\${SERVICE_ID}"\n  ]`);

    await cli.getByRole('button', { name: 'Copy ziti cli commands' }).click();
    await cli.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shownCli);
    await rest.getByRole('button', { name: 'Copy rest requests' }).click();
    await rest.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shownRest);

    await screenshotBothWidths(page, 'wizard-commands');
    await page.setViewportSize({ width: 390, height: 800 });
    await cli.scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(problems).toEqual([]);
  });
});
