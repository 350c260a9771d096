// The built-in router in the stock routers' mesh, both ways a link comes about: with router.link_listener a stock
// `ziti router run` (v1.7.2) learns where the built-in router accepts links and dials it; without one the built-in
// router dials the stock router's link listener (the stock router checks its certificate with VerifyRouter). A circuit
// dialed by an SDK at the stock router ends at a host SDK bound at the built-in router, carried over the link as
// xgress payloads (2 hops). The host may use the
// built-in router only and the dialer the stock router only (edge router policies), so every dial crosses the link.
// The other way too: an SDK at the built-in router dials a host at the stock router. The stock router killed takes
// the link and its circuits with it; restarted, the link comes back (redialed by whichever router dials).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { enrolledRouter, runRouter, stopRouters, type RouterDir } from './stockRouters';
import {
  dialRevokedWithinASecond,
  eventually,
  fabricData,
  openzitiTools,
  sdkClient,
  type ToolProcess,
  withHeldDial as heldDial,
  ZitiCli,
  idByName,
} from './tools';

/** `listener`: the built-in router accepts the link (router.link_listener); `dialer`: it dials the stock router's. */
function linkedSuite(mode: 'listener' | 'dialer'): void {
  describe(`the built-in router linked with a stock router (${mode})`, { timeout: 180_000 }, () => {
    let app: TestApp;
    let admin: ApiClient;
    let cli: ZitiCli;
    let sdk: string;
    let ziti: string;
    let ra: RouterDir;
    const procs: Record<string, ToolProcess> = {};
    const files: Record<string, string> = {};

    const links = (): Promise<any[]> => fabricData(admin, 'links');
    const circuits = (): Promise<any[]> => fabricData(admin, 'circuits');
    const idOf = (kind: string, name: string) => idByName(admin, kind, name);

    /** A host SDK bound to `service` and a client holding a dial to it, for `body`; both stopped afterwards. */
    const withHeldDial = (host: string, client: string, service: string, body: (dialer: ToolProcess) => Promise<void>) =>
      heldDial(sdk, files[host]!, files[client]!, service, body);

    /** One dial echoing `bytes`, byte-identical (the tool checks). */
    async function echoes(client: string, service: string, bytes: number): Promise<void> {
      const out = await sdkClient(sdk, ['dial', '--identity', files[client]!, '--service', service, '--bytes', String(bytes)], 120_000);
      expect(out[0]).toMatchObject({ bytes });
    }

    /** The held dial's circuit, once the finished dials' circuits have ended (their routers report it asynchronously). */
    async function heldCircuit(): Promise<any> {
      const [held] = await eventually(
        async () => {
          const live = await circuits();
          return live.length === 1 ? live : undefined;
        },
        15_000,
        'the held circuit alone',
      );
      return held;
    }

    /** The dialer ends its held dial: the circuit is gone on both routers. */
    async function endsEverywhere(dialer: ToolProcess): Promise<void> {
      dialer.end();
      await dialer.exited;
      await eventually(async () => (await circuits()).length === 0 && app.router!.status().circuits.length === 0, 30_000, 'the circuit gone');
    }

    beforeAll(async () => {
      const tools = openzitiTools();
      sdk = tools.sdkClient;
      ziti = tools.ziti;
      const dir = tempDir('weft-builtin-link-');
      const configFile = join(dir, 'weft.yml');
      writeFileSync(configFile, mode === 'listener' ? 'router:\n  link_listener: tls:127.0.0.1:0\n' : 'router: {}\n');
      app = await startTestApp({ configFile });
      admin = await app.adminClient();
      cli = new ZitiCli(ziti);
      await cli.ok('edge', 'login', app.urls.api, '-u', ADMIN_USER, '-p', ADMIN_PASSWORD, '-y');
      Object.assign(
        files,
        await cli.enrolledIdentities({ host: 'hosts', client: 'clients', 'far-host': 'far-hosts', 'near-client': 'near-clients' }),
      );
      await cli.hostedService('echo', 'hosts', 'clients');
      const builtin = (await admin.get(`/edge-routers/${app.router!.id}`)).body.data.name as string;
      await cli.create('edge-router-policy', 'clients-at-a', '--identity-roles', '#clients', '--edge-router-roles', '#site-a');
      await cli.create('edge-router-policy', 'hosts-at-builtin', '--identity-roles', '#hosts', '--edge-router-roles', `@${builtin}`);
      await cli.create('service-edge-router-policy', 'all-routers', '--service-roles', '#all', '--edge-router-roles', '#all');
      // the other way: a host at the stock router, a dialer at the built-in router
      await cli.hostedService('echo-far', 'far-hosts', 'near-clients');
      await cli.create('edge-router-policy', 'far-hosts-at-a', '--identity-roles', '#far-hosts', '--edge-router-roles', '#site-a');
      await cli.create('edge-router-policy', 'near-clients-at-builtin', '--identity-roles', '#near-clients', '--edge-router-roles', `@${builtin}`);
      ra = await enrolledRouter(ziti, admin, app.urls.ctrl!, 'stock-a', { roleAttributes: ['site-a'], links: true });
      procs.a = runRouter(ziti, ra);
      await eventually(async () => (await admin.get(`/edge-routers/${ra.id}`)).body.data.isOnline === true, 60_000, 'the stock router online');
    }, 180_000);

    afterAll(async () => {
      await stopRouters(procs);
      await admin?.close();
      await app?.stop();
    });

    it('the two routers link: the fabric API and `ziti fabric list links` show it', async () => {
      await eventually(async () => (await links()).length === 1, 60_000, 'a link between the stock router and the built-in router');
      const [link] = await links();
      // the dialer is the link's source
      const [source, dest] = mode === 'listener' ? [ra.id, app.router!.id] : [app.router!.id, ra.id];
      expect(link.sourceRouter.id).toBe(source);
      expect(link.destRouter.id).toBe(dest);
      expect(await cli.ok('fabric', 'list', 'links')).toContain(link.id);
      const router = await fabricData(admin, `routers/${app.router!.id}`);
      expect(router.listenerAddresses).toEqual(mode === 'listener' ? [{ address: app.router!.linkAddress, protocol: 'tls' }] : []);
    });

    it('an SDK at the stock router reaches the host bound at the built-in router: 10 MB byte-identical over the link', async () => {
      await withHeldDial('host', 'client', 'echo', async (dialer) => {
        await echoes('client', 'echo', 10 * 1024 * 1024);
        const held = await heldCircuit();
        expect(held.path.nodes.map((n: any) => n.id)).toEqual([ra.id, app.router!.id]);
        expect(held.path.links.map((l: any) => l.id)).toEqual([(await links())[0].id]);
        // the built-in router shows it in its live view too, as one circuit
        expect(app.router!.status().circuits.map((c) => c.id)).toEqual([held.id]);
        await endsEverywhere(dialer);
      });
    });

    it('an SDK at the built-in router reaches a host bound at the stock router: 10 MB byte-identical over the link', async () => {
      await withHeldDial('far-host', 'near-client', 'echo-far', async (dialer) => {
        await echoes('near-client', 'echo-far', 10 * 1024 * 1024);
        const held = await heldCircuit();
        expect(held.path.nodes.map((n: any) => n.id)).toEqual([app.router!.id, ra.id]);
        expect(held.clientId).toBe(await idOf('identities', 'near-client'));
        await endsEverywhere(dialer);
      });
    });

    it('the stock router killed mid-circuit: the host hears the end, the link and circuit go; restarted, it links again', async () => {
      await withHeldDial('host', 'client', 'echo', async () => {
        expect(app.router!.status().circuits).toHaveLength(1);
        procs.a!.kill('SIGKILL');
        await procs.a!.exited;
        // the link closed under it: the built-in end closes (its host told), the controller ends the circuit
        await eventually(async () => app.router!.status().circuits.length === 0 && (await circuits()).length === 0, 30_000, 'the circuit gone');
        await eventually(async () => (await links()).length === 0 && app.router!.links.linkIds().length === 0, 30_000, 'the link gone');

        procs.a = runRouter(ziti, ra);
        await eventually(async () => (await links()).length === 1, 60_000, 'linked again');
        await echoes('client', 'echo', 1024 * 1024);
      });
    });

    it('a revoked Dial policy closes the circuit at both ends within a second', async () => {
      await withHeldDial('host', 'client', 'echo', async (dialer) => {
        await dialRevokedWithinASecond(admin, cli, sdk, dialer, files.client!, 'echo');
        await eventually(() => app.router!.status().circuits.length === 0, 5_000, 'the built-in end gone');
      });
    });
  });
}

linkedSuite('listener');
linkedSuite('dialer');
