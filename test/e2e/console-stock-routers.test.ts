// The console with a real stock OpenZiti router (`ziti router run` v1.7.2 on Weft's control channel) in Chromium: the
// live view lists it online beside the built-in router, and the circuit the real Go SDK opens through it with its path
// (the stock router alone: 0 hops; no bytes, which a stock router does not report); the network map draws it online
// on the map and among the routers, with the circuit's path; killed, it shows offline and its circuit goes, without a
// reload. Screenshots at 1280×800 and 390 px.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { enrolledRouter, runRouter } from '../interop/stockRouters';
import { echoServer, eventually, openzitiTools, ToolProcess, ZitiCli } from '../interop/tools';
import { ADMIN_PASSWORD, ADMIN_USER, tempDir, type TestApp } from '../support/app';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';

describe('console: a stock router and its circuits (Chromium, ziti router run, OpenZiti Go SDK)', () => {
  let app: TestApp;
  let page: Page;
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);

  useConsoleSession(async (s) => {
    ({ app, page } = s);
  });

  it('shows the stock router online and the circuit through it with its path, then offline when it dies', { timeout: 240_000 }, async () => {
    const tools = openzitiTools();
    const admin = await app.adminClient();
    const cli = new ZitiCli(tools.ziti, tempDir('weft-console-stock-'));
    await cli.ok('edge', 'login', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
    const host = await cli.enrolledIdentity('stock-host', ['hosts']);
    const client = await cli.enrolledIdentity('stock-client', ['clients']);
    await cli.create('service', 'stock-echo', '-e', 'ON');
    await cli.create('service-policy', 'stock-bind', 'Bind', '--identity-roles', '#hosts', '--service-roles', '@stock-echo');
    await cli.create('service-policy', 'stock-dial', 'Dial', '--identity-roles', '#clients', '--service-roles', '@stock-echo');
    // only the stock router serves the SDKs
    await cli.create('edge-router-policy', 'stock-only', '--identity-roles', '#all', '--edge-router-roles', '#stock');
    await cli.create('service-edge-router-policy', 'stock-services', '--service-roles', '#all', '--edge-router-roles', '#stock');
    const router = await enrolledRouter(tools.ziti, admin, app.urls.ctrl!, 'stock-r1', { roleAttributes: ['stock'] });
    let routerProc: ToolProcess | undefined = runRouter(tools.ziti, router);
    let server: ToolProcess | undefined;
    let dialer: ToolProcess | undefined;
    try {
      await eventually(
        async () => (await admin.get(`/edge-routers/${router.id}`)).body.data.supportedProtocols?.tls === `tls://127.0.0.1:${router.edgePort}`,
        60_000,
        'the stock router online with its edge listener',
      );

      // live view: both routers, no circuit yet
      await go('/live');
      await page.getByRole('heading', { name: 'Live traffic' }).waitFor();
      const routers = page.getByRole('table', { name: 'Edge routers' });
      const row = (name: string) => routers.getByTestId('fabric-router').filter({ has: page.getByRole('link', { name, exact: true }) });
      const cells = (name: string) => row(name).locator('td').allTextContents();
      await expect.poll(() => cells('stock-r1'), { timeout: 15_000 }).toEqual(['stock-r1', 'online', 'stock', '0']);
      await expect.poll(() => cells('er-builtin')).toEqual(['er-builtin', 'online', 'built-in', '0']);
      await page.getByText('No links between routers').waitFor();
      await page.getByText('No circuit is open.').waitFor();

      // the Go SDK hosts and dials through the stock router: its circuit appears without a reload
      server = await echoServer(tools.sdkClient, host.file, 'stock-echo');
      dialer = new ToolProcess(tools.sdkClient, ['dial', '--identity', client.file, '--service', 'stock-echo', '--hold']);
      await dialer.waitFor((l) => l.holding === true);
      const circuit = page.getByTestId('circuit');
      await circuit.waitFor({ timeout: 15_000 });
      const circuitCells = () => circuit.locator('td').allTextContents();
      await expect
        .poll(circuitCells, { timeout: 10_000 })
        .toEqual(['stock-client', 'stock-echo', 'stock-r1', '0', expect.stringMatching(/\S/), '—', '—', expect.stringMatching(/^\d+s$/)]);
      await expect.poll(() => cells('stock-r1')).toEqual(['stock-r1', 'online', 'stock', '1']);
      await screenshotBothWidths(page, 'live-stock-router');

      // network map: the stock router online on the map and among the routers, the circuit with its path
      await go('/network');
      await page.getByRole('heading', { name: 'Network map' }).waitFor();
      await page.getByRole('button', { name: /^edge router stock-r1 \(#stock\), online/ }).waitFor({ timeout: 15_000 });
      const mesh = page.getByRole('group', { name: 'Routers and links' });
      await mesh.getByRole('img', { name: 'router stock-r1, online, stock router, 1 open circuit' }).waitFor({ timeout: 15_000 });
      await mesh.getByRole('img', { name: "router er-builtin, online, Weft's built-in router" }).waitFor();
      const mapCircuit = page.getByTestId('network-circuit');
      await expect
        .poll(() => mapCircuit.locator('td').allTextContents(), { timeout: 10_000 })
        .toEqual(['stock-client', 'stock-echo', 'stock-r1', '0', '—', '—', expect.stringMatching(/^\d+s$/)]);
      await screenshotBothWidths(page, 'network-map-stock-router');

      // the router dies: offline on the map, its circuit gone
      routerProc.kill('SIGKILL');
      await routerProc.exited;
      routerProc = undefined;
      await mesh.getByRole('img', { name: 'router stock-r1, offline, stock router' }).waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: /^edge router stock-r1 \(#stock\), offline/ }).waitFor();
      await page.getByText('No circuit is open.').waitFor();
      await go('/live');
      await expect.poll(() => cells('stock-r1'), { timeout: 15_000 }).toEqual(['stock-r1', 'offline', 'stock', '0']);
    } finally {
      dialer?.end();
      server?.end();
      routerProc?.kill('SIGKILL');
      await Promise.all([dialer?.exited, server?.exited, routerProc?.exited]);
      await admin.close();
    }
  });
});
