// The console's view of the routers of a node (core fabricView) on SQLite and PostgreSQL: every edge router with its
// state and whether it is Weft's built-in one, the links between routers by name, every live circuit with its service,
// dialing identity and path as router names (hops = routers − 1), the built-in router's byte counters on its own
// circuits; callers without router or terminator read refused. What the routers hold is built here as FabricLive (the
// e2e test test/e2e/console-stock-routers.test.ts has a real stock router).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { STORE_KINDS } from '../support/bothStores';
import {
  fabricView,
  networkLive,
  type FabricCircuit,
  type FabricLink,
  type FabricLive,
  type LiveDataPlane,
} from '../../src/main/core/dataPlane/index';

let server: PostgresServer | undefined;
afterAll(async () => server?.stop());

describe.each(STORE_KINDS)('console fabric view on %s', (kind) => {
  let app: TestApp;
  let admin: ApiClient;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    let database: string | undefined;
    if (kind === 'postgres') {
      server ??= await startPostgres();
      database = await server.createDatabase();
    }
    app = await startTestApp({ database, consoleAddress: '127.0.0.1:0' });
    admin = await app.adminClient();
    ids.a = await admin.create('/edge-routers', { name: 'er-a' });
    ids.b = await admin.create('/edge-routers', { name: 'er-b' });
    ids.transit = await admin.create('/transit-routers', { name: 'tr-mid' });
    ids.svc = await admin.create('/services', { name: 'svc-far', encryptionRequired: true });
    ids.local = await admin.create('/services', { name: 'svc-near', encryptionRequired: true });
    ids.alice = await admin.create('/identities', { name: 'alice', type: 'User', isAdmin: false });
    ids.bob = await admin.create('/identities', { name: 'bob', type: 'User', isAdmin: false });
  }, 120_000);
  afterAll(async () => {
    await admin?.close();
    await app?.stop();
  });

  function held() {
    const now = app.core.clock.now().getTime();
    const builtin = app.router!.id;
    const circuits: FabricCircuit[] = [
      // two hops: ingress er-a, through the transit router, egress er-b
      {
        id: 'c-far',
        routerId: ids.a!,
        serviceId: ids.svc!,
        terminatorId: 't-far',
        clientId: ids.alice!,
        createdAt: new Date(now - 90_000),
        path: [ids.a!, ids.transit!, ids.b!],
      },
      // on the built-in router alone
      {
        id: 'c-near',
        routerId: builtin,
        serviceId: ids.local!,
        terminatorId: 't-near',
        clientId: ids.bob!,
        createdAt: new Date(now - 5_000),
        path: [builtin],
      },
    ];
    const links: FabricLink[] = [
      { id: 'l-1', srcRouterId: ids.a!, dstRouterId: ids.transit!, protocol: 'tls', cost: 3, state: 'connected' },
      { id: 'l-2', srcRouterId: ids.transit!, dstRouterId: ids.b!, protocol: 'tls', cost: 9, state: 'failed' },
    ];
    const live: FabricLive = { versions: () => new Map(), circuits: () => circuits, links: () => links, endCircuit: () => false };
    // the built-in router's own report of its circuit: its bytes each way
    const own: LiveDataPlane = {
      status: () => ({
        id: builtin,
        url: 'tls://127.0.0.1:1',
        online: true,
        connections: 2,
        terminators: [],
        circuits: [
          {
            id: 'c-near',
            serviceId: ids.local!,
            serviceName: 'svc-near',
            terminatorId: 't-near',
            caller: 'bob',
            callerId: ids.bob!,
            hostKind: 'tcp',
            createdAt: new Date(now - 5_000).toISOString(),
            bytesIn: 1234,
            bytesOut: 5678,
          },
        ],
      }),
    };
    return { live, own };
  }

  it('lists every router with its state and the built-in one marked, the links by name, and each circuit with its path and hops', async () => {
    const { live, own } = held();
    const view = await fabricView(app.core.system, live, own);
    const byName = new Map(view.routers.map((r) => [r.name, r]));
    const builtin = view.routers.find((r) => r.id === app.router!.id);
    expect(builtin).toMatchObject({ isOnline: true, builtin: true, circuits: 1 });
    expect(byName.get('er-a')).toEqual({ id: ids.a, name: 'er-a', isOnline: false, builtin: false, circuits: 1 });
    expect(byName.get('er-b')).toEqual({ id: ids.b, name: 'er-b', isOnline: false, builtin: false, circuits: 1 });
    // edge routers only; online ones first
    expect(view.routers.map((r) => r.name)).toEqual([builtin!.name, 'er-a', 'er-b']);
    expect(view.totalRouters).toBe(3);

    expect(view.links).toEqual([
      { id: 'l-1', src: { id: ids.a, name: 'er-a' }, dst: { id: ids.transit, name: 'tr-mid' }, state: 'connected', cost: 3, protocol: 'tls' },
      { id: 'l-2', src: { id: ids.transit, name: 'tr-mid' }, dst: { id: ids.b, name: 'er-b' }, state: 'failed', cost: 9, protocol: 'tls' },
    ]);

    // oldest first
    expect(view.circuits.map((c) => c.id)).toEqual(['c-far', 'c-near']);
    const [far, near] = view.circuits;
    expect(far).toEqual({
      id: 'c-far',
      service: { id: ids.svc, name: 'svc-far' },
      identity: { id: ids.alice, name: 'alice' },
      terminatorId: 't-far',
      path: [
        { id: ids.a, name: 'er-a' },
        { id: ids.transit, name: 'tr-mid' },
        { id: ids.b, name: 'er-b' },
      ],
      hops: 2,
      createdAt: expect.any(String),
      ageSeconds: 90,
    });
    expect(near).toMatchObject({
      service: { id: ids.local, name: 'svc-near' },
      identity: { id: ids.bob, name: 'bob' },
      path: [{ id: app.router!.id, name: builtin!.name }],
      hops: 0,
      ageSeconds: 5,
      bytesIn: 1234,
      bytesOut: 5678,
      hostKind: 'tcp',
    });
  });

  it('names a router it does not know by its id, and shows the routers alone when nothing is live', async () => {
    const gone: FabricLive = {
      versions: () => new Map(),
      circuits: () => [
        { id: 'c-x', routerId: 'gone', serviceId: 'no-svc', terminatorId: 't', clientId: 'no-one', createdAt: app.core.clock.now(), path: ['gone'] },
      ],
      links: () => [],
      endCircuit: () => false,
    };
    const view = await fabricView(app.core.system, gone);
    expect(view.circuits[0]).toMatchObject({
      path: [{ id: 'gone', name: 'gone' }],
      service: { name: 'no-svc' },
      identity: { name: 'no-one' },
      hops: 0,
    });
    const none = await fabricView(app.core.system, undefined);
    expect(none).toMatchObject({ links: [], circuits: [], totalRouters: 3, totalCircuits: 0 });
    expect(none.routers.every((r) => r.circuits === 0)).toBe(true);
  });

  it("puts every router's circuits with their paths on the network map's live overlay, identities linked only for identity readers", async () => {
    const { live, own } = held();
    const overlay = await networkLive(app.core.system, own, live);
    expect(overlay.router).toMatchObject({ id: app.router!.id, isOnline: true, connections: 2 });
    expect(overlay.circuits).toEqual([
      expect.objectContaining({
        id: 'c-far',
        serviceName: 'svc-far',
        identityId: ids.alice,
        identityName: 'alice',
        path: ['er-a', 'tr-mid', 'er-b'],
        hops: 2,
        bytesIn: undefined,
        ageSeconds: 90,
      }),
      expect.objectContaining({ id: 'c-near', identityName: 'bob', path: [expect.any(String)], hops: 0, bytesIn: 1234, bytesOut: 5678 }),
    ]);
    const routerReader = app.core.ctx({ identityId: 'x', identityName: 'x', isAdmin: false, permissions: new Set(['router', 'terminator']) });
    const plain = await networkLive(routerReader, own, live);
    expect(plain.circuits.map((c) => [c.identityName, c.identityId])).toEqual([
      ['alice', undefined],
      ['bob', undefined],
    ]);
  });

  it("answers the console's network.fabric procedure from the app's own routers", async () => {
    const ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
    const view = await ui.ok('query', 'network.fabric');
    expect(view.routers).toEqual(expect.arrayContaining([expect.objectContaining({ id: app.router!.id, isOnline: true, builtin: true })]));
    expect(view).toMatchObject({ links: [], circuits: [], totalRouters: 3 });
  });

  it('lists the newest 500 circuits of many, and counts them all', async () => {
    const start = app.core.clock.now().getTime() - 600_000;
    const many: FabricCircuit[] = Array.from({ length: 501 }, (_, i) => ({
      id: `m-${String(i).padStart(3, '0')}`,
      routerId: ids.a!,
      serviceId: ids.svc!,
      terminatorId: 't',
      clientId: ids.alice!,
      createdAt: new Date(start + i * 1000),
      path: [ids.a!],
    }));
    const live: FabricLive = { versions: () => new Map(), circuits: () => many, links: () => [], endCircuit: () => false };
    const view = await fabricView(app.core.system, live);
    expect(view.totalCircuits).toBe(501);
    expect(view.circuits).toHaveLength(500);
    expect([view.circuits[0]!.id, view.circuits.at(-1)!.id]).toEqual(['m-001', 'm-500']);
    expect(view.routers.find((r) => r.id === ids.a)!.circuits).toBe(501);
    const overlay = await networkLive(app.core.system, undefined, live);
    expect([overlay.totalCircuits, overlay.circuits.length]).toEqual([501, 500]);
  });

  it('refuses a caller without router read or without terminator read', async () => {
    const { live } = held();
    const caller = (permissions: string[]) => app.core.ctx({ identityId: 'x', identityName: 'x', isAdmin: false, permissions: new Set(permissions) });
    await expect(fabricView(caller(['terminator']), live)).rejects.toMatchObject({ status: 401 });
    await expect(fabricView(caller(['router']), live)).rejects.toMatchObject({ status: 401 });
    const ok = await fabricView(caller(['router', 'terminator']), live);
    expect(ok.circuits).toHaveLength(2);
  });
});
