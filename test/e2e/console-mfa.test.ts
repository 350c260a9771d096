// The MFA page in Chromium: recovery codes copied and downloaded, the count of unused ones, a set shown on the page
// cleared once one of its codes is used elsewhere, "Disable MFA" as a dangerous action that asks first; and a CA
// verified with the signed certificate picked as a file.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, type TestApp } from '../support/app';
import { ManualClock } from '../support/clock';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';
import type { LaunchedBrowser } from '../support/browser';
import { clientCert, externalCa } from '../support/pki';
import { epochSeconds, secretOf, totp, totpStepStart } from '../support/users';

describe('console: MFA page and CA verification from a file (Chromium)', () => {
  const clock = new ManualClock(totpStepStart());
  let app: TestApp;
  let page: Page;
  let browser: LaunchedBrowser;
  const errors: string[] = [];
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);

  useConsoleSession(
    async (s) => {
      ({ app, page, browser } = s);
      page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
      page.on('pageerror', (e) => void errors.push(e.message));
      await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.urls.console! });
    },
    { clock, routerListener: 'off' },
  );

  let secret = '';
  const nextCode = () => {
    clock.advance(30_000); // each TOTP code is accepted once
    return totp(secret, epochSeconds(clock));
  };

  it('copies and downloads new recovery codes, counts the unused ones and clears a set once one of its codes is used', async () => {
    await go('/mfa');
    await page.getByRole('button', { name: 'Start MFA enrollment' }).click();
    secret = secretOf((await page.locator('code.secret').textContent())!.replace(/^/, 'otpauth://totp/x?secret='));
    await page.getByLabel('Code from the app').fill(totp(secret, epochSeconds(clock)));
    await page.getByRole('button', { name: 'Verify and enable MFA' }).click();
    await page.getByText('MFA is enabled for this identity.').waitFor();
    await page.getByText('20 unused recovery codes left.').waitFor();

    await page.getByLabel('Current code to replace the recovery codes').fill(nextCode());
    await page.getByRole('button', { name: 'New recovery codes' }).click();
    const list = page.getByRole('list', { name: 'Recovery codes' });
    await expect.poll(() => list.getByRole('listitem').count()).toBe(20);
    const codes = (await list.getByRole('listitem').allTextContents()).map((c) => c.trim());

    await page.getByRole('button', { name: 'Copy codes' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied the recovery codes.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(codes.join('\n') + '\n');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download codes (.txt)' }).click()]);
    expect(download.suggestedFilename()).toBe('weft-recovery-codes.txt');
    expect(readFileSync((await download.path())!, 'utf8')).toBe(codes.join('\n') + '\n');
    await screenshotBothWidths(page, 'mfa-recovery-codes');

    // a code of this set used to sign in elsewhere: the count drops and the set shown here is cleared
    const client = app.client();
    await client.login(ADMIN_USER, ADMIN_PASSWORD, 'client');
    expect((await client.post('/authenticate/mfa', { code: codes[5] }, { api: 'client' })).status).toBe(200);
    await client.close();
    await page.getByText('19 unused recovery codes left.').waitFor();
    await page.getByText(/A code of the set shown here was used since/).waitFor();
    expect(await list.count()).toBe(0);
    await screenshotBothWidths(page, 'mfa-code-used');
  });

  it('"Disable MFA" is a dangerous action that asks before it acts', async () => {
    const disable = page.getByRole('button', { name: 'Disable MFA', exact: true });
    expect(await disable.getAttribute('class')).toContain('danger');
    await page.getByLabel('Current code (or a recovery code) to disable MFA').fill(nextCode());
    await disable.click();
    const ask = page.getByRole('group', { name: 'Sign-ins will no longer ask for a code. Disable MFA?' });
    await ask.waitFor();
    await screenshotBothWidths(page, 'mfa-disable-confirm');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    expect(await page.getByText('MFA is enabled for this identity.').count()).toBe(1);
    await disable.click();
    await ask.getByRole('button', { name: 'Yes, disable MFA' }).click();
    await page.getByRole('button', { name: 'Start MFA enrollment' }).waitFor();
    const admin = await app.adminClient();
    expect((await admin.get('/current-identity/mfa')).status).toBe(404);
    await admin.close();
  });

  it('verifies a CA with the signed verification certificate picked as a file', async () => {
    const ca = await externalCa('File CA');
    const admin = await app.adminClient();
    const id = await admin.create('/cas', {
      name: 'file-ca',
      certPem: ca.certPem,
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: true,
      identityRoles: [],
    });
    const token = (await admin.get(`/cas/${id}`)).body.data.verificationToken;
    await admin.close();
    await go(`/cas/${id}`);
    await page.getByRole('heading', { name: 'file-ca' }).waitFor();
    const proof = await clientCert(ca, { commonName: token });
    await page
      .getByLabel('Verification certificate file (PEM)')
      .setInputFiles({ name: 'verify.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from(proof.certPem) });
    await expect.poll(() => page.getByLabel('Or paste the signed verification certificate (PEM)').inputValue()).toBe(proof.certPem);
    await screenshotBothWidths(page, 'ca-verify-file');
    await page.getByRole('button', { name: 'Verify CA' }).click();
    await page.getByText('This CA is verified.').waitFor();
    expect(errors).toEqual([]);
  });
});
