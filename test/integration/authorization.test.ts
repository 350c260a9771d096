import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { authPolicyBody } from '../support/users';

let app: TestApp;
let admin: ApiClient;
let plain: ApiClient;
const made: Record<string, string> = {};

async function userWith(name: string, permissions: string[]): Promise<ApiClient> {
  const id = await admin.create('/identities', { name, type: 'User', isAdmin: false, permissions });
  await admin.create('/authenticators', { method: 'updb', identityId: id, username: name, password: 'password-1' });
  const c = app.client();
  await c.login(name, 'password-1');
  return c;
}

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
  made.identity = await admin.create('/identities', { name: 'target', type: 'User', isAdmin: false });
  made.authPolicy = await admin.create('/auth-policies', authPolicyBody('ap'));
  made.configType = await admin.create('/config-types', { name: 'ct', schema: {} });
  made.config = await admin.create('/configs', { name: 'cfg', configTypeId: made.configType, data: {} });
  made.service = await admin.create('/services', { name: 'svc', encryptionRequired: true });
  made.authenticator = await admin.create('/authenticators', {
    method: 'updb',
    identityId: made.identity,
    username: 'target',
    password: 'password-1',
  });
  made.edgeRouter = await admin.create('/edge-routers', { name: 'er' });
  made.apiSession = (await admin.get('/api-sessions')).body.data[0].id;
  plain = await userWith('plain', []);
});
afterAll(async () => {
  await plain.close();
  await admin.close();
  await app.stop();
});

/** Every management operation of the foundation, with a plausible body. */
function operations(): Array<[string, string, unknown?]> {
  return [
    ['GET', '/identities'],
    ['POST', '/identities', { name: 'x', type: 'User', isAdmin: true }],
    ['GET', `/identities/${made.identity}`],
    ['PUT', `/identities/${made.identity}`, { name: 'x', type: 'User', isAdmin: true }],
    ['PATCH', `/identities/${made.identity}`, { isAdmin: true }],
    ['DELETE', `/identities/${made.identity}`],
    ['GET', `/identities/${made.identity}/authenticators`],
    ['GET', '/identity-role-attributes'],
    ['GET', '/identity-types'],
    ['GET', '/identity-types/User'],
    ['GET', '/auth-policies'],
    ['POST', '/auth-policies', {}],
    ['GET', `/auth-policies/${made.authPolicy}`],
    ['PATCH', `/auth-policies/${made.authPolicy}`, {}],
    ['PUT', `/auth-policies/${made.authPolicy}`, {}],
    ['DELETE', `/auth-policies/${made.authPolicy}`],
    ['GET', '/authenticators'],
    ['POST', '/authenticators', { method: 'updb', identityId: made.identity, username: 'hijack', password: 'hijack' }],
    ['GET', `/authenticators/${made.authenticator}`],
    ['PUT', `/authenticators/${made.authenticator}`, { username: 'hijack', password: 'hijack' }],
    ['PATCH', `/authenticators/${made.authenticator}`, { password: 'hijack' }],
    ['DELETE', `/authenticators/${made.authenticator}`],
    ['GET', '/config-types'],
    ['POST', '/config-types', { name: 'y' }],
    ['GET', `/config-types/${made.configType}`],
    ['PATCH', `/config-types/${made.configType}`, {}],
    ['PUT', `/config-types/${made.configType}`, { name: 'ct' }],
    ['DELETE', `/config-types/${made.configType}`],
    ['GET', `/config-types/${made.configType}/configs`],
    ['GET', '/configs'],
    ['POST', '/configs', { name: 'z', configTypeId: made.configType, data: {} }],
    ['GET', `/configs/${made.config}`],
    ['PATCH', `/configs/${made.config}`, {}],
    ['PUT', `/configs/${made.config}`, { name: 'cfg', data: {} }],
    ['DELETE', `/configs/${made.config}`],
    ['GET', `/configs/${made.config}/services`],
    ['GET', '/services'],
    ['POST', '/services', { name: 's2', encryptionRequired: true }],
    ['GET', `/services/${made.service}`],
    ['PATCH', `/services/${made.service}`, {}],
    ['PUT', `/services/${made.service}`, { name: 'svc' }],
    ['DELETE', `/services/${made.service}`],
    ['GET', `/services/${made.service}/configs`],
    ['GET', '/service-role-attributes'],
    ['GET', '/edge-routers'],
    ['POST', '/edge-routers', { name: 'er2' }],
    ['GET', `/edge-routers/${made.edgeRouter}`],
    ['PATCH', `/edge-routers/${made.edgeRouter}`, {}],
    ['DELETE', `/edge-routers/${made.edgeRouter}`],
    ['GET', '/edge-router-role-attributes'],
    ['GET', '/api-sessions'],
    ['GET', `/api-sessions/${made.apiSession}`],
    ['DELETE', `/api-sessions/${made.apiSession}`],
    ['GET', '/summary'],
  ];
}

describe('authorization', () => {
  it('a non-admin identity is refused every management operation with 401 UNAUTHORIZED and no data', async () => {
    for (const [method, path, body] of operations()) {
      const r = await plain.req(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.body.error.code, `${method} ${path}`).toBe('UNAUTHORIZED');
      expect(r.body.data, `${method} ${path}`).toBeUndefined();
    }
    // nothing changed
    expect((await admin.get(`/identities/${made.identity}`)).body.data.isAdmin).toBe(false);
    expect((await admin.get(`/authenticators/${made.authenticator}`)).body.data.username).toBe('target');
  });

  it('a non-admin can still use its own session operations', async () => {
    expect((await plain.get('/current-identity')).body.data.name).toBe('plain');
    expect((await plain.get('/current-api-session')).status).toBe(200);
    expect((await plain.get('/current-identity/authenticators')).body.data).toHaveLength(1);
    expect((await plain.get('/controllers')).status).toBe(200);
    expect((await plain.get('/version')).status).toBe(200);
  });

  it('admin_readonly reads everything and writes nothing', async () => {
    const ro = await userWith('readonly', ['admin_readonly']);
    for (const [method, path, body] of operations()) {
      const r = await ro.req(method, path, body);
      if (method === 'GET') expect(r.status, `${method} ${path}`).toBe(200);
      else expect(r.status, `${method} ${path}`).toBe(401);
    }
    await ro.close();
  });

  it('group permissions grant exactly their group and action', async () => {
    const reader = await userWith('identity-reader', ['identity.read']);
    expect((await reader.get('/identities')).status).toBe(200);
    expect((await reader.get(`/identities/${made.identity}`)).status).toBe(200);
    expect((await reader.patch(`/identities/${made.identity}`, { roleAttributes: ['x'] })).status).toBe(401);
    expect((await reader.get('/services')).status).toBe(401);
    expect((await reader.get('/summary')).status).toBe(401);
    const svcAdmin = await userWith('service-admin', ['service']);
    const sid = await svcAdmin.create('/services', { name: 'by-service-admin', encryptionRequired: false });
    expect((await svcAdmin.del(`/services/${sid}`)).status).toBe(200);
    expect((await svcAdmin.get('/identities')).status).toBe(401);
    const creator = await userWith('config-creator', ['config.create']);
    expect((await creator.post('/configs', { name: 'c-created', configTypeId: made.configType, data: {} })).status).toBe(201);
    expect((await creator.get('/configs')).status).toBe(401);
    for (const c of [reader, svcAdmin, creator]) await c.close();
  });
});
