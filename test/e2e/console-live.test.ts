// The console's live traffic page in Chromium: the built-in router online, a terminator bound on it and a circuit
// open through it (bytes and age), updated without a reload; screenshots at 1280×800 and 390 px.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';
import { deviceSession, enrolledDevice, RawEdge, serviceSession } from '../support/edge';
import { EdgeType } from '../../src/main/router/channel/wire';

describe('console: live traffic through the built-in router (Chromium)', () => {
  let app: TestApp;
  let page: Page;
  useConsoleSession(async (s) => {
    ({ app, page } = s);
  });

  it('shows the router online, then a live terminator and circuit as they appear and go', async () => {
    const admin = await app.adminClient();
    const host = await enrolledDevice(app, admin, 'live-host', ['h']);
    const client = await enrolledDevice(app, admin, 'live-client', ['c']);
    const svc = await admin.create('/services', { name: 'live-web', encryptionRequired: false });
    await admin.create('/service-policies', { name: 'b', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#h'], serviceRoles: ['#all'] });
    await admin.create('/service-policies', { name: 'd', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#c'], serviceRoles: ['#all'] });
    await admin.create('/edge-router-policies', { name: 'e', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
    await admin.create('/service-edge-router-policies', { name: 's', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });

    await page.goto(`${app.urls.console}/#/live`);
    await page.getByRole('heading', { name: 'Live traffic' }).waitFor();
    await expect.poll(() => page.getByTestId('router-state').textContent()).toBe('online');
    await page.getByText('No circuit is open.').waitFor();

    const ca = app.core.pki.caBundlePem;
    const hs = await deviceSession(app, host);
    const h = await RawEdge.connect(app.urls.router!, ca, { cert: host.cert, key: host.key });
    await h.hello(hs.token);
    await h.bind(1, (await serviceSession(hs.client, svc, 'Bind')).token);
    const cs = await deviceSession(app, client);
    const c = await RawEdge.connect(app.urls.router!, ca, { cert: client.cert, key: client.key });
    await c.hello(cs.token);
    const connected = c.dial(2, (await serviceSession(cs.client, svc, 'Dial')).token);
    const hostConn = h.accept(await h.until(() => h.received.find((m) => m.contentType === EdgeType.Dial)));
    await connected;
    c.send(2, Buffer.alloc(3000, 1));
    await h.until(() => h.data.find((d) => d.connId === hostConn));
    h.send(hostConn, Buffer.alloc(5000, 2));
    await c.until(() => c.data.find((d) => d.connId === 2));

    // no reload: the page polls
    const terminators = page.getByRole('table', { name: 'Live terminators' });
    await terminators.getByRole('link', { name: 'live-web' }).waitFor();
    await expect.poll(() => terminators.textContent()).toContain('live-host');
    const circuit = page.getByTestId('circuit');
    await circuit.waitFor();
    await expect.poll(() => circuit.textContent()).toMatch(/live-client.*live-web.*2\.9 KiB.*4\.9 KiB/);
    await screenshotBothWidths(page, 'live');

    // the circuit and the terminator go with their connections
    c.close();
    await page.getByText('No circuit is open.').waitFor();
    h.close();
    await page.getByText('No service is bound on this router.').waitFor();
    await Promise.all([hs.client.close(), cs.client.close(), admin.close()]);
  });
});
