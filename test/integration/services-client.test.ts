import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/clock';
import { Network } from './policies-network';

let net: Network;
// the certificates TLS clients check against the real clock are renewed by this one: it starts at the real time
const clock = new ManualClock(new Date(Math.floor(Date.now() / 60_000) * 60_000));

beforeAll(async () => {
  net = await Network.start({ clock });
});
afterAll(async () => {
  await net.stop();
});

describe('client services', () => {
  it('lists exactly the services granted by Dial/Bind policies, with permissions; others are 404', async () => {
    const me = await net.identity('cs-me', ['cs-eng']);
    const dialOnly = await net.service('cs-dial', ['cs-web']);
    const both = await net.service('cs-both', ['cs-web', 'cs-host']);
    const hidden = await net.service('cs-hidden');
    await net.servicePolicy('cs-dial-p', 'Dial', ['#cs-eng'], ['#cs-web']);
    await net.servicePolicy('cs-bind-p', 'Bind', [`@${me}`], ['#cs-host']);
    const c = await net.login(me);
    const list = await c.get('/services?limit=100', { api: 'client' });
    expect(list.status).toBe(200);
    expect(list.body.meta.pagination.totalCount).toBe(2);
    const byName = Object.fromEntries(list.body.data.map((s: any) => [s.name, s]));
    expect(byName['cs-dial'].permissions).toEqual(['Dial']);
    expect(byName['cs-both'].permissions).toEqual(['Bind', 'Dial']);
    expect(byName['cs-dial']).toMatchObject({ id: dialOnly, encryptionRequired: true, config: {}, configs: [], roleAttributes: ['cs-web'] });
    // no posture checks in this network yet: one placeholder query set per permission
    expect(byName['cs-both'].postureQueries).toEqual([
      { policyId: 'dummy bind policy: no posture checks defined', policyType: 'Bind', isPassing: true, postureQueries: [] },
      { policyId: 'dummy dial policy: no posture checks defined', policyType: 'Dial', isPassing: true, postureQueries: [] },
    ]);
    expect((await c.get(`/services/${both}`, { api: 'client' })).body.data.permissions).toEqual(['Bind', 'Dial']);
    expect((await c.get(`/services/${hidden}`, { api: 'client' })).status).toBe(404);
    const filtered = await c.get(`/services?filter=${encodeURIComponent('name contains "both"')}`, { api: 'client' });
    expect(filtered.body.data.map((s: any) => s.id)).toEqual([both]);
    const rf = await c.get('/services?roleFilter=%23cs-host', { api: 'client' });
    expect(rf.body.data.map((s: any) => s.id)).toEqual([both]);
    const paged = await c.get('/services?limit=1&offset=1', { api: 'client' });
    expect(paged.body.data.map((s: any) => s.name)).toEqual(['cs-dial']);
    expect(paged.body.meta.pagination).toEqual({ limit: 1, offset: 1, totalCount: 2 });
    // the management view of a service shows the caller's own permissions (the admin has none here)
    expect((await net.admin.get(`/services/${both}`)).body.data.permissions).toEqual(['Invalid']);
    // client views are the caller's own: the management API stays closed to a plain identity
    expect((await c.get('/services')).status).toBe(401);
    expect((await c.del(`/services/${both}`, { api: 'client' })).status).toBe(401);
  });

  it('config is merged for the requested config types (by name or id, or all) and identity overrides win', async () => {
    const typeA = await net.admin.create('/config-types', { name: 'cfg-a.v1', schema: {} });
    const typeB = await net.admin.create('/config-types', { name: 'cfg-b.v1', schema: {} });
    const a1 = await net.admin.create('/configs', { name: 'cfg-a1', configTypeId: typeA, data: { v: 'service-a' } });
    const b1 = await net.admin.create('/configs', { name: 'cfg-b1', configTypeId: typeB, data: { v: 'service-b' } });
    const a2 = await net.admin.create('/configs', { name: 'cfg-a2', configTypeId: typeA, data: { v: 'override-a' } });
    const svc = await net.service('cfg-svc', ['cfg-web'], { configs: [a1, b1] });
    const me = await net.identity('cfg-me', ['cfg-eng']);
    await net.servicePolicy('cfg-p', 'Dial', ['#cfg-eng'], ['#cfg-web']);
    const c = await net.login(me, { configTypes: ['cfg-a.v1'] });
    const get = async (q = '') => (await c.get(`/services/${svc}${q}`, { api: 'client' })).body.data.config;
    expect(await get()).toEqual({ 'cfg-a.v1': { v: 'service-a' } });
    expect((await c.get(`/services?configTypes=${typeB}`, { api: 'client' })).body.data[0].config).toEqual({ 'cfg-b.v1': { v: 'service-b' } });
    expect((await c.get('/services?configTypes=all', { api: 'client' })).body.data[0].config).toEqual({
      'cfg-a.v1': { v: 'service-a' },
      'cfg-b.v1': { v: 'service-b' },
    });
    expect((await c.get('/services?configTypes=cfg-a.v1,cfg-b.v1', { api: 'client' })).body.data[0].config).toEqual({
      'cfg-a.v1': { v: 'service-a' },
      'cfg-b.v1': { v: 'service-b' },
    });

    // identity overrides
    expect((await net.admin.post(`/identities/${me}/service-configs`, [{ serviceId: svc, configId: a2 }])).status).toBe(200);
    expect(await get()).toEqual({ 'cfg-a.v1': { v: 'override-a' } });
    const listing = (await net.admin.get(`/identities/${me}/service-configs`)).body.data;
    expect(listing).toEqual([
      {
        config: { _links: { self: { href: `./configs/${a2}` } }, id: a2, name: 'cfg-a2', urlName: 'configs' },
        configId: a2,
        service: { _links: { self: { href: `./services/${svc}` } }, id: svc, name: 'cfg-svc', urlName: 'services' },
        serviceId: svc,
      },
    ]);
    const inUse = await net.admin.del(`/configs/${a2}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.code).toBe('CAN_NOT_DELETE_REFERENCED_ENTITY');
    const badPair = await net.admin.post(`/identities/${me}/service-configs`, [{ serviceId: 'nope', configId: a2 }]);
    expect(badPair.status).toBe(400);
    expect(badPair.body.error.cause.field).toBe('0.serviceId');
    expect((await net.admin.post(`/identities/${me}/service-configs`, [{ serviceId: svc }])).body.error.cause.field).toBe('0.configId');
    expect((await net.admin.post('/identities/nope/service-configs', [{ serviceId: svc, configId: a2 }])).status).toBe(404);
    // removing the pair brings the service's own config back; then the config can go
    expect(
      (
        await net.admin.del(`/identities/${me}/service-configs`, {
          raw: JSON.stringify([{ serviceId: svc, configId: a2 }]),
          contentType: 'application/json',
        })
      ).status,
    ).toBe(200);
    expect(await get()).toEqual({ 'cfg-a.v1': { v: 'service-a' } });
    expect((await net.admin.get(`/identities/${me}/service-configs`)).body.data).toEqual([]);
    expect((await net.admin.del(`/configs/${a2}`)).status).toBe(200);
    // config data changes show at once
    expect((await net.admin.patch(`/configs/${a1}`, { data: { v: 'changed' } })).status).toBe(200);
    expect(await get()).toEqual({ 'cfg-a.v1': { v: 'changed' } });
  });

  it("service-updates lastChangeAt moves whenever the identity's services change, and only then", async () => {
    const me = await net.identity('lc-me', ['lc-eng']);
    const other = await net.identity('lc-other', ['lc-other']);
    const svc = await net.service('lc-svc', ['lc-web']);
    const c = await net.login(me);
    const o = await net.login(other);
    const last = async (client = c) => (await client.get('/current-api-session/service-updates', { api: 'client' })).body.data.lastChangeAt as string;
    const start = await last();
    expect(start).toBe((await c.get('/current-api-session', { api: 'client' })).body.data.createdAt);
    const step = async () => {
      clock.advance(1000);
      return clock.now().toISOString();
    };
    let t = await step();
    const p = await net.servicePolicy('lc-p', 'Dial', ['#lc-eng'], ['#lc-web']);
    expect(await last()).toBe(t);
    const otherBefore = await last(o);
    t = await step();
    await net.admin.patch(`/services/${svc}`, { name: 'lc-svc-renamed' });
    expect(await last()).toBe(t);
    t = await step();
    await net.admin.patch(`/identities/${me}`, { roleAttributes: [] });
    expect(await last()).toBe(t);
    expect(await net.visibleServices(c)).toEqual([]);
    t = await step();
    await net.admin.patch(`/identities/${me}`, { roleAttributes: ['lc-eng'] });
    expect(await last()).toBe(t);
    t = await step();
    await net.admin.patch(`/service-policies/${p}`, { type: 'Bind' });
    expect(await last()).toBe(t);
    t = await step();
    await net.admin.del(`/service-policies/${p}`);
    expect(await last()).toBe(t);
    // none of that concerned the other identity
    expect(await last(o)).toBe(otherBefore);
    // an unrelated policy does not move it either, nor does renaming a policy
    const before = await last();
    await step();
    await net.servicePolicy('lc-unrelated', 'Dial', ['#lc-other'], ['#nothing']);
    const mine = await net.servicePolicy('lc-mine', 'Dial', ['#lc-eng'], ['#lc-web']);
    const withMine = await last();
    expect(withMine > before).toBe(true);
    await step();
    await net.admin.patch(`/service-policies/${mine}`, { name: 'lc-mine-renamed', tags: { x: 'y' } });
    expect(await last()).toBe(withMine);
  });

  it('encryptionRequired is fixed at create', async () => {
    const svc = await net.service('enc-svc', [], { encryptionRequired: false });
    const r = await net.admin.patch(`/services/${svc}`, { encryptionRequired: true });
    expect(r.status).toBe(400);
    expect(r.body.error.cause.field).toBe('encryptionRequired');
    expect((await net.admin.put(`/services/${svc}`, { name: 'enc-svc', encryptionRequired: true })).status).toBe(400);
    expect((await net.admin.get(`/services/${svc}`)).body.data.encryptionRequired).toBe(false);
    expect((await net.admin.post('/services', { name: 'enc-missing' })).body.error.cause.field).toBe('encryptionRequired');
  });

  it("current identity edge routers and a service's edge routers follow the policies", async () => {
    const me = await net.identity('er-me', ['er-eng']);
    const svc = await net.service('er-svc', ['er-web']);
    const r1 = await net.router('er-r1', ['er-a'], { online: true });
    const r2 = await net.router('er-r2', ['er-a', 'er-b']);
    await net.router('er-r3', ['er-b']);
    await net.servicePolicy('er-sp', 'Dial', ['#er-eng'], ['#er-web']);
    await net.edgeRouterPolicy('er-erp', ['#er-eng'], ['#er-a']);
    await net.serviceEdgeRouterPolicy('er-serp', ['#er-web'], ['#er-b']);
    const c = await net.login(me);
    const mine = await c.get('/current-identity/edge-routers', { api: 'client' });
    expect(mine.body.data.map((r: any) => r.name)).toEqual(['er-r1', 'er-r2']);
    expect(mine.body.data[0]).toMatchObject({
      id: r1,
      name: 'er-r1',
      isOnline: true,
      cost: 0,
      disabled: false,
      noTraversal: false,
      syncStatus: expect.any(String),
      supportedProtocols: {},
    });
    const forSvc = await c.get(`/services/${svc}/edge-routers`, { api: 'client' });
    expect(forSvc.status).toBe(200);
    expect(forSvc.body.data.edgeRouters.map((r: any) => r.name)).toEqual(['er-r2']);
    expect(forSvc.body.data.edgeRouters[0]).not.toHaveProperty('id');
    expect((await c.get(`/services/${svc}/edge-routers`, { api: 'client', headers: { 'session-token': 'not-a-jwt' } })).status).toBe(401);
    const s = await c.post('/sessions', { serviceId: svc, type: 'Dial' }, { api: 'client' });
    expect(s.status).toBe(201);
    expect((await c.get(`/services/${svc}/edge-routers`, { api: 'client', headers: { 'session-token': s.body.data.token } })).status).toBe(200);
    const otherId = await net.identity('er-other', ['er-eng']);
    const other = await net.login(otherId);
    expect((await other.get(`/services/${svc}/edge-routers`, { api: 'client', headers: { 'session-token': s.body.data.token } })).status).toBe(401);
    expect((await c.get(`/services/${r2}/edge-routers`, { api: 'client' })).status).toBe(404);
    // a service no edge router serves for this identity: the session is refused
    const unrouted = await net.service('er-unrouted', ['er-web2']);
    await net.servicePolicy('er-sp2', 'Dial', ['#er-eng'], ['#er-web2']);
    await net.serviceEdgeRouterPolicy('er-serp2', ['#er-web2'], ['#er-nothing']);
    expect((await c.get(`/services/${unrouted}/edge-routers`, { api: 'client' })).body.data).toEqual({ edgeRouters: [] });
    const nr = await c.post('/sessions', { serviceId: unrouted }, { api: 'client' });
    expect(nr.status).toBe(400);
    expect(nr.body.error.code).toBe('NO_EDGE_ROUTERS_AVAILABLE');
  });
});
