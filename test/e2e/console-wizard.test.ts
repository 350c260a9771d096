// The console's first run and its service wizard in Chromium: on an empty network the dashboard's guided lab makes
// a router-hosted service, a device identity with its QR code and shows why it can connect; the wizard previews a
// dry run, then creates exactly the planned entities (checked over the REST API) and opens the service with the
// policy advice of a dialing identity; dry-run errors land on the form; and a keyboard-only walk creates a service.
// Screenshots at 1280×800 and 390 px.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';

const COLLECTIONS = ['/services', '/configs', '/service-policies', '/service-edge-router-policies', '/edge-router-policies', '/identities'] as const;

describe('console: first-run lab and service wizard (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);
  const shot = (name: string) => screenshotBothWidths(page, name);
  const names = async (path: string, filter = 'true'): Promise<string[]> =>
    ((await admin.get(`${path}?limit=500&filter=${encodeURIComponent(filter)}`)).body.data as Array<{ name: string }>).map((e) => e.name).sort();
  const snapshot = async () => Object.fromEntries(await Promise.all(COLLECTIONS.map(async (c) => [c, await names(c)] as const)));
  const added = (before: Record<string, string[]>, after: Record<string, string[]>) =>
    Object.fromEntries(COLLECTIONS.map((c) => [c, after[c]!.filter((n) => !before[c]!.includes(n))]));
  /** The accessible name of the focused element (its label, aria-label or text). */
  const focused = () =>
    page.evaluate(() => {
      const el = document.activeElement as HTMLInputElement | null;
      if (!el) return '';
      return (el.getAttribute('aria-label') ?? el.labels?.[0]?.textContent ?? el.textContent ?? '').trim();
    });
  /** Presses Tab until the focused control's name matches; fails after `max` presses. */
  async function tabTo(name: RegExp, max = 12): Promise<void> {
    const seen: string[] = [];
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      const now = await focused();
      if (name.test(now)) return;
      seen.push(now);
    }
    throw new Error(`Tab never reached ${name}; went through: ${seen.join(' | ')}`);
  }

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    admin = await app.adminClient();
  });

  it('on an empty network the dashboard offers a guided lab: service, device with QR code, and why it can connect', async () => {
    await go('/');
    const lab = page.getByRole('region', { name: /Guided lab/ });
    await lab.waitFor();
    await shot('lab');
    await lab.getByLabel('Where the app runs (address)').fill('127.0.0.1');
    await lab.getByLabel('Its port').fill('8088');
    await lab.getByRole('button', { name: 'Create the service' }).click();
    await lab.getByRole('button', { name: 'Create the identity' }).click();
    await lab.getByRole('img', { name: /QR code of the enrollment token/ }).waitFor();
    await lab.getByRole('heading', { name: 'Why my-phone can dial my-web-app' }).waitFor();
    await lab.getByText('http://my-web-app.ziti/').waitFor();
    await shot('lab-done');
    // what the lab made, over the REST API
    const svc = (await admin.get(`/services?filter=${encodeURIComponent('name = "my-web-app"')}`)).body.data[0];
    const phone = (await admin.get(`/identities?filter=${encodeURIComponent('name = "my-phone"')}`)).body.data[0];
    expect(phone).toMatchObject({ typeId: 'Device', roleAttributes: ['lab-users'] });
    expect(phone.enrollment.ott.jwt).toMatch(/^ey/);
    const configs = (await admin.get(`/services/${svc.id}/configs`)).body.data.map((c: any) => c.data);
    expect(configs).toContainEqual({ protocol: 'tcp', address: '127.0.0.1', port: 8088 });
    expect(configs).toContainEqual({ protocols: ['tcp'], addresses: ['my-web-app.ziti'], portRanges: [{ low: 80, high: 80 }] });
    expect((await admin.get(`/identities/${phone.id}/policy-advice/${svc.id}`)).body.data).toMatchObject({
      isDialAllowed: true,
      commonRouters: [{ name: 'er-builtin', isOnline: true }],
    });
    await lab.getByRole('button', { name: 'Finish' }).click();
    await expect.poll(() => page.getByRole('region', { name: /Guided lab/ }).count(), { timeout: 10_000 }).toBe(0);
  });

  it('previews a dry run, then creates exactly the planned entities and opens the service with policy advice', async () => {
    await admin.create('/identities', { name: 'wiz-alice', type: 'User', isAdmin: false, roleAttributes: ['staff'] });
    const before = await snapshot();
    await go('/services');
    await page.getByRole('link', { name: 'New service (wizard)' }).first().click();
    await page.getByRole('heading', { name: 'New service (wizard)' }).waitFor();
    await page.getByLabel(/^Name/).fill('wiki');
    await page.getByLabel('Host name clients use').fill('wiki.lab.internal');
    await page.getByLabel('Port it listens on').fill('8080');
    const dial = page.getByLabel(/^Who may dial/);
    await dial.fill('#staff');
    await page.getByText('Matches 1 identity: wiz-alice').waitFor();
    await dial.press('Enter');
    await page.getByRole('button', { name: 'Preview' }).click();
    const plan = page.getByRole('list', { name: 'Planned entities' });
    await plan.waitFor();
    await page.getByText('Dry run passed').waitFor();
    expect(await plan.getByRole('listitem').count()).toBe(7);
    await plan.getByText('wiki-clients').waitFor();
    await page.getByText(/The edge router er-builtin hosts the service: it connects to 127\.0\.0\.1:8080/).waitFor();
    // a dry run: nothing exists yet
    expect(added(before, await snapshot())).toEqual(Object.fromEntries(COLLECTIONS.map((c) => [c, []])));
    await shot('wizard-preview');
    await page.getByRole('button', { name: 'Create service wiki' }).click();
    await page.getByRole('heading', { name: 'wiki', exact: true }).waitFor();
    expect(added(before, await snapshot())).toEqual({
      '/services': ['wiki'],
      '/configs': ['wiki-host', 'wiki-intercept'],
      '/service-policies': ['wiki-bind', 'wiki-dial'],
      '/service-edge-router-policies': ['wiki-routers'],
      '/edge-router-policies': ['wiki-clients'],
      '/identities': [],
    });
    const svc = (await admin.get(`/services?filter=${encodeURIComponent('name = "wiki"')}`)).body.data[0];
    const dialPolicy = (await admin.get(`/service-policies?filter=${encodeURIComponent('name = "wiki-dial"')}`)).body.data[0];
    expect(dialPolicy).toMatchObject({ type: 'Dial', identityRoles: ['#staff'], serviceRoles: [`@${svc.id}`] });
    // the service page: who may dial, and why, each link to its policy
    const why = page.getByTestId('access-explanation');
    await why.getByRole('heading', { name: 'Why wiz-alice can dial wiki' }).waitFor();
    await why.getByTestId('chain-dial').getByRole('link', { name: 'wiki-dial' }).waitFor();
    await why.getByTestId('chain-routers').getByRole('link', { name: 'wiki-clients' }).waitFor();
    await why.getByTestId('chain-routers').getByRole('link', { name: 'wiki-routers' }).waitFor();
    await shot('wizard-service');
  });

  it('shows dry-run and validation errors at the field they belong to', async () => {
    await admin.create('/service-policies', { name: 'dup-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: [], serviceRoles: [] });
    await go('/service-wizard');
    await page.getByLabel(/^Name/).fill('dup');
    await page.getByLabel('Host name clients use').fill('dup.lab.internal');
    await page.getByLabel('Port it listens on').fill('70000');
    await page.getByLabel(/^Who may dial/).fill('#staff');
    await page.getByLabel(/^Who may dial/).press('Enter');
    await page.getByRole('button', { name: 'Preview' }).click();
    const port = page.getByLabel('Port it listens on');
    await expect.poll(() => port.getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    await page.locator('.field-error').filter({ hasText: 'must be between 1 and 65535' }).waitFor();
    await port.fill('8081');
    await page.getByRole('button', { name: 'Preview' }).click();
    // the dry run meets the existing policy name at step 4: nothing can be created
    await page.getByText('The dry run failed at step 4:').waitFor();
    expect(await page.getByTestId('plan-dial-policy').getAttribute('class')).toContain('plan-failed');
    expect(await page.getByRole('button', { name: 'Create service dup' }).isDisabled()).toBe(true);
    await expect.poll(() => page.getByLabel(/^Name/).getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    expect(await names('/services', 'name = "dup"')).toEqual([]);
  });

  it('works from the keyboard alone: labels, focus order, Enter and Space', async () => {
    await go('/services');
    await page.getByRole('heading', { name: 'Services', level: 1 }).waitFor();
    await go('/service-wizard');
    await page.getByRole('heading', { name: 'New service (wizard)' }).waitFor();
    await expect.poll(focused, { timeout: 10_000 }).toBe('New service (wizard)'); // the heading has focus after navigation
    await tabTo(/^Name/);
    await page.keyboard.type('kb-svc');
    await tabTo(/^Service attributes/);
    await page.keyboard.type('kb');
    await page.keyboard.press('Enter'); // adds the chip, does not submit
    await page.getByRole('button', { name: 'Remove kb' }).waitFor();
    await tabTo(/End-to-end encryption required/);
    await page.keyboard.press('Space');
    expect(await page.getByRole('checkbox', { name: 'End-to-end encryption required' }).isChecked()).toBe(false);
    await tabTo(/Intercept a host name/);
    await tabTo(/^Host name clients use/);
    await page.keyboard.type('kb.lab.internal');
    await tabTo(/^Port clients use/);
    await page.keyboard.press('Control+A');
    await page.keyboard.type('8443');
    await tabTo(/Behind the built-in router/);
    await page.keyboard.press('ArrowDown'); // radios move with the arrow keys
    expect(await page.getByRole('radio', { name: /On a hosting identity/ }).isChecked()).toBe(true);
    await page.keyboard.press('ArrowUp');
    expect(await page.getByRole('radio', { name: /Behind the built-in router/ }).isChecked()).toBe(true);
    await tabTo(/^Address the router connects to/);
    await tabTo(/^Port it listens on/);
    await page.keyboard.type('9090');
    await tabTo(/^Who may dial/);
    await page.keyboard.type('#kb-users');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Remove #kb-users' }).waitFor();
    await tabTo(/^Preview$/, 8);
    await page.keyboard.press('Enter');
    await page.getByText('Dry run passed').waitFor();
    await expect.poll(focused, { timeout: 10_000 }).toMatch(/^The wizard will create \d+ things$/); // focus moved to the preview
    await tabTo(/^Create service kb-svc$/, 4);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'kb-svc', exact: true }).waitFor();
    const svc = (await admin.get(`/services?filter=${encodeURIComponent('name = "kb-svc"')}`)).body.data[0];
    expect(svc).toMatchObject({ encryptionRequired: false, roleAttributes: ['kb'] });
    const configs = (await admin.get(`/services/${svc.id}/configs`)).body.data.map((c: any) => c.data);
    expect(configs).toContainEqual({ protocol: 'tcp', address: '127.0.0.1', port: 9090 });
    expect(configs).toContainEqual({ protocols: ['tcp'], addresses: ['kb.lab.internal'], portRanges: [{ low: 8443, high: 8443 }] });
    await admin.close();
  });
});
