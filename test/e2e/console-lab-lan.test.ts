// The phone, in Chromium and with the real OpenZiti programs: the guided lab of a default start (everything on loopback)
// shows that its enrollment token sends devices to 127.0.0.1 and warns that only this machine reaches it; the fix is
// applied in one step from the lab, choosing another address of the machine (127.0.0.2 stands for the LAN address:
// Linux routes all of 127/8 to lo); the token the lab then shows names it in iss and ctrls, and a second process (`ziti
// edge enroll`, then weft-sdk-client on the OpenZiti Go SDK) enrolls with it and dials the lab's app through the
// router at that address. The identity page's token panel shows the same. Screenshots at 1280×800 and 390 px, no
// console error.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';
import { openzitiTools, sdkClient, ZitiCli } from '../interop/tools';

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, any>;

describe('console: the guided lab reaches a phone (Chromium, OpenZiti Go SDK)', { timeout: 180_000 }, () => {
  let app: TestApp;
  let page: Page;
  const problems: string[] = [];
  /** the lab's "web app": echoes what it gets (what weft-sdk-client's dial checks byte for byte) */
  let webApp: Server;
  let webPort: number;
  const tools = openzitiTools();

  beforeAll(async () => {
    webApp = createServer((s) => s.pipe(s));
    await new Promise<void>((done) => webApp.listen(0, '127.0.0.1', done));
    webPort = (webApp.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((done) => webApp.close(() => done())));
  useConsoleSession(async (s) => {
    ({ app, page } = s);
    page.on('console', (m) => {
      // the browser logs the 400 of the address refused on purpose below; the form shows it
      if (m.type() === 'error' && !m.text().includes('status of 400')) problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
  });

  it('warns that the token names loopback, advertises 127.0.0.2 in one step, and a second process enrolls and dials through it', async () => {
    const apiPort = new URL(app.urls.api).port;
    const routerPort = app.router!.url.split(':').pop();
    const lab = page.getByRole('region', { name: /Guided lab/ });
    await lab.waitFor();
    await lab.getByLabel('Where the app runs (address)').fill('127.0.0.1');
    await lab.getByLabel('Its port').fill(String(webPort));
    await lab.getByRole('button', { name: 'Create the service' }).click();
    await lab.getByRole('button', { name: 'Create the identity' }).click();
    await lab.getByRole('img', { name: /QR code of the enrollment token/ }).waitFor();

    // a default start: the token sends devices to loopback, and the lab says what that means
    await lab.getByText(`https://127.0.0.1:${apiPort}`, { exact: true }).waitFor();
    await lab.getByText('Only this machine can reach 127.0.0.1.').waitFor();
    const form = lab.getByRole('form', { name: 'Advertise an address other devices reach' });
    await form.getByText(`the router at tls://127.0.0.1:${routerPort}`).waitFor();
    const token = lab.getByLabel('Enrollment token (JWT)');
    expect(claims(await token.inputValue())).toMatchObject({ iss: `https://127.0.0.1:${apiPort}`, ctrls: [`https://127.0.0.1:${apiPort}`] });
    await screenshotBothWidths(page, 'lab-loopback');

    // an address the machine lacks is refused on the form, and nothing changes
    await form.getByRole('radio', { name: 'Another address' }).check();
    await form.getByLabel('Other address (IP)').fill('198.51.100.7');
    await form.getByRole('button', { name: 'Advertise this address' }).click();
    await form.getByRole('alert').filter({ hasText: '198.51.100.7 is not an address of this machine' }).waitFor();
    expect(await form.getByLabel('Other address (IP)').getAttribute('aria-invalid')).toBe('true');

    // the fix, in one step
    await form.getByLabel('Other address (IP)').fill('127.0.0.2');
    await form.getByRole('button', { name: 'Advertise this address' }).click();
    await lab
      .getByRole('status')
      .filter({ hasText: `Devices now reach the API at https://127.0.0.2:${apiPort} and the router at tls://127.0.0.2:${routerPort}` })
      .waitFor();
    await lab.getByText(`https://127.0.0.2:${apiPort}`, { exact: true }).waitFor();
    const jwt = await token.inputValue();
    expect(claims(jwt)).toMatchObject({ iss: `https://127.0.0.2:${apiPort}`, ctrls: [`https://127.0.0.2:${apiPort}`], em: 'ott' });
    await screenshotBothWidths(page, 'lab-advertised');

    // the phone: another process, with only the JWT the lab shows
    const cli = new ZitiCli(tools.ziti);
    const jwtFile = join(cli.cwd, 'my-phone.jwt');
    const identityFile = join(cli.cwd, 'my-phone.json');
    writeFileSync(jwtFile, jwt);
    await cli.ok('edge', 'enroll', jwtFile, '-o', identityFile);
    const [probe] = await sdkClient(tools.sdkClient, ['probe', '--identity', identityFile, '--service', 'my-web-app']);
    expect(probe!.session.edgeRouters.map((r: { urls: { tls: string } }) => r.urls.tls)).toEqual([`tls://127.0.0.2:${routerPort}`]);
    const dial = await sdkClient(tools.sdkClient, ['dial', '--identity', identityFile, '--service', 'my-web-app', '--bytes', '4096']);
    expect(dial.at(-1)).toMatchObject({ ok: 1, failed: 0 });

    // the identity page's token panel: the enrollment is used now; the lab's step 3 stays
    await lab.getByRole('heading', { name: 'Why my-phone can dial my-web-app' }).waitFor();
    expect(problems).toEqual([]);
  });

  it("an identity's enrollment token panel shows the address it names, with the same warning and fix", async () => {
    const admin = await app.adminClient();
    const id = await admin.create('/identities', { name: 'laptop-2', type: 'Device', isAdmin: false, enrollment: { ott: true } });
    await admin.close();
    await page.goto(`${app.urls.console}/#/identities/${id}`);
    const apiPort = new URL(app.urls.api).port;
    await page.getByText(`https://127.0.0.2:${apiPort}`, { exact: true }).waitFor();
    await page.getByText('Only this machine can reach 127.0.0.2.').waitFor();
    await page.getByRole('form', { name: 'Advertise an address other devices reach' }).waitFor();
    await screenshotBothWidths(page, 'identity-jwt-address');
    expect(problems).toEqual([]);
  });
});
