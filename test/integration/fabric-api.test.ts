// OpenZiti's fabric management API (/fabric/v1) on SQLite and PostgreSQL: routers (edge and transit routers in one
// list, OpenZiti's field names), links (none), circuits (none held here), terminators and services; OpenZiti's
// envelope with meta.pagination; unknown ids 404, bad filters 400; callers without admin rights refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { STORE_KINDS } from '../support/bothStores';
import { createUser, login } from '../support/users';
import { listFabricCircuits, type FabricCircuit, type FabricLive } from '../../src/main/core/dataPlane/index';

let server: PostgresServer | undefined;
afterAll(async () => server?.stop());

describe.each(STORE_KINDS)('fabric API on %s', (kind) => {
  let app: TestApp;
  let admin: ApiClient;
  let user: ApiClient;
  const ids: Record<string, string> = {};
  const fabric = (c: ApiClient, path: string) => c.get(`/fabric/v1${path}`, { api: 'root' });

  beforeAll(async () => {
    let database: string | undefined;
    if (kind === 'postgres') {
      server ??= await startPostgres();
      database = await server.createDatabase();
    }
    app = await startTestApp({ database });
    admin = await app.adminClient();
    ids.edge = await admin.create('/edge-routers', { name: 'er-1', cost: 7 });
    ids.transit = await admin.create('/transit-routers', { name: 'tr-1' });
    ids.svc = await admin.create('/services', { name: 'svc-1', encryptionRequired: true });
    await createUser(admin, 'plain', 'plain-password-1');
    user = (await login(app, 'plain', 'plain-password-1')).client;
  }, 120_000);
  afterAll(async () => {
    await user?.close();
    await admin?.close();
    await app?.stop();
  });

  it('lists edge and transit routers with the fabric fields, the built-in router connected', async () => {
    const r = await fabric(admin, '/routers?limit=100');
    expect(r.status).toBe(200);
    expect(r.body.meta.pagination).toMatchObject({ limit: 100, offset: 0, totalCount: 3 });
    const byName = new Map<string, any>(r.body.data.map((x: any) => [x.name, x]));
    expect(byName.get('er-1')).toMatchObject({ id: ids.edge, cost: 7, connected: false, noTraversal: false, disabled: false, listenerAddresses: [] });
    expect(byName.get('tr-1')).toMatchObject({ id: ids.transit, connected: false });
    const builtin = byName.get(app.router!.name ?? '') ?? r.body.data.find((x: any) => x.id === app.router!.id);
    expect(builtin).toMatchObject({ id: app.router!.id, connected: true, versionInfo: { version: expect.any(String), os: process.platform } });
    for (const x of r.body.data) expect(x).toHaveProperty('_links.self.href', `./routers/${x.id}`);
    const one = await fabric(admin, `/routers/${ids.transit}`);
    expect(one.body.data).toMatchObject({ id: ids.transit, name: 'tr-1', fingerprint: '' });
    const filtered = await fabric(admin, '/routers?filter=' + encodeURIComponent('name = "tr-1"'));
    expect(filtered.body.data.map((x: any) => x.id)).toEqual([ids.transit]);
    expect(filtered.body.meta.pagination.totalCount).toBe(1);
  });

  it('lists no links and no circuits, and services and terminators as the edge API has them', async () => {
    for (const path of ['/links', '/circuits']) {
      const r = await fabric(admin, path);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ data: [], meta: { pagination: { limit: 10, offset: 0, totalCount: 0 } } });
    }
    const svcs = await fabric(admin, '/services?filter=' + encodeURIComponent('name = "svc-1"'));
    expect(svcs.body.data).toEqual([expect.objectContaining({ id: ids.svc, name: 'svc-1', terminatorStrategy: expect.any(String) })]);
    expect((await fabric(admin, `/services/${ids.svc}`)).body.data.name).toBe('svc-1');
    const tid = await admin.create('/terminators', {
      service: ids.svc,
      router: ids.edge,
      binding: 'transport',
      address: 'tcp:127.0.0.1:1',
      identity: 'i-1',
    });
    const terms = await fabric(admin, '/terminators?filter=' + encodeURIComponent('limit none'));
    expect(terms.status).toBe(200);
    expect(terms.body.meta.pagination).toMatchObject({ limit: 500, offset: 0, totalCount: terms.body.data.length });
    expect(terms.body.data.find((t: any) => t.id === tid)).toMatchObject({
      serviceId: ids.svc,
      service: { id: ids.svc, name: 'svc-1' },
      routerId: ids.edge,
      router: { id: ids.edge, name: 'er-1' },
      binding: 'transport',
      instanceId: 'i-1',
      hostId: '',
      cost: 0,
      dynamicCost: 0,
      precedence: 'default',
    });
    expect((await fabric(admin, `/terminators/${tid}`)).body.data.id).toBe(tid);
  });

  it('filters, sorts and pages the circuits the routers hold as any list', async () => {
    // what the routers of a node hold in memory (the interop test has real ones: test/interop/fabric-cli.test.ts)
    const held: FabricCircuit[] = [0, 1, 2].map((i) => ({
      id: `c-${i}`,
      routerId: ids.edge!,
      serviceId: ids.svc!,
      terminatorId: `t-${i}`,
      clientId: i === 1 ? 'someone' : 'other',
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
      path: [ids.edge!],
    }));
    const live: FabricLive = { versions: () => new Map(), circuits: () => held, links: () => [], endCircuit: () => false };
    const all = await listFabricCircuits(app.core.system, live, { filter: 'sort by createdAt desc limit 2' });
    expect(all.data.map((c: any) => c.id)).toEqual(['c-2', 'c-1']);
    expect(all.meta.pagination).toEqual({ limit: 2, offset: 0, totalCount: 3 });
    const one = await listFabricCircuits(app.core.system, live, { filter: 'clientId = "someone"' });
    expect(one.data).toEqual([
      expect.objectContaining({
        id: 'c-1',
        clientId: 'someone',
        service: expect.objectContaining({ id: ids.svc, name: 'svc-1' }),
        terminator: expect.objectContaining({ id: 't-1' }),
        path: { nodes: [expect.objectContaining({ id: ids.edge, name: 'er-1' })], links: [] },
        createdAt: '2026-01-01T00:00:01.000Z',
      }),
    ]);
    const after = await listFabricCircuits(app.core.system, live, { filter: 'createdAt > datetime(2026-01-01T00:00:00Z)' });
    expect(after.meta.pagination.totalCount).toBe(2);
  });

  it('answers unknown ids with 404 and bad filters with 400 in the envelope', async () => {
    for (const path of ['/routers/nope', '/circuits/nope', '/links/nope', '/terminators/nope', '/services/nope']) {
      const r = await fabric(admin, path);
      expect(r.status, path).toBe(404);
      expect(r.body.error).toMatchObject({ code: 'NOT_FOUND', requestId: expect.any(String) });
      expect(r.body.meta).toBeDefined();
    }
    const del = await admin.req('DELETE', '/fabric/v1/circuits/nope', { immediate: false }, { api: 'root' });
    expect(del.status).toBe(404);
    // a Fabric API write is audited as the Management API's are, failures too
    const audited = await admin.get(`/audit-log?filter=${encodeURIComponent('entityId = "nope" and source = "fabric"')}`);
    expect(audited.body.data).toEqual([
      expect.objectContaining({
        action: 'delete',
        entityType: 'circuits',
        route: 'DELETE /circuits/:id',
        outcome: 'failure',
        errorCode: 'NOT_FOUND',
      }),
    ]);
    for (const path of ['/routers', '/circuits', '/links', '/terminators', '/services']) {
      const r = await fabric(admin, `${path}?filter=${encodeURIComponent('name = = 1')}`);
      expect(r.status, path).toBe(400);
      expect(r.body.error.code).toBe('INVALID_FILTER');
    }
    expect((await fabric(admin, '/routers?limit=0')).body.error.code).toBe('INVALID_PAGINATION');
  });

  it('refuses callers without the rights, and callers with no session', async () => {
    for (const path of ['/routers', `/routers/${ids.edge}`, '/links', '/circuits', '/terminators', '/services']) {
      const r = await fabric(user, path);
      expect(r.status, path).toBe(401);
      expect(r.body.error.code).toBe('UNAUTHORIZED');
    }
    expect((await user.req('DELETE', '/fabric/v1/circuits/any', undefined, { api: 'root' })).status).toBe(401);
    const anon = app.client();
    expect((await fabric(anon, '/routers')).status).toBe(401);
    await anon.close();
  });
});
