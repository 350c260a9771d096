// The console with two real stock OpenZiti routers (`ziti router run` v1.7.2 on Weft's control channel), linked, in
// Chromium: the live view lists them online beside the built-in router, the link between them, and the circuit the
// real Go SDK opens from the first to a host at the second with its path (2 routers: 1 hop; no bytes, which a stock
// router does not report); the network map draws them online with the link as an edge and the circuit's path; the
// second killed, it shows offline, its links and the circuit go, without a reload. The built-in router, with no link
// listener of its own, links to both (it dials theirs): those links are listed and drawn too. Screenshots at 1280×800 and 390 px.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { enrolledRouter, runRouter } from '../interop/stockRouters';
import { echoServer, eventually, openzitiTools, ToolProcess, ZitiCli } from '../interop/tools';
import { ADMIN_PASSWORD, ADMIN_USER, tempDir, type TestApp } from '../support/app';
import { screenshotBothWidths, useConsoleSession } from '../support/consoleBrowser';

describe('console: linked stock routers and their circuits (Chromium, ziti router run, OpenZiti Go SDK)', () => {
  let app: TestApp;
  let page: Page;
  const go = (path: string) => page.goto(`${app.urls.console}/#${path}`);

  useConsoleSession(async (s) => {
    ({ app, page } = s);
  });

  it(
    'shows two linked stock routers, their link and the 2-hop circuit with its path, then the host router offline',
    { timeout: 240_000 },
    async () => {
      const tools = openzitiTools();
      const admin = await app.adminClient();
      const cli = new ZitiCli(tools.ziti, tempDir('weft-console-stock-'));
      await cli.ok('edge', 'login', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
      const host = await cli.enrolledIdentity('stock-host', ['hosts']);
      const client = await cli.enrolledIdentity('stock-client', ['clients']);
      await cli.create('service', 'stock-echo', '-e', 'ON');
      await cli.create('service-policy', 'stock-bind', 'Bind', '--identity-roles', '#hosts', '--service-roles', '@stock-echo');
      await cli.create('service-policy', 'stock-dial', 'Dial', '--identity-roles', '#clients', '--service-roles', '@stock-echo');
      // the client only at stock-r1, the host only at stock-r2: every dial crosses the link
      await cli.create('edge-router-policy', 'clients-r1', '--identity-roles', '#clients', '--edge-router-roles', '#site-a');
      await cli.create('edge-router-policy', 'hosts-r2', '--identity-roles', '#hosts', '--edge-router-roles', '#site-b');
      await cli.create('service-edge-router-policy', 'stock-services', '--service-roles', '#all', '--edge-router-roles', '#stock');
      const router = await enrolledRouter(tools.ziti, admin, app.urls.ctrl!, 'stock-r1', { roleAttributes: ['stock', 'site-a'], links: true });
      const router2 = await enrolledRouter(tools.ziti, admin, app.urls.ctrl!, 'stock-r2', { roleAttributes: ['stock', 'site-b'], links: true });
      const routerProc = runRouter(tools.ziti, router);
      let router2Proc: ToolProcess | undefined = runRouter(tools.ziti, router2);
      let server: ToolProcess | undefined;
      let dialer: ToolProcess | undefined;
      try {
        // their link, and the built-in router's to each of them (it dials their link listeners)
        await eventually(
          async () => (await admin.get('/fabric/v1/links', { api: 'root' })).body.data.length === 3,
          60_000,
          'the stock routers online and linked',
        );

        // live view: both routers, no circuit yet
        await go('/live');
        await page.getByRole('heading', { name: 'Live traffic' }).waitFor();
        const routers = page.getByRole('table', { name: 'Edge routers' });
        const row = (name: string) => routers.getByTestId('fabric-router').filter({ has: page.getByRole('link', { name, exact: true }) });
        const cells = (name: string) => row(name).locator('td').allTextContents();
        await expect.poll(() => cells('stock-r1'), { timeout: 15_000 }).toEqual(['stock-r1', 'online', 'stock', '0']);
        await expect.poll(() => cells('stock-r2')).toEqual(['stock-r2', 'online', 'stock', '0']);
        await expect.poll(() => cells('er-builtin')).toEqual(['er-builtin', 'online', 'built-in', '0']);
        const linkRows = page.getByRole('table', { name: 'Links between routers' }).getByTestId('fabric-link');
        const link = linkRows.filter({ hasNotText: 'er-builtin' });
        await expect.poll(async () => (await link.locator('td').allTextContents()).slice(2)).toEqual(['connected', '1', 'tls']);
        expect((await link.locator('td').allTextContents()).slice(0, 2).sort()).toEqual(['stock-r1', 'stock-r2']);
        const builtinLinks = async () =>
          (await linkRows.filter({ hasText: 'er-builtin' }).allTextContents()).map((t) => t.replace(/connected.*/, '')).sort();
        await expect.poll(builtinLinks).toEqual(['er-builtinstock-r1', 'er-builtinstock-r2']);
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
          .toEqual([
            'stock-client',
            'stock-echo',
            'stock-r1 → stock-r2',
            '1',
            expect.stringMatching(/\S/),
            '—',
            '—',
            expect.stringMatching(/^\d+s$/),
          ]);
        await expect.poll(() => cells('stock-r1')).toEqual(['stock-r1', 'online', 'stock', '1']);
        await expect.poll(() => cells('stock-r2')).toEqual(['stock-r2', 'online', 'stock', '1']);
        await screenshotBothWidths(page, 'live-stock-router');

        // network map: the stock router online on the map and among the routers, the circuit with its path
        await go('/network');
        await page.getByRole('heading', { name: 'Network map' }).waitFor();
        await page.getByRole('button', { name: /^edge router stock-r1 \(.*\), online/ }).waitFor({ timeout: 15_000 });
        const mesh = page.getByRole('group', { name: 'Routers and links' });
        await mesh.getByRole('img', { name: 'router stock-r1, online, stock router, 1 open circuit' }).waitFor({ timeout: 15_000 });
        await mesh.getByRole('img', { name: "router er-builtin, online, Weft's built-in router" }).waitFor();
        await mesh.getByRole('img', { name: /^link stock-r[12] → stock-r[12], connected, cost 1$/ }).waitFor();
        await mesh.getByRole('img', { name: 'link er-builtin → stock-r2, connected, cost 1' }).waitFor();
        const mapCircuit = page.getByTestId('network-circuit');
        await expect
          .poll(() => mapCircuit.locator('td').allTextContents(), { timeout: 10_000 })
          .toEqual(['stock-client', 'stock-echo', 'stock-r1 → stock-r2', '1', '—', '—', expect.stringMatching(/^\d+s$/)]);
        await screenshotBothWidths(page, 'network-map-stock-router');

        // the host's router dies: offline on the map, its link and the circuit over it gone
        router2Proc.kill('SIGKILL');
        await router2Proc.exited;
        router2Proc = undefined;
        await mesh.getByRole('img', { name: 'router stock-r2, offline, stock router' }).waitFor({ timeout: 30_000 });
        await page.getByRole('button', { name: /^edge router stock-r2 \(.*\), offline/ }).waitFor();
        await page.getByText('No circuit is open.').waitFor();
        // what is left: the built-in router's link to stock-r1
        await expect.poll(() => mesh.getByTestId('mesh-link').count()).toBe(1);
        await mesh.getByRole('img', { name: 'link er-builtin → stock-r1, connected, cost 1' }).waitFor();
        await go('/live');
        await expect.poll(() => cells('stock-r2'), { timeout: 15_000 }).toEqual(['stock-r2', 'offline', 'stock', '0']);
        await expect.poll(builtinLinks).toEqual(['er-builtinstock-r1']);
        expect(await link.count()).toBe(0);
      } finally {
        dialer?.end();
        server?.end();
        routerProc.kill('SIGKILL');
        router2Proc?.kill('SIGKILL');
        await Promise.all([dialer?.exited, server?.exited, routerProc.exited, router2Proc?.exited]);
        await admin.close();
      }
    },
  );
});
