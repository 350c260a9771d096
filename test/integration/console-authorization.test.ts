// The console's tRPC procedures are authorized by the core exactly as the REST API is: a non-admin console user
// gets UNAUTHORIZED where REST says 401, permissions open what they open there, and errors keep OpenZiti's codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { createUser } from '../support/users';

const CSRF = { 'x-weft-console': '1' };

/** tRPC over HTTP with the console's cookie. */
class Console {
  cookie: string | undefined;
  constructor(readonly base: string) {}
  private async send(path: string, init: RequestInit) {
    const res = await fetch(`${this.base}/trpc/${path}`, {
      ...init,
      headers: { ...CSRF, ...(this.cookie ? { cookie: this.cookie } : {}), ...init.headers },
    });
    const set = res.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0];
    const body = (await res.json()) as any;
    return { status: res.status, data: body.result?.data, error: body.error as { message: string; data: { code: string; ziti?: any } } | undefined };
  }
  query(path: string, input?: unknown) {
    return this.send(`${path}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, {});
  }
  mutate(path: string, input?: unknown) {
    return this.send(path, { method: 'POST', body: JSON.stringify(input ?? null), headers: { 'content-type': 'application/json' } });
  }
  async login(username: string, password: string) {
    const r = await this.mutate('session.login', { username, password });
    if (r.status !== 200) throw new Error(`console login failed: ${r.status} ${r.error?.message}`);
    return this;
  }
}

describe('console authorization and errors', () => {
  let app: TestApp;
  let admin: ApiClient;
  let asAdmin: Console;

  beforeAll(async () => {
    app = await startTestApp({ consoleAddress: '127.0.0.1:0' });
    admin = await app.adminClient();
    asAdmin = await new Console(app.urls.console!).login('admin', 'admin-password-1');
    await createUser(admin, 'plain-user', 'plain-password-1');
    await createUser(admin, 'reader-user', 'reader-password-1', { permissions: ['identity.read'] });
  });
  afterAll(async () => {
    await admin?.close();
    await app?.stop();
  });

  it('a non-admin console user gets UNAUTHORIZED from every data procedure, as from REST', async () => {
    const user = await new Console(app.urls.console!).login('plain-user', 'plain-password-1');
    const me = await user.query('session.me');
    expect(me.data.identity).toMatchObject({ name: 'plain-user', isAdmin: false });
    const calls = [
      user.query('resources.list', { resource: 'identities' }),
      user.query('resources.list', { resource: 'api-sessions' }),
      user.query('resources.get', { resource: 'auth-policies', id: 'default' }),
      user.mutate('resources.create', { resource: 'services', body: { name: 'nope', encryptionRequired: true } }),
      user.mutate('resources.delete', { resource: 'identities', id: me.data.identity.id }),
      user.query('dashboard.overview'),
      user.query('roles.preview', { kind: 'identity', roles: ['#all'] }),
      user.query('roles.attributes', { kind: 'service' }),
      user.mutate('identities.disable', { id: me.data.identity.id, durationMinutes: 0 }),
      user.query('security.database.integrityResults'),
      user.mutate('security.database.snapshot'),
      user.query('enrollment.caJwt', { id: 'x' }),
    ];
    for (const r of await Promise.all(calls)) {
      expect(r.status).toBe(401);
      expect(r.error!.data.code).toBe('UNAUTHORIZED');
      expect(r.error!.data.ziti.code).toBe('UNAUTHORIZED');
    }
    // the same identity over REST
    const rest = app.client();
    await rest.login('plain-user', 'plain-password-1');
    expect((await rest.get('/identities')).status).toBe(401);
    await rest.close();
  });

  it('permissions open what they open over REST (identity.read lists identities, nothing more)', async () => {
    const reader = await new Console(app.urls.console!).login('reader-user', 'reader-password-1');
    const list = await reader.query('resources.list', { resource: 'identities', limit: 5 });
    expect(list.status).toBe(200);
    expect(list.data.meta.pagination.totalCount).toBeGreaterThanOrEqual(3);
    expect((await reader.mutate('resources.create', { resource: 'identities', body: { name: 'x', type: 'User', isAdmin: false } })).status).toBe(401);
    expect((await reader.query('resources.list', { resource: 'services' })).status).toBe(401);
  });

  it('lists page, filter (ZitiQL) and sort on the server; bad filters are INVALID_FILTER', async () => {
    for (let i = 0; i < 7; i++) {
      await admin.create('/identities', {
        name: `paged-${i}`,
        type: 'Device',
        isAdmin: false,
        roleAttributes: i % 2 ? ['odd'] : ['even'],
        tags: { n: String(i) },
      });
    }
    const page = await asAdmin.query('resources.list', {
      resource: 'identities',
      filter: 'name contains "paged-"',
      sort: { field: 'name', dir: 'desc' },
      limit: 3,
      offset: 2,
    });
    expect(page.data.meta.pagination).toEqual({ limit: 3, offset: 2, totalCount: 7 });
    expect(page.data.data.map((e: any) => e.name)).toEqual(['paged-4', 'paged-3', 'paged-2']);
    // a sort written in the filter wins over the column sort
    const own = await asAdmin.query('resources.list', {
      resource: 'identities',
      filter: 'name contains "paged-" sort by name asc limit 2',
      sort: { field: 'name', dir: 'desc' },
    });
    expect(own.data.data[0].name).toBe('paged-0');
    const tags = await asAdmin.query('resources.list', { resource: 'identities', filter: 'tags.n = "5"' });
    expect(tags.data.data.map((e: any) => e.name)).toEqual(['paged-5']);
    const roles = await asAdmin.query('resources.list', { resource: 'identities', roleFilter: ['#odd'], limit: 100 });
    expect(roles.data.meta.pagination.totalCount).toBe(3);

    const bad = await asAdmin.query('resources.list', { resource: 'identities', filter: 'name = ' });
    expect(bad.status).toBe(400);
    expect(bad.error!.data.ziti.code).toBe('INVALID_FILTER');
    expect(bad.error!.message).toMatch(/position/);
    const badSort = await asAdmin.query('resources.list', { resource: 'identities', sort: { field: 'nope', dir: 'asc' } });
    expect(badSort.error!.data.ziti.code).toBe('INVALID_FILTER');
    const tooMany = await asAdmin.query('resources.list', { resource: 'identities', limit: 501 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.error!.data.ziti.cause.field).toBe('limit');
  });

  it('create, update, delete go through the core: field errors name the field, unknown ids are NOT_FOUND', async () => {
    const missing = await asAdmin.mutate('resources.create', { resource: 'identities', body: { type: 'User', isAdmin: false } });
    expect(missing.status).toBe(400);
    expect(missing.error!.data.ziti).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field: 'name', reason: 'is required' } });
    const created = await asAdmin.mutate('resources.create', {
      resource: 'identities',
      body: { name: 'console-made', type: 'User', isAdmin: false, roleAttributes: ['sales'], enrollment: { ott: true } },
    });
    expect(created.status).toBe(200);
    const id = created.data.id;
    const got = await asAdmin.query('resources.get', { resource: 'identities', id });
    expect(got.data.enrollment.ott.jwt).toMatch(/^ey/);
    // REST sees the same identity
    expect((await admin.get(`/identities/${id}`)).body.data.roleAttributes).toEqual(['sales']);
    expect((await asAdmin.mutate('resources.update', { resource: 'identities', id, body: { roleAttributes: ['sales', 'emea'] } })).status).toBe(200);
    expect((await admin.get(`/identities/${id}`)).body.data.roleAttributes).toEqual(['sales', 'emea']);
    const dup = await asAdmin.mutate('resources.create', { resource: 'identities', body: { name: 'console-made', type: 'User', isAdmin: false } });
    expect(dup.error!.data.ziti.cause.field).toBe('name');
    expect((await asAdmin.mutate('resources.delete', { resource: 'identities', id })).status).toBe(200);
    const gone = await asAdmin.query('resources.get', { resource: 'identities', id });
    expect(gone.status).toBe(404);
    expect(gone.error!.data.ziti.code).toBe('NOT_FOUND');
    const readOnly = await asAdmin.mutate('resources.create', { resource: 'identity-types', body: { name: 'x' } });
    expect(readOnly.error!.data.code).toBe('METHOD_NOT_SUPPORTED');
    const unknown = await asAdmin.query('resources.list', { resource: 'no-such-things' });
    expect(unknown.status).toBe(400);
  });

  it('API session listings never carry tokens', async () => {
    const sessions = await asAdmin.query('resources.list', { resource: 'api-sessions', limit: 50 });
    expect(sessions.data.data.length).toBeGreaterThan(0);
    for (const s of sessions.data.data) expect(s.token).toBeUndefined();
  });

  it('the procedures of the signer, terminator, session, settings and identity-detail pages are authorized by the core', async () => {
    const user = await new Console(app.urls.console!).login('plain-user', 'plain-password-1');
    const self = (await user.query('session.me')).data.identity.id as string;
    const denied = [
      ...['external-jwt-signers', 'terminators', 'sessions', 'controller-settings', 'controllers'].map((resource) =>
        user.query('resources.list', { resource }),
      ),
      user.mutate('resources.create', {
        resource: 'external-jwt-signers',
        body: { name: 's', issuer: 'i', audience: 'a', enabled: true, jwksEndpoint: 'https://x.test/jwks' },
      }),
      user.mutate('resources.create', { resource: 'terminators', body: { service: 'x', router: 'y', binding: 'edge', address: 'a' } }),
      user.mutate('resources.delete', { resource: 'sessions', id: 'x' }),
      user.mutate('resources.update', { resource: 'controller-settings', id: 'global', body: { oidc: { redirectUris: ['https://x.test/cb'] } } }),
      user.query('controllerSettings.effective', { id: 'global' }),
      user.query('identityPosture.data', { identityId: self }),
      user.query('identityPosture.failedServiceRequests', { identityId: self }),
      user.query('identityTracing.get', { identityId: self }),
      user.mutate('identityTracing.update', { identityId: self, body: { enabled: true } }),
      user.query('serviceConfigOverrides.list', { identityId: self }),
      user.mutate('serviceConfigOverrides.associate', { identityId: self, pairs: [] }),
      user.mutate('serviceConfigOverrides.remove', { identityId: self, pairs: [] }),
    ];
    for (const r of await Promise.all(denied)) {
      expect(r.status).toBe(401);
      expect(r.error!.data.code).toBe('UNAUTHORIZED');
      expect(r.error!.data.ziti.code).toBe('UNAUTHORIZED');
    }
    // identity.read opens the identity-detail reads (as over REST), not the writes or the ops reads
    const reader = await new Console(app.urls.console!).login('reader-user', 'reader-password-1');
    for (const path of ['identityPosture.data', 'identityPosture.failedServiceRequests', 'identityTracing.get', 'serviceConfigOverrides.list']) {
      expect((await reader.query(path, { identityId: self })).status, path).toBe(200);
    }
    expect((await reader.mutate('identityTracing.update', { identityId: self, body: { enabled: true } })).status).toBe(401);
    expect((await reader.query('controllerSettings.effective', { id: 'global' })).status).toBe(401);
    expect((await reader.query('resources.list', { resource: 'sessions' })).status).toBe(401);
  });

  it('the new procedures answer as REST does: effective settings, tracing with field errors, sessions without tokens', async () => {
    expect(
      (
        await asAdmin.mutate('resources.update', {
          resource: 'controller-settings',
          id: 'global',
          body: { oidc: { redirectUris: ['https://app.test/cb'] } },
        })
      ).status,
    ).toBe(200);
    const controller = (await admin.get('/controllers')).body.data[0].id;
    const eff = await asAdmin.query('controllerSettings.effective', { id: controller });
    expect(eff.data).toMatchObject({
      id: controller,
      effective: { oidc: { redirectUris: ['https://app.test/cb'], postLogoutUris: [] } },
      instance: {},
    });
    expect((await admin.get(`/controller-settings/${controller}/effective`)).body.data.effective).toEqual(eff.data.effective);

    const target = await admin.create('/identities', { name: 'traced', type: 'Device', isAdmin: false });
    const bad = await asAdmin.mutate('identityTracing.update', { identityId: target, body: { enabled: true, duration: 'soon' } });
    expect(bad.status).toBe(400);
    expect(bad.error!.data.ziti).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field: 'duration' } });
    const on = await asAdmin.mutate('identityTracing.update', { identityId: target, body: { enabled: true, duration: '30m', channels: ['edge'] } });
    expect(on.data).toMatchObject({ enabled: true, channels: ['edge'] });
    expect((await admin.get(`/identities/${target}/trace`)).body.data).toMatchObject({ enabled: true, traceId: on.data.traceId });
    const missing = await asAdmin.query('identityPosture.failedServiceRequests', { identityId: 'no-such-identity' });
    expect(missing.error!.data.ziti.code).toBe('NOT_FOUND');

    // a Dial session opened over the Client API, listed by the console without its token
    const userId = await createUser(admin, 'session-user', 'session-password-1', { roleAttributes: ['sess'] });
    const svc = await admin.create('/services', { name: 'sess-svc', encryptionRequired: true, roleAttributes: ['sess'] });
    const router = await admin.create('/edge-routers', { name: 'sess-router' });
    await admin.create('/service-policies', {
      name: 'sess-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#sess'],
      serviceRoles: ['#sess'],
    });
    await admin.create('/edge-router-policies', { name: 'sess-erp', semantic: 'AnyOf', identityRoles: ['#sess'], edgeRouterRoles: [`@${router}`] });
    await admin.create('/service-edge-router-policies', {
      name: 'sess-serp',
      semantic: 'AnyOf',
      serviceRoles: ['#sess'],
      edgeRouterRoles: [`@${router}`],
    });
    const client = app.client();
    const auth = await client.post('/authenticate?method=password', { username: 'session-user', password: 'session-password-1' }, { api: 'client' });
    client.token = auth.body.data.token;
    const session = (await client.post('/sessions', { serviceId: svc, type: 'Dial' }, { api: 'client' })).body.data;
    const listed = await asAdmin.query('resources.list', { resource: 'sessions', filter: `identityId = "${userId}"` });
    expect(listed.data.data).toHaveLength(1);
    expect(listed.data.data[0]).toMatchObject({
      id: session.id,
      type: 'Dial',
      service: { name: 'sess-svc' },
      edgeRouters: [expect.objectContaining({ name: 'sess-router' })],
    });
    expect(listed.data.data[0].token).toBeUndefined();
    expect((await asAdmin.query('resources.get', { resource: 'sessions', id: session.id })).data.token).toBeUndefined();
    expect((await asAdmin.mutate('resources.delete', { resource: 'sessions', id: session.id })).status).toBe(200);
    expect((await client.get(`/sessions/${session.id}`, { api: 'client' })).status).toBe(404);
    await client.close();
  });

  it('role previews and policy advice explain access', async () => {
    const alice = await admin.create('/identities', { name: 'alice', type: 'User', isAdmin: false, roleAttributes: ['staff'] });
    const web = await admin.create('/services', { name: 'web', encryptionRequired: true, roleAttributes: ['intranet'] });
    const preview = await asAdmin.query('roles.preview', { kind: 'identity', roles: ['#staff'], semantic: 'AnyOf' });
    expect(preview.data).toEqual({ totalCount: 1, items: [{ id: alice, name: 'alice' }] });
    const badRole = await asAdmin.query('roles.preview', { kind: 'identity', roles: ['staff'] });
    expect(badRole.error!.data.ziti.cause.field).toBe('roles.0');

    const none = await asAdmin.query('policy.advice', { identityId: alice, serviceId: web });
    expect(none.data.isDialAllowed).toBe(false);
    expect(none.data.sentence).toMatch(/can neither dial nor bind service "web": no service policy grants it/);

    await admin.create('/service-policies', {
      name: 'staff-dial-web',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#staff'],
      serviceRoles: ['#intranet'],
    });
    const noRouters = await asAdmin.query('policy.advice', { identityId: alice, serviceId: web });
    expect(noRouters.data.isDialAllowed).toBe(true);
    expect(noRouters.data.sentence).toMatch(/may dial service "web", but no edge router policy/);

    await admin.create('/edge-routers', { name: 'er-1', roleAttributes: ['public'] });
    await admin.create('/edge-router-policies', {
      name: 'staff-routers',
      semantic: 'AnyOf',
      identityRoles: ['#staff'],
      edgeRouterRoles: ['#public'],
    });
    await admin.create('/service-edge-router-policies', {
      name: 'web-routers',
      semantic: 'AnyOf',
      serviceRoles: ['#intranet'],
      edgeRouterRoles: ['#public'],
    });
    const full = await asAdmin.query('policy.advice', { identityId: alice, serviceId: web });
    expect(full.data.commonRouters.map((r: any) => r.name)).toEqual(['er-1']);
    expect(full.data.sentence).toBe('Identity "alice" may dial service "web" through 1 common edge router (er-1), but none of them is online.');
  });
});
