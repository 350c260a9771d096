// The console's Certificates page in Chromium: the inventory with its expiry badges, and the warning badge an
// identity's certificate gets near its expiry (the app runs on an injected clock, moved forward by the test).
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { parseCertificate } from '../../src/main/core/pki/index';
import type { TestApp } from '../support/app';
import { ManualClock } from '../support/clock';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';
import { enrolledDevice, type Device } from '../support/edge';

const DAY = 86_400_000;
const clock = new ManualClock();

describe('console: certificates', () => {
  let app: TestApp;
  let page: Page;
  let device: Device;
  useConsoleSession(
    async (s) => {
      ({ app, page } = s);
      await app.certificates.check();
      const admin = await app.adminClient();
      device = await enrolledDevice(app, admin, 'console-cert-device');
      await admin.close();
    },
    { clock },
  );
  const row = (name: string) => page.getByRole('table', { name: 'Certificates' }).getByRole('row').filter({ hasText: name });

  it('lists every certificate with its expiry badge, and the dashboard links to it', async () => {
    await page.getByRole('link', { name: 'All certificates' }).click();
    await page.getByRole('heading', { name: 'Certificates' }).waitFor();
    await page.getByText('No certificate expires within 30 days.').waitFor();
    for (const name of ['Root CA', 'Intermediate CA', 'TLS server', 'Built-in router (server)', 'Identity console-cert-device']) {
      await row(name).first().waitFor();
    }
    expect(await row('Identity console-cert-device').locator('.badge').textContent()).toBe('364 days');
    expect(await row('Identity console-cert-device').getAttribute('data-state')).toBe('ok');
  });

  it('five days before the identity certificate expires: a warning badge, a notice, the filter; Weft renewed its own', async () => {
    clock.set(new Date(parseCertificate(device.cert).notAfter.getTime() - 5 * DAY + 60_000));
    const check = await app.certificates.check();
    expect(check).toMatchObject({ serverRenewed: true, routerRenewed: true });
    // the console session ended with the simulated months of inactivity: a new login link
    await page.goto(app.console!.createLoginLink());
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.goto(`${app.urls.console}/#/certificates`);
    await page.getByText('certificate(s) expire within 30 days or have expired.').waitFor();
    const mine = row('Identity console-cert-device');
    expect(await mine.getAttribute('data-state')).toBe('warning-7');
    expect(await mine.locator('.badge').textContent()).toBe('≤ 7 d: 4 days left');
    expect(await mine.locator('.badge').getAttribute('class')).toBe('badge badge-off');
    expect(await row('TLS server').getAttribute('data-state')).toBe('ok');
    await page.getByLabel('Only those with a warning').check();
    await expect.poll(() => page.getByRole('table', { name: 'Certificates' }).getByRole('row').count()).toBeLessThan(6);
    expect(await row('TLS server').count()).toBe(0);
    await mine.waitFor();
    await screenshotBothWidths(page, 'certificates');
  });
});
