// What OpenZiti's C SDK (ziti-edge-tunnel, Desktop Edge, the mobile apps) reads byte for byte, pinned at the wire:
// the CA bundle in 64-column base64 lines (tlsuv decodes it through OpenSSL's line-based base64 BIO), the Client API
// without its base (the SDK's legacy login uses the bare ztAPI), and edge router addresses as tls:// URLs. (That the
// router sends SDKs no zero-length frame is pinned in router.test.ts.)
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import { ApiClient } from '../support/client';
import { deviceSession, enrolledDevice, type Device } from '../support/edge';
import { certLogin } from '../support/pki';
import { createUser } from '../support/users';

let app: TestApp;
let admin: ApiClient;
let device: Device;
let serviceId: string;

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
  device = await enrolledDevice(app, admin, 'c-sdk-device', ['c-sdk']);
  serviceId = await admin.create('/services', { name: 'c-sdk-service', roleAttributes: ['c-sdk-svc'], encryptionRequired: true });
  await admin.create('/service-policies', {
    name: 'c-sdk-dial',
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#c-sdk'],
    serviceRoles: ['#c-sdk-svc'],
  });
  await admin.create('/edge-router-policies', { name: 'c-sdk-erp', semantic: 'AnyOf', identityRoles: ['#c-sdk'], edgeRouterRoles: ['#all'] });
  await admin.create('/service-edge-router-policies', { name: 'c-sdk-serp', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
  await createUser(admin, 'c-sdk-user', 'c-sdk-user-password');
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

describe('/.well-known/est/cacerts', () => {
  it('is base64 in 64-column lines that OpenSSL’s line-based decoder reads, holding the whole CA bundle', async () => {
    for (const path of ['/.well-known/est/cacerts', '/edge/client/v1/.well-known/est/cacerts', '/edge/management/v1/.well-known/est/cacerts']) {
      const r = await app.client().get(path, { api: 'root' });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/^application\/pkcs7-mime/);
      const lines = r.text.split('\n');
      expect(lines.length).toBeGreaterThan(1);
      for (const line of lines.slice(0, -1)) expect(line).toMatch(/^[A-Za-z0-9+/]{64}$/);
      expect(lines.at(-1)).toMatch(/^[A-Za-z0-9+/]{1,64}={0,2}$/); // no newline after the last line, as OpenZiti
      const der = execFileSync('openssl', ['base64', '-d'], { input: r.text });
      const printed = execFileSync('openssl', ['pkcs7', '-inform', 'DER', '-print_certs', '-noout'], { input: der }).toString();
      const subjects = printed.split('\n').filter((l) => l.startsWith('subject='));
      expect(subjects).toHaveLength(app.core.pki.caBundlePem.match(/BEGIN CERTIFICATE/g)!.length);
    }
  });
});

describe('the Client API without its base (the C SDK’s legacy login, identities with a bare ztAPI)', () => {
  const bare = () => app.client();

  it('authenticates by certificate and by password, and the session works at both paths', async () => {
    const byCert = await certLogin(bare(), device.cert, device.key, 'root');
    expect(byCert.resp.status).toBe(200);
    expect(byCert.resp.body.data.token).toEqual(expect.any(String));
    const current = await byCert.client.get('/current-api-session', { api: 'root' });
    expect(current.status).toBe(200);
    expect(current.body.data.identity.name).toBe('c-sdk-device');
    expect((await byCert.client.get('/current-api-session', { api: 'client' })).body.data.id).toBe(current.body.data.id);

    const user = bare();
    const r = await user.login('c-sdk-user', 'c-sdk-user-password', 'root');
    expect(r.body.data.identity.name).toBe('c-sdk-user');
    // the old name of the Client API's base answers too
    expect((await user.get('/edge/v1/current-api-session', { api: 'root' })).body.data.id).toBe(r.body.data.id);
  });

  it('lists services and creates and reads sessions as under /edge/client/v1', async () => {
    const { client } = await deviceSession(app, device);
    const token = client.token!;
    const c = bare();
    c.token = token;
    const services = await c.get('/services', { api: 'root' });
    expect(services.status).toBe(200);
    expect(services.body.data.map((s: any) => s.id)).toEqual((await client.get('/services', { api: 'client' })).body.data.map((s: any) => s.id));
    const made = await c.post('/sessions', { serviceId, type: 'Dial' }, { api: 'root' });
    expect(made.status).toBe(201);
    const session = await c.get(`/sessions/${made.body.data.id}`, { api: 'root' });
    expect(session.status).toBe(200);
    expect(session.body.data.service.id).toBe(serviceId);
    expect((await c.get('/current-identity/edge-routers', { api: 'root' })).status).toBe(200);
    // the management API keeps its base: nothing of it is reachable without
    expect((await c.get('/identities', { api: 'root' })).status).toBe(404);
    await client.close();
  });

  it('a path that is no route of the Client API is a 404 in the envelope', async () => {
    const r = await bare().get('/no-such-thing', { api: 'root' });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('NOT_FOUND');
  });
});

describe('edge router addresses', () => {
  it('are tls:// URLs wherever SDKs read them: sessions, the identity’s routers, the router list', async () => {
    const { client } = await deviceSession(app, device);
    const url = /^tls:\/\/127\.0\.0\.1:\d+$/;
    const id = (await client.post('/sessions', { serviceId, type: 'Dial' }, { api: 'client' })).body.data.id;
    const session = (await client.get(`/sessions/${id}`, { api: 'client' })).body.data;
    expect(session.edgeRouters.length).toBeGreaterThan(0);
    for (const er of session.edgeRouters) {
      expect(er.urls.tls).toMatch(url);
      expect(er.supportedProtocols.tls).toMatch(url);
    }
    for (const er of (await client.get('/current-identity/edge-routers', { api: 'client' })).body.data)
      expect(er.supportedProtocols.tls).toMatch(url);
    const routers = (await admin.get('/edge-routers')).body.data.filter((r: any) => r.isOnline);
    expect(routers.length).toBeGreaterThan(0);
    for (const r of routers) expect(r.supportedProtocols.tls).toMatch(url);
    expect(app.urls.router).toMatch(url);
    await client.close();
  });
});
