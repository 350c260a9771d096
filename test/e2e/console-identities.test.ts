// The console in Chromium: an identity with a one-time-token enrollment (its JWT read back from the QR code on the
// page), a third-party CA created and verified, and MFA enrolled by scanning the provisioning QR code.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import jsQR from 'jsqr';
import type { Locator, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, type TestApp } from '../support/app';
import { SCREENSHOTS as SHOTS, screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';
import { ManualClock } from '../support/clock';
import { clientCert, decodeJwt, externalCa } from '../support/pki';
import { epochSeconds, secretOf, totp, totpStepStart } from '../support/users';

/** Decodes the QR code an image on the page shows (from a screenshot of the element, as a phone camera would). */
async function readQr(image: Locator): Promise<string> {
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  const png = PNG.sync.read(await image.screenshot());
  const code = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  if (!code) throw new Error('no QR code found in the image');
  return code.data;
}

describe('console: identities, CAs and MFA (Chromium)', () => {
  const clock = new ManualClock(totpStepStart());
  let app: TestApp;
  let page: Page;
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);

  useConsoleSession(
    async (s) => {
      ({ app, page } = s);
    },
    { clock, routerListener: 'off' },
  ); // the identity list holds only what the tests create (no router identity)

  it('creates an identity with a one-time token; the QR code on the page is its enrollment JWT', async () => {
    await go('/identities');
    await page.getByRole('link', { name: 'New identity' }).click();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('laptop-1');
    await page.getByLabel('Role attributes').fill('staff');
    await page.getByLabel('Role attributes').press('Enter');
    await page.getByRole('radio', { name: 'One-time token (certificate)' }).check();
    await screenshotBothWidths(page, 'identity-new');
    await page.getByRole('button', { name: 'Create identity' }).click();
    await page.getByRole('heading', { name: 'laptop-1' }).waitFor();

    const jwt = await page.getByLabel('Enrollment token (JWT)').inputValue();
    const id = await page.locator('.properties code').first().textContent();
    expect(decodeJwt(jwt).payload).toMatchObject({ em: 'ott', sub: id });
    expect(await readQr(page.getByRole('img', { name: 'QR code of the enrollment token jwt' }))).toBe(jwt);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download laptop-1.jwt' }).click()]);
    expect(download.suggestedFilename()).toBe('laptop-1.jwt');
    expect(readFileSync((await download.path())!, 'utf8')).toBe(jwt);
    // the REST API sees the same enrollment
    const admin = await app.adminClient();
    expect((await admin.get(`/identities/${id}`)).body.data.enrollment.ott.jwt).toBe(jwt);
    await admin.close();
    await screenshotBothWidths(page, 'identity-detail');

    // refreshing the enrollment issues a new JWT (and QR code)
    await page.getByRole('button', { name: /^Refresh/ }).click();
    await expect.poll(() => page.getByLabel('Enrollment token (JWT)').inputValue()).not.toBe(jwt);
    const refreshed = await page.getByLabel('Enrollment token (JWT)').inputValue();
    expect(await readQr(page.getByRole('img', { name: 'QR code of the enrollment token jwt' }))).toBe(refreshed);
  });

  it('edits, disables and enables an identity; field errors show next to the field', async () => {
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Role attributes').fill('emea');
    await page.getByLabel('Role attributes').press('Enter');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    await page.locator('.properties').getByText('staff, emea').waitFor();

    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    await page.getByText('Disabled until enabled again.').waitFor();
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable', exact: true }).waitFor();

    await go('/identities/new');
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('user-without-name');
    await page.getByRole('radio', { name: 'Username and password' }).check();
    await page.getByRole('button', { name: 'Create identity' }).click();
    const field = page.getByLabel('Username to enroll with');
    await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
    await page.locator('.field-error').filter({ hasText: 'username not provided' }).waitFor();
  });

  it('lists identities with server-side filtering and sorting; bad ZitiQL is shown inline', async () => {
    await go('/identities');
    const table = page.getByRole('table', { name: 'Identities' });
    await table.getByRole('link', { name: 'laptop-1' }).waitFor();
    await page.getByLabel('Filter').fill('name = ');
    await page.getByRole('alert').filter({ hasText: 'invalid filter' }).waitFor();
    expect(await page.getByLabel('Filter').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Filter').fill('anyOf(roleAttributes) = "emea"');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Filter').fill('');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    await table.getByRole('button', { name: 'Name' }).click();
    await expect.poll(() => table.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('descending');
    await expect.poll(() => table.locator('tbody tr').first().textContent()).toContain('laptop-1');
    await screenshotBothWidths(page, 'identities');
  });

  it('creates a CA from its PEM, shows the verification token, verifies it with the signed PEM and offers its JWT', async () => {
    const ca = await externalCa('Partner CA');
    await go('/cas/new');
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('partner-ca');
    await page.getByLabel('CA certificate (PEM)').fill(ca.certPem);
    await page.getByRole('button', { name: 'Create CA' }).click();
    await page.getByRole('heading', { name: 'partner-ca' }).waitFor();
    const token = (await page.locator('code.token').textContent())!.trim();
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    await screenshotBothWidths(page, 'ca-unverified');

    const wrong = await clientCert(ca, { commonName: 'not-the-token' });
    await page.getByLabel('Signed verification certificate (PEM)').fill(wrong.certPem);
    await page.getByRole('button', { name: 'Verify CA' }).click();
    await page.getByRole('alert').filter({ hasText: 'must equal the CA verificationToken' }).waitFor();

    const proof = await clientCert(ca, { commonName: token });
    await page.getByLabel('Signed verification certificate (PEM)').fill(proof.certPem);
    await page.getByRole('button', { name: 'Verify CA' }).click();
    await page.getByText('This CA is verified.').waitFor();

    const jwt = await page.getByLabel('CA enrollment token (JWT)').inputValue();
    expect(decodeJwt(jwt).payload).toMatchObject({ em: 'ca' });
    expect(await readQr(page.getByRole('img', { name: 'QR code of the ca enrollment token jwt' }))).toBe(jwt);
    await screenshotBothWidths(page, 'ca-verified');
  });

  it('enrolls the signed-in admin in MFA by scanning the QR code; the next sign-in asks for a code', async () => {
    await go('/mfa');
    await page.getByRole('button', { name: 'Start MFA enrollment' }).click();
    const url = await readQr(page.getByRole('img', { name: 'MFA provisioning QR code' }));
    expect(url).toMatch(/^otpauth:\/\/totp\/weft:Default%20Admin\?secret=/);
    const secret = secretOf(url);
    expect(await page.locator('code.secret').textContent()).toBe(secret);
    expect(await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count()).toBe(20);
    await screenshotBothWidths(page, 'mfa-enroll');
    await page.getByLabel('Code from the app').fill(totp(secret, epochSeconds(clock)));
    await page.getByRole('button', { name: 'Verify and enable MFA' }).click();
    await page.getByText('MFA is enabled for this identity.').waitFor();
    await screenshotBothWidths(page, 'mfa-enabled');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Username').fill(ADMIN_USER);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'console-login-totp.png') });
    clock.advance(30_000); // the enrollment spent this step's code
    await page.getByLabel(/Code from your authenticator app/).fill(totp(secret, epochSeconds(clock)));
    await page.getByRole('button', { name: 'Verify' }).click();
    // signed in fully: back on the page it left, which shows MFA as enabled
    await page.getByText('MFA is enabled for this identity.').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  });
});
