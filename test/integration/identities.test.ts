import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { authPolicyBody, OPEN_PRIMARY } from '../support/users';

let app: TestApp;
let admin: ApiClient;

useTestApp((a, c) => ((app = a), (admin = c)));

describe('identities', () => {
  it('create → 201 {id,_links}; get returns every seed field', async () => {
    const r = await admin.post('/identities', {
      name: 'laptop-1',
      type: 'Device',
      isAdmin: false,
      roleAttributes: ['sales', 'emea'],
      tags: { env: 'prod', pinned: true, none: null },
      appData: { owner: 'ann' },
      defaultHostingCost: 10,
      defaultHostingPrecedence: 'required',
      externalId: 'ext-1',
      serviceHostingCosts: { svcA: 5 },
      serviceHostingPrecedences: { svcA: 'failed' },
      permissions: ['identity.read'],
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ id: expect.any(String), _links: { self: { href: `./identities/${r.body.data.id}` } } });
    const id = r.body.data.id;
    const g = (await admin.get(`/identities/${id}`)).body.data;
    expect(g).toMatchObject({
      id,
      name: 'laptop-1',
      typeId: 'Device',
      type: { entity: 'identity-types', id: 'Device', name: 'Device' },
      isAdmin: false,
      isDefaultAdmin: false,
      roleAttributes: ['sales', 'emea'],
      tags: { env: 'prod', pinned: true, none: null },
      appData: { owner: 'ann' },
      defaultHostingCost: 10,
      defaultHostingPrecedence: 'required',
      externalId: 'ext-1',
      serviceHostingCosts: { svcA: 5 },
      serviceHostingPrecedences: { svcA: 'failed' },
      permissions: ['identity.read'],
      authPolicyId: 'default',
      authPolicy: { id: 'default', name: 'Default', entity: 'auth-policies' },
      authenticators: {},
      disabled: false,
      disabledAt: null,
      disabledUntil: null,
      hasApiSession: false,
      isMfaEnabled: false,
      enrollment: expect.any(Object),
      envInfo: {},
      sdkInfo: {},
      interfaces: [],
      hasEdgeRouterConnection: false,
      edgeRouterConnectionStatus: 'offline',
    });
    expect(g.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(g._links.self.href).toBe(`./identities/${id}`);
  });

  it('PUT replaces (unset optional fields reset), PATCH changes only what is given', async () => {
    const id = await admin.create('/identities', {
      name: 'put-patch',
      type: 'User',
      isAdmin: false,
      roleAttributes: ['a'],
      tags: { k: 'v' },
      defaultHostingCost: 7,
    });
    expect((await admin.patch(`/identities/${id}`, { roleAttributes: ['b', 'c'] })).status).toBe(200);
    let g = (await admin.get(`/identities/${id}`)).body.data;
    expect(g).toMatchObject({ roleAttributes: ['b', 'c'], tags: { k: 'v' }, defaultHostingCost: 7, name: 'put-patch' });
    const put = await admin.put(`/identities/${id}`, { name: 'put-patch-2', type: 'Device', isAdmin: false });
    expect(put.status).toBe(200);
    expect(put.body.data).toEqual({});
    g = (await admin.get(`/identities/${id}`)).body.data;
    expect(g).toMatchObject({ name: 'put-patch-2', typeId: 'Device', roleAttributes: [], tags: {}, defaultHostingCost: 0 });
    const missing = await admin.put(`/identities/${id}`, { name: 'x', type: 'User' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.cause.field).toBe('isAdmin');
    expect((await admin.patch(`/identities/${id}`, { tags: null })).status).toBe(200);
    expect((await admin.get(`/identities/${id}`)).body.data.tags).toEqual({});
    expect((await admin.patch('/identities/nope', { name: 'z' })).status).toBe(404);
  });

  it('names are unique; a duplicate is a field error and changes nothing', async () => {
    await admin.create('/identities', { name: 'dup', type: 'User', isAdmin: false });
    const r = await admin.post('/identities', { name: 'dup', type: 'User', isAdmin: false });
    expect(r.status).toBe(400);
    expect(r.body.error.cause.field).toBe('name');
    expect((await admin.get('/identities?filter=' + encodeURIComponent('name = "dup"'))).body.data).toHaveLength(1);
  });

  it('rejects an unknown auth policy and accepts a real one', async () => {
    const bad = await admin.post('/identities', { name: 'ap', type: 'User', isAdmin: false, authPolicyId: 'nope' });
    expect(bad.body.error.cause.field).toBe('authPolicyId');
    const ap = await admin.create(
      '/auth-policies',
      authPolicyBody('strict', {
        cert: { allowExpiredCerts: false },
        extJwt: { allowed: false },
        updb: {
          minPasswordLength: 8,
          requireSpecialChar: true,
          requireNumberChar: true,
          requireMixedCase: true,
          maxAttempts: 3,
          lockoutDurationMinutes: 5,
        },
      }),
    );
    const id = await admin.create('/identities', { name: 'ap', type: 'User', isAdmin: false, authPolicyId: ap });
    expect((await admin.get(`/identities/${id}`)).body.data.authPolicy.name).toBe('strict');
    const del = await admin.del(`/auth-policies/${ap}`);
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe('CAN_NOT_DELETE_REFERENCED_ENTITY');
  });

  it('the default admin cannot be deleted or demoted', async () => {
    const me = (await admin.get('/current-identity')).body.data;
    const del = await admin.del(`/identities/${me.id}`);
    expect(del.status).toBe(409);
    const demote = await admin.patch(`/identities/${me.id}`, { isAdmin: false });
    expect(demote.status).toBe(400);
    expect(demote.body.error.cause.field).toBe('isAdmin');
    expect((await admin.get(`/identities/${me.id}`)).body.data.isAdmin).toBe(true);
  });

  it('delete removes the identity, its authenticators and sessions', async () => {
    const id = await admin.create('/identities', { name: 'to-delete', type: 'User', isAdmin: false, roleAttributes: ['gone'] });
    await admin.create('/authenticators', { method: 'updb', identityId: id, username: 'to-delete', password: 'password-1' });
    const c = app.client();
    await c.login('to-delete', 'password-1');
    expect((await admin.del(`/identities/${id}`)).status).toBe(200);
    expect((await admin.get(`/identities/${id}`)).status).toBe(404);
    expect((await c.get('/current-identity')).status).toBe(401);
    expect((await admin.get('/identity-role-attributes')).body.data).not.toContain('gone');
    await c.close();
  });

  it('role attribute listing, roleFilter and roleSemantic', async () => {
    const a = await admin.create('/identities', { name: 'rf-a', type: 'User', isAdmin: false, roleAttributes: ['rf-x', 'rf-y'] });
    const b = await admin.create('/identities', { name: 'rf-b', type: 'User', isAdmin: false, roleAttributes: ['rf-x'] });
    const attrs = (await admin.get('/identity-role-attributes?limit=500')).body;
    expect(attrs.data).toEqual(expect.arrayContaining(['rf-x', 'rf-y']));
    expect(new Set(attrs.data).size).toBe(attrs.data.length);
    expect((await admin.get('/identity-role-attributes?filter=' + encodeURIComponent('id contains "rf-"'))).body.data).toEqual(['rf-x', 'rf-y']);
    const names = async (q: string) => (await admin.get('/identities?limit=500&' + q)).body.data.map((i: any) => i.name).sort();
    expect(await names('roleFilter=%23rf-x&roleFilter=%23rf-y')).toEqual(['rf-a']);
    expect(await names('roleFilter=%23rf-x&roleFilter=%23rf-y&roleSemantic=AnyOf')).toEqual(['rf-a', 'rf-b']);
    expect(await names(`roleFilter=%40${b}`)).toEqual(['rf-b']);
    expect((await names('roleFilter=%23all')).length).toBeGreaterThan(2);
    const bad = await admin.get('/identities?roleFilter=nohash');
    expect(bad.status).toBe(400);
    expect((await admin.get('/identities?roleFilter=%23rf-x&roleSemantic=Some')).body.error.cause.field).toBe('roleSemantic');
    void a;
  });

  it('identity types are listed and read-only', async () => {
    const r = await admin.get('/identity-types');
    expect(r.body.data.map((t: any) => t.name).sort()).toEqual(['Default', 'Device', 'Router', 'Service', 'User']);
    expect((await admin.get('/identity-types/User')).body.data).toMatchObject({ id: 'User', name: 'User' });
    expect((await admin.post('/identity-types', { name: 'X' })).status).toBe(405);
  });
});

describe('authenticators (updb)', () => {
  it('management CRUD and an identity listing; hashes are never returned', async () => {
    const id = await admin.create('/identities', { name: 'auth-crud', type: 'User', isAdmin: false });
    const aid = await admin.create('/authenticators', { method: 'updb', identityId: id, username: 'auth-crud', password: 'first-pass' });
    const a = (await admin.get(`/authenticators/${aid}`)).body.data;
    expect(a).toMatchObject({ method: 'updb', identityId: id, username: 'auth-crud', identity: { id, name: 'auth-crud' } });
    expect(JSON.stringify(a)).not.toContain('argon2');
    expect((await admin.get(`/identities/${id}/authenticators`)).body.data.map((x: any) => x.id)).toEqual([aid]);
    expect((await admin.get(`/identities/${id}`)).body.data.authenticators.updb).toEqual({ id: aid, username: 'auth-crud' });
    const again = await admin.post('/authenticators', { method: 'updb', identityId: id, username: 'other-name', password: 'first-pass' });
    expect(again.status).toBe(400);
    expect((await admin.put(`/authenticators/${aid}`, { username: 'auth-crud2', password: 'second-pass' })).status).toBe(200);
    const c = app.client();
    await c.login('auth-crud2', 'second-pass');
    expect((await admin.patch(`/authenticators/${aid}`, { password: 'third-pass' })).status).toBe(200);
    expect((await c.post('/authenticate?method=password', { username: 'auth-crud2', password: 'second-pass' })).status).toBe(401);
    await c.login('auth-crud2', 'third-pass');
    expect((await admin.del(`/authenticators/${aid}`)).status).toBe(200);
    expect((await c.post('/authenticate?method=password', { username: 'auth-crud2', password: 'third-pass' })).status).toBe(401);
    expect(
      (await admin.post('/authenticators', { method: 'updb', identityId: 'nope', username: 'zzzz', password: 'abcdef' })).body.error.cause.field,
    ).toBe('identityId');
    await c.close();
  });

  it('self-service: list/get own authenticators, change password with currentPassword', async () => {
    const id = await admin.create('/identities', { name: 'self-service', type: 'User', isAdmin: false });
    const aid = await admin.create('/authenticators', { method: 'updb', identityId: id, username: 'self-service', password: 'old-password' });
    const c = app.client();
    await c.login('self-service', 'old-password', 'client');
    const list = await c.get('/current-identity/authenticators', { api: 'client' });
    expect(list.body.data.map((a: any) => a.id)).toEqual([aid]);
    expect((await c.get(`/current-identity/authenticators/${aid}`, { api: 'client' })).body.data.username).toBe('self-service');
    const adminAuth = (await admin.get('/current-identity/authenticators')).body.data[0].id;
    expect((await c.get(`/current-identity/authenticators/${adminAuth}`, { api: 'client' })).status).toBe(404);
    const noCurrent = await c.patch(`/current-identity/authenticators/${aid}`, { password: 'new-password' }, { api: 'client' });
    expect(noCurrent.status).toBe(400);
    expect(noCurrent.body.error.cause.field).toBe('currentPassword');
    const wrong = await c.patch(
      `/current-identity/authenticators/${aid}`,
      { password: 'new-password', currentPassword: 'not-it!' },
      { api: 'client' },
    );
    expect(wrong.status).toBe(401);
    expect(
      (
        await c.put(
          `/current-identity/authenticators/${aid}`,
          { username: 'self-service', password: 'new-password', currentPassword: 'old-password' },
          { api: 'client' },
        )
      ).status,
    ).toBe(200);
    await c.login('self-service', 'new-password');
    expect(
      (await c.patch(`/current-identity/authenticators/${adminAuth}`, { password: 'hijacked', currentPassword: 'new-password' }, { api: 'client' }))
        .status,
    ).toBe(404);
    await c.close();
  });
});

describe('auth policies', () => {
  const primary = OPEN_PRIMARY;
  it('CRUD with nested patch; the default policy exists and cannot be deleted', async () => {
    const def = (await admin.get('/auth-policies/default')).body.data;
    expect(def).toMatchObject({ name: 'Default', primary: { updb: { allowed: true } }, secondary: { requireTotp: false } });
    expect((await admin.del('/auth-policies/default')).status).toBe(409);
    const id = await admin.create('/auth-policies', { name: 'p1', primary, secondary: { requireTotp: false } });
    expect((await admin.patch(`/auth-policies/${id}`, { primary: { updb: { maxAttempts: 4 } } })).status).toBe(200);
    const p = (await admin.get(`/auth-policies/${id}`)).body.data;
    expect(p.primary.updb).toMatchObject({ maxAttempts: 4, minPasswordLength: 5, allowed: true });
    expect(p.primary.cert).toEqual(primary.cert);
    const bad = await admin.post('/auth-policies', {
      name: 'p2',
      primary: { ...primary, updb: { ...primary.updb, allowed: 'no' } },
      secondary: { requireTotp: false },
    });
    expect(bad.body.error.cause.field).toBe('primary.updb.allowed');
    expect((await admin.post('/auth-policies', { name: 'p3', primary })).body.error.cause.field).toBe('secondary');
    expect((await admin.del(`/auth-policies/${id}`)).status).toBe(200);
  });

  it('locks an identity out after maxAttempts failures', async () => {
    const ap = await admin.create('/auth-policies', {
      name: 'lockout',
      primary: { ...primary, updb: { ...primary.updb, maxAttempts: 2, lockoutDurationMinutes: 0 } },
      secondary: { requireTotp: false },
    });
    const id = await admin.create('/identities', { name: 'lock-me', type: 'User', isAdmin: false, authPolicyId: ap });
    await admin.create('/authenticators', { method: 'updb', identityId: id, username: 'lock-me', password: 'right-pass' });
    const c = app.client();
    for (let i = 0; i < 2; i++)
      expect((await c.post('/authenticate?method=password', { username: 'lock-me', password: 'wrong-pass' })).status).toBe(401);
    expect((await c.post('/authenticate?method=password', { username: 'lock-me', password: 'right-pass' })).status).toBe(401);
    const g = (await admin.get(`/identities/${id}`)).body.data;
    expect(g.disabled).toBe(true);
    expect(g.disabledAt).toBeTypeOf('string');
    expect(g.disabledUntil).toBeNull();
    await c.close();
  });
});

describe('config types, configs and services', () => {
  it('has the built-in config types', async () => {
    const names = (await admin.get('/config-types?limit=100')).body.data.map((t: any) => t.name);
    expect(names).toEqual(expect.arrayContaining(['intercept.v1', 'host.v1', 'svc.proxy.v1']));
    expect((await admin.get('/config-types/g7cIWbcGg')).body.data.name).toBe('intercept.v1');
  });

  it('validates configs against their type schema with a field error, lists them by type, and 409s on referenced deletes', async () => {
    const typeId = await admin.create('/config-types', {
      name: 'my.v1',
      schema: { type: 'object', required: ['port'], properties: { port: { type: 'integer', maximum: 65535 } }, additionalProperties: false },
    });
    const badSchema = await admin.post('/config-types', { name: 'broken.v1', schema: { type: 'not-a-type' } });
    expect(badSchema.body.error.cause.field).toBe('schema');
    const miss = await admin.post('/configs', { name: 'c0', configTypeId: typeId, data: {} });
    expect(miss.status).toBe(400);
    expect(miss.body.error.cause.field).toBe('data.port');
    const wrong = await admin.post('/configs', { name: 'c0', configTypeId: typeId, data: { port: 70000 } });
    expect(wrong.body.error.cause.field).toBe('data.port');
    expect((await admin.post('/configs', { name: 'c0', configTypeId: 'nope', data: {} })).body.error.cause.field).toBe('configTypeId');
    const cfg = await admin.create('/configs', { name: 'c1', configTypeId: typeId, data: { port: 443 } });
    const got = (await admin.get(`/configs/${cfg}`)).body.data;
    expect(got).toMatchObject({ name: 'c1', configTypeId: typeId, configType: { id: typeId, name: 'my.v1' }, data: { port: 443 } });
    expect((await admin.get(`/config-types/${typeId}/configs`)).body.data.map((c: any) => c.id)).toEqual([cfg]);
    const intercept = await admin.create('/configs', {
      name: 'i1',
      configTypeId: 'g7cIWbcGg',
      data: { protocols: ['tcp'], addresses: ['app.weft'], portRanges: [{ low: 80, high: 80 }] },
    });
    expect(
      (
        await admin.post('/configs', {
          name: 'i2',
          configTypeId: 'g7cIWbcGg',
          data: { protocols: ['icmp'], addresses: ['a'], portRanges: [{ low: 1, high: 1 }] },
        })
      ).body.error.cause.field,
    ).toBe('data.protocols.0');
    const svc = await admin.create('/services', { name: 'svc1', encryptionRequired: true, configs: [cfg, intercept], roleAttributes: ['web'] });
    const s = (await admin.get(`/services/${svc}`)).body.data;
    expect(s).toMatchObject({
      name: 'svc1',
      encryptionRequired: true,
      configs: [cfg, intercept],
      roleAttributes: ['web'],
      terminatorStrategy: 'smartrouting',
    });
    expect((await admin.get(`/configs/${cfg}/services`)).body.data.map((x: any) => x.id)).toEqual([svc]);
    expect((await admin.get(`/services/${svc}/configs`)).body.data.map((x: any) => x.id).sort()).toEqual([cfg, intercept].sort());
    expect((await admin.del(`/configs/${cfg}`)).status).toBe(409);
    const typeDel = await admin.del(`/config-types/${typeId}`);
    expect(typeDel.status).toBe(409);
    expect(typeDel.body.error.code).toBe('CAN_NOT_DELETE_REFERENCED_ENTITY');
    const dupType = await admin.post('/services', { name: 'svc2', encryptionRequired: true, configs: [cfg, cfg] });
    expect(dupType.status).toBe(201); // the same config twice is de-duplicated
    const other = await admin.create('/configs', { name: 'c2', configTypeId: typeId, data: { port: 1 } });
    expect((await admin.post('/services', { name: 'svc3', encryptionRequired: true, configs: [cfg, other] })).body.error.cause.field).toBe(
      'configs.1',
    );
    expect((await admin.patch(`/services/${svc}`, { encryptionRequired: false })).body.error.cause.field).toBe('encryptionRequired');
    expect((await admin.patch(`/services/${svc}`, { configs: [] })).status).toBe(200);
    expect((await admin.get(`/configs/${cfg}/services`)).body.data.map((x: any) => x.id)).toEqual([dupType.body.data.id]);
    expect((await admin.get('/service-role-attributes')).body.data).toContain('web');
  });
});

describe('summary', () => {
  it('counts resources', async () => {
    const r = (await admin.get('/summary')).body.data;
    expect(r.identities).toBeGreaterThan(1);
    expect(r.configTypes).toBeGreaterThanOrEqual(3);
    expect(r).toHaveProperty('services');
    expect(r).toHaveProperty('authPolicies');
  });
});
