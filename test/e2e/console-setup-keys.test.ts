// Setup keys in the console, in Chromium: a key made with the form is shown once (with the redeem-and-enroll
// command), listed with its uses, expiry and state, redeemed over the Client API (the list follows), and revoked; the
// key is gone after a reload. Screenshots at 1280×800 and 390 px (no sideways overflow), no console error.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { screenshotBothWidths, unlabelledControls, useConsoleSession } from '../support/consoleBrowser';

describe('console: setup keys (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  let admin: ApiClient;
  const problems: string[] = [];

  useConsoleSession(async (s) => {
    ({ app, page } = s);
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
    admin = await app.adminClient();
  });

  it('makes a key shown once, lists it with its uses, and revokes it', async () => {
    await page.goto(`${app.urls.console}/#/setup-keys`);
    await page.getByRole('heading', { name: 'Setup keys', level: 1 }).waitFor();
    await page.getByText('No setup keys yet.').waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
    const form = page.getByRole('form', { name: 'New setup key' });
    await form.getByLabel('Name', { exact: true }).fill('office laptops');
    await form.getByLabel('Uses allowed (empty: unlimited)').fill('3');
    await form.getByLabel('Attributes of the identities it makes (comma separated)').fill('office, #laptops');
    await form.getByLabel("Identity name prefix (default: the key's name)").fill('office-pc');
    await form.getByRole('button', { name: 'Make setup key' }).click();
    const shown = page.getByTestId('setup-key-secret');
    await shown.waitFor();
    const key = await shown.getByLabel('Setup key', { exact: true }).inputValue();
    expect(key).toMatch(/^wsk_/);
    expect(await shown.getByLabel('Or redeem the key over HTTP, then enroll').inputValue()).toContain(`"key":"${key}"`);
    // the key's own enrollment JWT (its jti is the key) as text, a download and a QR code
    const jwt = await shown.getByLabel('Setup key enrollment (JWT)').inputValue();
    expect(JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString())).toMatchObject({ em: 'ott', jti: key });
    await shown.getByRole('img', { name: 'QR code of the setup key enrollment JWT' }).waitFor();
    // the JWT names 127.0.0.1: the notice offers its own address form, beside the key's form, not inside it
    await page.getByRole('form', { name: 'Advertise an address other devices reach' }).waitFor();
    expect(await page.locator('form form').count()).toBe(0);
    const row = page.getByTestId('setup-key').filter({ hasText: 'office laptops' });
    await row.getByText('0 of 3').waitFor();
    await expect.poll(() => row.getAttribute('data-state')).toBe('active');
    expect(await row.textContent()).toContain('#office, #laptops');
    await screenshotBothWidths(page, 'setup-keys');

    // redeemed elsewhere: the list shows the use after a reload, and the key is no longer on the page
    const r = await admin.post('/weft/setup-keys/redeem', { key }, { api: 'client' });
    expect(r.status, r.text).toBe(201);
    await page.reload();
    await row.getByText('1 of 3').waitFor();
    expect(await page.locator('main').textContent()).not.toContain(key);
    expect(await page.getByTestId('setup-key-secret').count()).toBe(0);

    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Revoke office laptops' }).click();
    await expect.poll(() => row.getAttribute('data-state')).toBe('revoked');
    await screenshotBothWidths(page, 'setup-keys-revoked');
    const refused = await admin.post('/weft/setup-keys/redeem', { key }, { api: 'client' });
    expect(refused.status).toBe(401);
    expect(problems).toEqual([]);
  });
});
