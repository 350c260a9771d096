import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Network } from './policies-network';

let net: Network;

beforeAll(async () => {
  net = await Network.start();
});
afterAll(async () => {
  await net.stop();
});

describe('service policies: CRUD and validation', () => {
  it('create → 201; get shows roles (sorted), *RolesDisplay with names, type, semantic and links', async () => {
    const ann = await net.identity('crud-ann', ['crud-eng']);
    const svc = await net.service('crud-svc', ['crud-web']);
    const pc = await net.admin.create('/posture-checks', { name: 'crud-domain', typeId: 'DOMAIN', domains: ['corp.example'] });
    const id = await net.admin.create('/service-policies', {
      name: 'crud-sp',
      type: 'Dial',
      semantic: 'AllOf',
      identityRoles: [`@${ann}`, '#crud-eng'],
      serviceRoles: [`@${svc}`],
      postureCheckRoles: [`@${pc}`],
      tags: { team: 'net' },
    });
    const g = (await net.admin.get(`/service-policies/${id}`)).body.data;
    expect(g).toMatchObject({
      id,
      name: 'crud-sp',
      type: 'Dial',
      semantic: 'AllOf',
      tags: { team: 'net' },
      identityRoles: ['#crud-eng', `@${ann}`],
      identityRolesDisplay: [
        { role: '#crud-eng', name: '#crud-eng' },
        { role: `@${ann}`, name: '@crud-ann' },
      ],
      serviceRoles: [`@${svc}`],
      serviceRolesDisplay: [{ role: `@${svc}`, name: '@crud-svc' }],
      postureCheckRoles: [`@${pc}`],
      postureCheckRolesDisplay: [{ role: `@${pc}`, name: '@crud-domain' }],
    });
    expect(Object.keys(g._links).sort()).toEqual(['identities', 'posture-checks', 'self', 'services']);
    const list = await net.admin.get(`/service-policies?filter=${encodeURIComponent('name = "crud-sp"')}`);
    expect(list.body.data.map((p: any) => p.id)).toEqual([id]);
    expect(list.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'type', 'semantic', 'identityRoles']));
    const anyOf = await net.admin.get(`/service-policies?filter=${encodeURIComponent('anyOf(identityRoles) = "#crud-eng"')}`);
    expect(anyOf.body.data.map((p: any) => p.id)).toEqual([id]);

    // PATCH as OpenZiti reads it: null leaves a field alone, [] clears it
    const before = (await net.admin.get(`/service-policies/${id}`)).body.data.serviceRoles;
    expect((await net.admin.patch(`/service-policies/${id}`, { type: 'Bind', serviceRoles: null })).status).toBe(200);
    expect((await net.admin.get(`/service-policies/${id}`)).body.data).toMatchObject({
      type: 'Bind',
      serviceRoles: before,
      name: 'crud-sp',
      semantic: 'AllOf',
    });
    expect((await net.admin.patch(`/service-policies/${id}`, { serviceRoles: [] })).status).toBe(200);
    expect((await net.admin.get(`/service-policies/${id}`)).body.data).toMatchObject({
      type: 'Bind',
      serviceRoles: [],
      name: 'crud-sp',
      semantic: 'AllOf',
    });
    expect((await net.admin.put(`/service-policies/${id}`, { name: 'crud-sp-2', type: 'Dial', semantic: 'AnyOf' })).status).toBe(200);
    expect((await net.admin.get(`/service-policies/${id}`)).body.data).toMatchObject({
      name: 'crud-sp-2',
      identityRoles: [],
      serviceRoles: [],
      postureCheckRoles: [],
      tags: {},
    });
    expect((await net.admin.del(`/service-policies/${id}`)).status).toBe(200);
    expect((await net.admin.get(`/service-policies/${id}`)).status).toBe(404);
  });

  it('bad roles, semantic and type are field errors that change nothing', async () => {
    const cases: Array<[object, string]> = [
      [{ identityRoles: ['#all', '#x'] }, 'identityRoles'],
      [{ serviceRoles: ['plain'] }, 'serviceRoles'],
      [{ identityRoles: ['@no-such-identity'] }, 'identityRoles'],
      [{ postureCheckRoles: ['@nope'] }, 'postureCheckRoles'],
      [{ semantic: 'OneOf' }, 'semantic'],
      [{ type: 'Invalid' }, 'type'],
      [{ name: '' }, 'name'],
    ];
    for (const [patch, field] of cases) {
      const r = await net.admin.post('/service-policies', { name: 'bad-sp', type: 'Dial', semantic: 'AnyOf', ...patch });
      expect(r.status, JSON.stringify(patch)).toBe(400);
      expect(r.body.error.code).toBe('COULD_NOT_VALIDATE');
      expect(r.body.error.cause.field, JSON.stringify(patch)).toBe(field);
    }
    const missing = await net.admin.post('/service-policies', { name: 'bad-sp', type: 'Dial', identityRoles: ['@nope', '@nada'] });
    expect(missing.body.error.cause.field).toBe('semantic');
    const unknownIds = await net.admin.post('/service-policies', {
      name: 'bad-sp',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['@nope', '#ok'],
    });
    expect(unknownIds.body.error.cause).toMatchObject({ field: 'identityRoles', value: ['nope'], reason: 'no identities found with the given ids' });
    expect((await net.admin.get(`/service-policies?filter=${encodeURIComponent('name = "bad-sp"')}`)).body.data).toEqual([]);
    const dup = await net.admin.create('/service-policies', { name: 'dup-sp', type: 'Dial', semantic: 'AnyOf' });
    const again = await net.admin.post('/service-policies', { name: 'dup-sp', type: 'Bind', semantic: 'AnyOf' });
    expect(again.status).toBe(400);
    expect(again.body.error.cause.field).toBe('name');
    expect((await net.admin.patch(`/service-policies/${dup}`, { edgeRouterRoles: ['#x'], identityRoles: ['nope'] })).body.error.cause.field).toBe(
      'identityRoles',
    );
  });

  it('policies need their permission group', async () => {
    const plainId = await net.identity('sp-plain');
    const plain = await net.login(plainId);
    for (const path of [
      '/service-policies',
      '/edge-router-policies',
      '/service-edge-router-policies',
      '/posture-checks',
      '/terminators',
      '/sessions',
    ]) {
      const r = await plain.get(path);
      expect(r.status, path).toBe(401);
    }
    const readerId = await net.identity('sp-reader', [], { permissions: ['service-policy.read'] });
    const reader = await net.login(readerId);
    expect((await reader.get('/service-policies')).status).toBe(200);
    expect((await reader.post('/service-policies', { name: 'x', type: 'Dial', semantic: 'AnyOf' })).status).toBe(401);
    expect((await reader.get('/edge-router-policies')).status).toBe(401);
  });
});

describe('who a policy reaches', () => {
  it('AllOf needs every attribute, AnyOf any of them; ids always match; #all matches everyone', async () => {
    const both = await net.identity('m-both', ['m-red', 'm-blue']);
    const red = await net.identity('m-red', ['m-red']);
    const blue = await net.identity('m-blue', ['m-blue']);
    const none = await net.identity('m-none');
    const allOf = await net.servicePolicy('m-allof', 'Dial', ['#m-red', '#m-blue'], [], { semantic: 'AllOf' });
    const anyOf = await net.servicePolicy('m-anyof', 'Dial', ['#m-red', '#m-blue'], [], { semantic: 'AnyOf' });
    const withId = await net.servicePolicy('m-id', 'Dial', ['#m-red', `@${none}`], [], { semantic: 'AllOf' });
    const all = await net.servicePolicy('m-all', 'Dial', ['#all'], []);
    expect(await net.ids(`/service-policies/${allOf}/identities`)).toEqual([both]);
    expect(await net.ids(`/service-policies/${anyOf}/identities`)).toEqual([both, red, blue].sort());
    expect(await net.ids(`/service-policies/${withId}/identities`)).toEqual([both, red, none].sort());
    const everyone = await net.ids(`/service-policies/${all}/identities`);
    expect(everyone).toEqual(expect.arrayContaining([both, red, blue, none]));
    expect(everyone.length).toBe((await net.admin.get('/identities')).body.meta.pagination.totalCount);
    // the reverse listings agree
    expect(await net.ids(`/identities/${blue}/service-policies`)).toEqual([anyOf, all].sort());
    expect(await net.ids(`/identities/${none}/service-policies`)).toEqual([withId, all].sort());
    // attribute changes move identities in and out at once
    expect((await net.admin.patch(`/identities/${blue}`, { roleAttributes: ['m-blue', 'm-red'] })).status).toBe(200);
    expect(await net.ids(`/service-policies/${allOf}/identities`)).toEqual([both, blue].sort());
    expect((await net.admin.patch(`/identities/${both}`, { roleAttributes: [] })).status).toBe(200);
    expect(await net.ids(`/service-policies/${allOf}/identities`)).toEqual([blue]);
    expect(await net.ids(`/service-policies/${anyOf}/identities`)).toEqual([red, blue].sort());
    // a new identity is matched by #all without any attribute
    const late = await net.identity('m-late');
    expect(await net.ids(`/service-policies/${all}/identities`)).toContain(late);
    expect(await net.ids(`/service-policies/${anyOf}/identities`)).not.toContain(late);
    // role filters on identity lists use the same semantics
    const rf = await net.admin.get('/identities?roleFilter=%23m-red&roleFilter=%23m-blue&roleSemantic=AllOf&limit=100');
    expect(rf.body.data.map((i: any) => i.id)).toEqual([blue]);
  });

  it('service, edge router and posture-check sides and their reverse listings', async () => {
    const s1 = await net.service('side-s1', ['side-a']);
    const s2 = await net.service('side-s2', ['side-b']);
    const r1 = await net.router('side-r1', ['side-ra']);
    const r2 = await net.router('side-r2', ['side-rb']);
    const i1 = await net.identity('side-i1', ['side-ia']);
    const pc = await net.admin.create('/posture-checks', {
      name: 'side-pc',
      typeId: 'MAC',
      macAddresses: ['aa:bb:cc:dd:ee:ff'],
      roleAttributes: ['side-pa'],
    });
    const sp = await net.servicePolicy('side-sp', 'Bind', ['#side-ia'], ['#side-a'], { postureCheckRoles: ['#side-pa'] });
    const erp = await net.edgeRouterPolicy('side-erp', ['#side-ia'], ['#side-ra']);
    const serp = await net.serviceEdgeRouterPolicy('side-serp', ['#side-a', '#side-b'], ['#side-rb']);
    expect(await net.ids(`/service-policies/${sp}/services`)).toEqual([s1]);
    expect(await net.ids(`/service-policies/${sp}/posture-checks`)).toEqual([pc]);
    expect(await net.ids(`/edge-router-policies/${erp}/edge-routers`)).toEqual([r1]);
    expect(await net.ids(`/edge-router-policies/${erp}/identities`)).toEqual([i1]);
    expect(await net.ids(`/service-edge-router-policies/${serp}/services`)).toEqual([s1, s2].sort());
    expect(await net.ids(`/service-edge-router-policies/${serp}/edge-routers`)).toEqual([r2]);
    expect(await net.ids(`/services/${s1}/service-policies`)).toEqual([sp]);
    expect(await net.ids(`/services/${s1}/service-edge-router-policies`)).toEqual([serp]);
    expect(await net.ids(`/services/${s2}/edge-routers`)).toEqual([r2]);
    expect(await net.ids(`/services/${s1}/identities`)).toEqual([i1]);
    expect(await net.ids(`/services/${s1}/identities?policyType=bind`)).toEqual([i1]);
    expect(await net.ids(`/services/${s1}/identities?policyType=dial`)).toEqual([]);
    expect(await net.ids(`/identities/${i1}/services`)).toEqual([s1]);
    expect(await net.ids(`/identities/${i1}/services?policyType=dial`)).toEqual([]);
    expect(await net.ids(`/identities/${i1}/edge-routers`)).toEqual([r1]);
    expect(await net.ids(`/identities/${i1}/edge-router-policies`)).toEqual([erp]);
    expect(await net.ids(`/edge-routers/${r1}/edge-router-policies`)).toEqual([erp]);
    expect(await net.ids(`/edge-routers/${r1}/identities`)).toEqual([i1]);
    expect(await net.ids(`/edge-routers/${r2}/service-edge-router-policies`)).toEqual([serp]);
    expect(await net.ids(`/edge-routers/${r2}/services`)).toEqual([s1, s2].sort());
    expect(await net.ids(`/posture-checks/${pc}/service-policies`)).toEqual([sp]);
    expect((await net.admin.get(`/services/${s1}/identities?policyType=both`)).status).toBe(400);
    expect((await net.admin.get('/identities/nope/services')).status).toBe(404);
    // moving a router between attributes moves it between policies
    expect((await net.admin.patch(`/edge-routers/${r2}`, { roleAttributes: ['side-ra'] })).status).toBe(200);
    expect(await net.ids(`/edge-router-policies/${erp}/edge-routers`)).toEqual([r1, r2].sort());
    expect(await net.ids(`/services/${s2}/edge-routers`)).toEqual([]);
  });

  it('role-attribute listings and roleFilter for services, edge routers and posture checks', async () => {
    await net.service('rf-s1', ['rf-x', 'rf-y']);
    const s2 = await net.service('rf-s2', ['rf-y']);
    const r = await net.router('rf-r', ['rf-edge']);
    const pc = await net.admin.create('/posture-checks', { name: 'rf-pc', typeId: 'DOMAIN', domains: ['d'], roleAttributes: ['rf-posture'] });
    expect((await net.admin.get('/service-role-attributes?limit=500')).body.data).toEqual(expect.arrayContaining(['rf-x', 'rf-y']));
    expect((await net.admin.get('/edge-router-role-attributes?limit=500')).body.data).toContain('rf-edge');
    const pra = await net.admin.get(`/posture-check-role-attributes?filter=${encodeURIComponent('id contains "rf-"')}`);
    expect(pra.body.data).toEqual(['rf-posture']);
    const svc = await net.admin.get('/services?roleFilter=%23rf-y&roleFilter=%23rf-x&roleSemantic=AnyOf&limit=100');
    expect(svc.body.data.map((s: any) => s.name).sort()).toEqual(['rf-s1', 'rf-s2']);
    const svcAll = await net.admin.get(`/services?roleFilter=%23rf-y&roleFilter=%40${s2}&roleSemantic=AllOf&limit=100`);
    expect(svcAll.body.data.map((s: any) => s.name).sort()).toEqual(['rf-s1', 'rf-s2']);
    expect((await net.admin.get('/edge-routers?roleFilter=%23rf-edge')).body.data.map((x: any) => x.id)).toEqual([r]);
    expect((await net.admin.get('/posture-checks?roleFilter=%23rf-posture')).body.data.map((x: any) => x.id)).toEqual([pc]);
    expect((await net.admin.get('/services?roleFilter=bad')).status).toBe(400);
  });
});

describe('edge router policies', () => {
  it('tunneler-enabled routers get a Router identity and a system policy that cannot be edited or deleted', async () => {
    const r = await net.admin.create('/edge-routers', { name: 'tun-router', isTunnelerEnabled: true });
    const policy = (await net.admin.get(`/edge-router-policies/${r}`)).body.data;
    expect(policy).toMatchObject({
      id: r,
      name: `edge-router-${r}-system`,
      isSystem: true,
      semantic: 'AnyOf',
      identityRoles: [`@${r}`],
      edgeRouterRoles: [`@${r}`],
      identityRolesDisplay: [{ role: `@${r}`, name: '@tun-router' }],
      edgeRouterRolesDisplay: [{ role: `@${r}`, name: '@tun-router' }],
    });
    expect((await net.admin.get(`/identities/${r}`)).body.data).toMatchObject({ name: 'tun-router', typeId: 'Router' });
    expect(await net.ids(`/identities/${r}/edge-routers`)).toEqual([r]);
    const upd = await net.admin.patch(`/edge-router-policies/${r}`, { name: 'mine' });
    expect(upd.status).toBe(409);
    expect(upd.body.error.code).toBe('ENTITY_CAN_NOT_BE_UPDATED');
    const del = await net.admin.del(`/edge-router-policies/${r}`);
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe('ENTITY_CAN_NOT_BE_DELETED');
    expect(
      (await net.admin.get(`/edge-router-policies?filter=${encodeURIComponent('isSystem = true')}&limit=500`)).body.data.map((p: any) => p.id),
    ).toContain(r);
    // renaming the router renames its identity; turning tunneling off removes both
    expect((await net.admin.patch(`/edge-routers/${r}`, { name: 'tun-router-2' })).status).toBe(200);
    expect((await net.admin.get(`/identities/${r}`)).body.data.name).toBe('tun-router-2');
    expect((await net.admin.patch(`/edge-routers/${r}`, { isTunnelerEnabled: false })).status).toBe(200);
    expect((await net.admin.get(`/edge-router-policies/${r}`)).status).toBe(404);
    expect((await net.admin.get(`/identities/${r}`)).status).toBe(404);
    // and deleting a tunneler-enabled router removes them too
    expect((await net.admin.patch(`/edge-routers/${r}`, { isTunnelerEnabled: true })).status).toBe(200);
    expect((await net.admin.get(`/edge-router-policies/${r}`)).status).toBe(200);
    expect((await net.admin.del(`/edge-routers/${r}`)).status).toBe(200);
    expect((await net.admin.get(`/edge-router-policies/${r}`)).status).toBe(404);
    expect((await net.admin.get(`/identities/${r}`)).status).toBe(404);
  });

  it('edge router policy CRUD and validation', async () => {
    const r = await net.router('erp-crud-r');
    const id = await net.admin.create('/edge-router-policies', {
      name: 'erp-crud',
      semantic: 'AllOf',
      edgeRouterRoles: [`@${r}`],
      identityRoles: ['#all'],
    });
    expect((await net.admin.get(`/edge-router-policies/${id}`)).body.data).toMatchObject({
      name: 'erp-crud',
      isSystem: false,
      edgeRouterRoles: [`@${r}`],
      edgeRouterRolesDisplay: [{ role: `@${r}`, name: '@erp-crud-r' }],
      identityRoles: ['#all'],
      identityRolesDisplay: [{ role: '#all', name: '#all' }],
    });
    const bad = await net.admin.post('/edge-router-policies', { name: 'erp-bad', semantic: 'AllOf', edgeRouterRoles: ['@missing'] });
    expect(bad.body.error.cause).toMatchObject({ field: 'edgeRouterRoles', reason: 'no routers found with the given ids' });
    expect((await net.admin.post('/edge-router-policies', { name: 'erp-bad' })).body.error.cause.field).toBe('semantic');
    expect((await net.admin.del(`/edge-router-policies/${id}`)).status).toBe(200);
    const serp = await net.admin.create('/service-edge-router-policies', {
      name: 'serp-crud',
      semantic: 'AnyOf',
      serviceRoles: ['#x'],
      edgeRouterRoles: ['#y'],
    });
    expect((await net.admin.get(`/service-edge-router-policies/${serp}`)).body.data).toMatchObject({
      serviceRoles: ['#x'],
      serviceRolesDisplay: [{ role: '#x', name: '#x' }],
      edgeRouterRoles: ['#y'],
    });
    expect((await net.admin.put(`/service-edge-router-policies/${serp}`, { name: 'serp-crud', semantic: 'AllOf' })).status).toBe(200);
    expect((await net.admin.get(`/service-edge-router-policies/${serp}`)).body.data).toMatchObject({
      semantic: 'AllOf',
      serviceRoles: [],
      edgeRouterRoles: [],
    });
  });
});
