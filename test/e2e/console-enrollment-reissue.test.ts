// Re-issuing an expired enrollment in place, in Chromium: the guided lab's device token and an identity's token, made
// while the controller's (injected) clock stood four hours back, show as expired with one button that gives the same
// identity and enrollment a new token and JWT valid for three hours (POST /enrollments/{id}/refresh in the core); the
// re-issued JWT enrolls with the real `ziti` CLI. Screenshots at 1280×800 and 390 px, no console error.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { tempDir, type TestApp } from '../support/app';
import { ManualClock } from '../support/clock';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';
import { openzitiTools, ZitiCli } from '../interop/tools';

const HOUR = 3_600_000;
const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, any>;

describe('console: re-issue an expired enrollment in place (Chromium)', { timeout: 180_000 }, () => {
  let app: TestApp;
  let page: Page;
  const problems: string[] = [];
  // the network is made four hours ago: the three-hour enrollment tokens made then have expired an hour ago
  const clock = new ManualClock(new Date(Date.now() - 4 * HOUR));
  const tools = openzitiTools();
  // the console's session outlives the clock's jump forward (the default 30 minutes of inactivity would end it)
  const configFile = join(tempDir(), 'weft.yaml');
  writeFileSync(configFile, 'api:\n  session_timeout: 12h\n');

  useConsoleSession(
    async (s) => {
      ({ app, page } = s);
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
    },
    { clock, configFile },
  );

  /** Expiry of a JWT in ms, checked to be about three hours from now. */
  const expectsThreeHours = (jwt: string) => {
    const exp = claims(jwt).exp * 1000;
    expect(exp).toBeGreaterThan(Date.now() + 2.9 * HOUR);
    expect(exp).toBeLessThan(Date.now() + 3.1 * HOUR);
  };

  it("the guided lab's expired device token is re-issued with one click", async () => {
    const lab = page.getByRole('region', { name: /Guided lab/ });
    await lab.waitFor();
    await lab.getByRole('button', { name: 'Create the service' }).click();
    await lab.getByRole('button', { name: 'Create the identity' }).click();
    await lab.getByRole('img', { name: /QR code of the enrollment token/ }).waitFor();
    clock.set(new Date()); // the controller's clock catches up: the token made "four hours ago" has expired
    const token = lab.getByLabel('Enrollment token (JWT)');
    const old = await token.inputValue();
    await lab.getByText(/^This enrollment token expired 1 hour ago\.$/).waitFor();
    await screenshotBothWidths(page, 'lab-expired');

    await lab.getByRole('button', { name: 'Re-issue the token' }).click();
    await expect.poll(() => lab.getByText(/^This enrollment token expired/).count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => token.inputValue(), { timeout: 10_000 }).not.toBe(old);
    const fresh = await token.inputValue();
    expect(claims(fresh).sub).toBe(claims(old).sub);
    expect(claims(fresh).jti).not.toBe(claims(old).jti);
    expectsThreeHours(fresh);
    await lab.getByText(/^Expires .* \(in 3 hours\)\.$/).waitFor();
    expect(problems).toEqual([]);
  });

  it("an identity's expired token: the same identity and enrollment get a new one, which the ziti CLI enrolls with", async () => {
    const admin = await app.adminClient();
    clock.set(new Date(Date.now() - 4 * HOUR));
    const id = await admin.create('/identities', { name: 'tablet', type: 'Device', isAdmin: false, enrollment: { ott: true } });
    clock.set(new Date());
    const before = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott;

    await page.goto(`${app.urls.console}/#/identities/${id}`);
    await page.getByText(/^This enrollment token expired 1 hour ago\.$/).waitFor();
    // the ordinary refresh button is replaced by the re-issue while the token is expired
    expect(await page.getByRole('button', { name: /^Refresh/ }).count()).toBe(0);
    await screenshotBothWidths(page, 'identity-enrollment-expired');
    await page.getByRole('button', { name: 'Re-issue the token' }).click();
    await page.getByRole('button', { name: /^Refresh/ }).waitFor();

    const after = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott;
    expect(after.id).toBe(before.id); // in place: the same enrollment
    expect(after.token).not.toBe(before.token);
    expect(await page.getByLabel('Enrollment token (JWT)').inputValue()).toBe(after.jwt);
    expectsThreeHours(after.jwt);
    await screenshotBothWidths(page, 'identity-enrollment-reissued');

    const cli = new ZitiCli(tools.ziti);
    const jwtFile = join(cli.cwd, 'tablet.jwt');
    writeFileSync(jwtFile, after.jwt);
    await cli.ok('edge', 'enroll', jwtFile, '-o', join(cli.cwd, 'tablet.json'));
    await page.reload();
    await page.getByText('No outstanding enrollment (the identity has enrolled).').waitFor();
    await admin.close();
    expect(problems).toEqual([]);
  });
});
