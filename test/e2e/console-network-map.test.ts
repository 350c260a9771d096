// The console's network map in Chromium: identities | services | edge routers joined by their policies, with the
// built-in router's live state drawn on top — a terminator bound and a circuit open while the real OpenZiti Go SDK
// (weft-sdk-client from the interop tools) hosts and dials a service, gone when it stops, without a reload; then
// the same map at 1,000 identities and 200 services, grouped by role attribute (expand on click or Enter) and
// filtered by attribute and by one identity's reach. Screenshots at 1280×800 and 390 px.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { identities } from '../../src/main/core/policy/identities';
import { applyCreate } from '../../src/main/core/entities/resource';
import { services } from '../../src/main/core/policy/services';
import { openzitiTools, ToolProcess, ZitiCli } from '../interop/tools';
import { tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';

/** formatAge's output: "42s", "3m 5s", "2h 10m" */
const AGE = /^(\d+s|\d+m \d+s|\d+h \d+m)$/;
/** formatBytes's output for a little over 1,024 bytes */
const KIB_ABOUT_1 = /^1\.\d KiB$/;
/** An age cell back in seconds (to the minute for hours). */
function ageSeconds(text: string): number {
  if (!AGE.test(text)) throw new Error(`not an age: ${JSON.stringify(text)}`);
  const [a = 0, b = 0] = text.match(/\d+/g)!.map(Number);
  return text.includes('h') ? a * 3600 + b * 60 : text.includes('m') ? a * 60 + b : a;
}

describe('console: network map with live state (Chromium, OpenZiti Go SDK)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);
  const shot = (name: string) => screenshotBothWidths(page, name);
  const node = (name: RegExp) => page.getByRole('button', { name });

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    admin = await app.adminClient();
  });

  it('shows the bound terminator and the open circuit of a real Go SDK client, live', { timeout: 180_000 }, async () => {
    const tools = openzitiTools();
    const cli = new ZitiCli(tools.ziti, tempDir('weft-map-'));
    /** An identity enrolled with `ziti edge enroll`; returns its identity file. */
    const enrolled = async (name: string, attrs: string[]) => {
      const id = await admin.create('/identities', { name, type: 'Device', isAdmin: false, roleAttributes: attrs, enrollment: { ott: true } });
      const jwt = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.jwt as string;
      const jwtFile = join(cli.cwd, `${name}.jwt`);
      writeFileSync(jwtFile, jwt);
      const file = join(cli.cwd, `${name}.json`);
      await cli.ok('edge', 'enroll', jwtFile, '-o', file);
      return file;
    };
    const hostFile = await enrolled('map-host', ['map-hosts']);
    const clientFile = await enrolled('map-client', ['map-clients']);
    await admin.create('/services', { name: 'map-echo', encryptionRequired: true, roleAttributes: ['map-apps'] });
    await admin.create('/service-policies', {
      name: 'map-bind',
      type: 'Bind',
      semantic: 'AnyOf',
      identityRoles: ['#map-hosts'],
      serviceRoles: ['#map-apps'],
    });
    await admin.create('/service-policies', {
      name: 'map-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#map-clients'],
      serviceRoles: ['#map-apps'],
    });
    await admin.create('/edge-router-policies', { name: 'map-all', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
    await admin.create('/service-edge-router-policies', { name: 'map-all', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });

    await go('/network');
    await page.getByRole('heading', { name: 'Network map' }).waitFor();
    await node(/^edge router er-builtin.*online/).waitFor();
    await node(/^service map-echo/).waitFor();
    await page.getByText('No circuit is open.').waitFor();

    const server = new ToolProcess(tools.sdkClient, ['echo-server', '--identity', hostFile, '--service', 'map-echo']);
    let dialer: ToolProcess | undefined;
    try {
      await server.waitFor((l) => l.bound === true);
      // no reload: the page polls the router's state
      await node(/^service map-echo.*1 terminator/).waitFor({ timeout: 30_000 });
      dialer = new ToolProcess(tools.sdkClient, ['dial', '--identity', clientFile, '--service', 'map-echo', '--hold']);
      await dialer.waitFor((l) => l.holding === true);
      const circuit = page.getByTestId('network-circuit');
      await circuit.waitFor({ timeout: 30_000 });
      // dialer, service, its path (the built-in router alone: no hop), bytes in and out (the SDK client echoed 1,024
      // bytes, plus end-to-end encryption's overhead), and an age as formatAge writes it ("42s", "3m 5s")
      const cells = () => circuit.locator('td').allTextContents();
      await expect
        .poll(cells, { timeout: 10_000 })
        .toEqual([
          'map-client',
          'map-echo',
          'er-builtin',
          '0',
          expect.stringMatching(KIB_ABOUT_1),
          expect.stringMatching(KIB_ABOUT_1),
          expect.stringMatching(AGE),
        ]);
      // the age grows while the page polls, without a reload
      const age0 = ageSeconds((await cells())[6]!);
      await expect.poll(async () => ageSeconds((await cells())[6]!), { timeout: 15_000 }).toBeGreaterThan(age0);
      await node(/^identity map-client .*1 open circuit/).waitFor();
      await node(/^service map-echo.*1 terminator, 1 open circuit/).waitFor();
      await page.getByTestId('live-edge').first().waitFor({ state: 'attached' });
      // selecting the client shows what connects it, with the policies as links and a "why"
      await node(/^identity map-client /).click();
      const details = page.getByRole('region', { name: 'Identity: map-client' });
      await details.getByRole('link', { name: 'map-dial' }).waitFor();
      await details.getByRole('link', { name: 'map-all' }).waitFor();
      await details.getByRole('link', { name: 'Why?' }).waitFor();
      await shot('network-map');
      dialer.end();
      await dialer.exited;
      await page.getByText('No circuit is open.').waitFor({ timeout: 30_000 });
      expect(await page.getByTestId('live-edge').count()).toBe(0);
    } finally {
      dialer?.end();
      server.end();
      await Promise.all([dialer?.exited, server.exited]);
    }
  });

  it('stays readable at 1,000 identities and 200 services: groups by role attribute, expand on click or Enter, filters', async () => {
    const system = app.core.system;
    await app.core.store.tx(async () => {
      for (let i = 0; i < 1000; i++) {
        await applyCreate(system, identities, {
          name: `user-${String(i).padStart(4, '0')}`,
          type: 'User',
          isAdmin: false,
          roleAttributes: [`team-${i % 10}`],
        });
      }
      for (let i = 0; i < 200; i++)
        await applyCreate(system, services, {
          name: `app-svc-${String(i).padStart(3, '0')}`,
          encryptionRequired: false,
          roleAttributes: [`app-${i % 8}`],
        });
    });
    for (let i = 0; i < 10; i++) {
      await admin.create('/service-policies', {
        name: `team-${i}-dial`,
        type: 'Dial',
        semantic: 'AnyOf',
        identityRoles: [`#team-${i}`],
        serviceRoles: [`#app-${i % 8}`],
      });
    }
    await page.reload();
    await page.getByRole('heading', { name: 'Network map' }).waitFor();
    const team0 = node(/^identity group #team-0: 100 identities, collapsed/);
    await team0.waitFor();
    await node(/^service group #app-0: 25 services, collapsed/).waitFor();
    expect(await page.getByTestId('net-node').count()).toBeLessThan(40);
    await team0.click();
    await node(/^identity group #team-0: 100 identities, expanded/).waitFor();
    await node(/^identity user-0000 \(#team-0\)/).waitFor();
    expect(await page.locator('[data-testid="net-node"][data-key^="identity:"]').count()).toBe(60); // the first 60 members
    await page.getByText('Expanded groups show their first 60 members').waitFor();
    // the keyboard does the same
    const app3 = node(/^service group #app-3: 25 services, collapsed/);
    await app3.focus();
    await page.keyboard.press('Enter');
    await node(/^service group #app-3: 25 services, expanded/).waitFor();
    await node(/^service app-svc-003 /).waitFor();
    await shot('network-map-scale');

    // by attribute: #team-3 and what it reaches
    await page.getByLabel('Show', { exact: true }).selectOption('attribute');
    await page.getByLabel('Attribute', { exact: true }).fill('team-3');
    await page.getByRole('button', { name: 'Apply' }).click();
    await node(/^identity group #team-3: 100 identities/).waitFor();
    await expect.poll(() => page.locator('[data-testid="net-node"][data-key^="identity"]').count(), { timeout: 10_000 }).toBe(1);
    await node(/^service app-svc-003 /).waitFor(); // 25 services: shown one by one
    expect(await page.locator('[data-testid="net-node"][data-key^="service:"]').count()).toBe(25);

    // one identity's reach
    await page.getByLabel('Show', { exact: true }).selectOption('identity');
    await page.getByLabel('Search Identity').fill('user-0005');
    await page.getByRole('combobox', { name: 'Identity', exact: true }).selectOption({ label: 'user-0005' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('[data-testid="net-node"][data-key^="identity"]').count(), { timeout: 10_000 }).toBe(1);
    await node(/^identity user-0005 \(#team-5\)/).waitFor();
    await node(/^service app-svc-005 /).waitFor();
    expect(await page.locator('[data-testid="net-node"][data-key^="service:"]').count()).toBe(25);
    await node(/^edge router er-builtin/).waitFor();
    await admin.close();
  });
});
