// The audit log: Management API writes (any route, success or failure), logins on both APIs (password, cert, ext-jwt)
// and MFA completions, the console's writes; listed at /audit-log (Weft extension) for admins and ops readers, paged
// and filtered with ZitiQL; never a secret; pruned by age and count.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/main/app';
import { pruneAuditLog } from '../../src/main/core/ops/audit';
import { fingerprintSha1 } from '../../src/main/core/pki';
import { parseDuration } from '../../src/shared/duration';
import { startTestApp, tempDir, ADMIN_PASSWORD, ADMIN_USER, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ManualClock } from '../support/clock';
import { certLogin, csr } from '../support/pki';
import { createUser, epochSeconds, login, secretOf, totp, totpStepStart } from '../support/users';

const PASSWORD = 'audited-password-1';
const STEP = 30_000;

let app: TestApp;
let admin: ApiClient;
let adminSessionId: string;
let adminId: string;
const clock = new ManualClock(totpStepStart());

beforeAll(async () => {
  app = await startTestApp({ clock, consoleAddress: '127.0.0.1:0', consoleRendererDir: tempDir('weft-renderer-') });
  admin = await app.adminClient();
  const current = (await admin.get('/current-api-session')).body.data;
  adminSessionId = current.id;
  adminId = current.identityId;
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

type Entry = Record<string, any>;
const q = (filter: string) => `/audit-log?limit=500&filter=${encodeURIComponent(filter)}`;
/** Matching entries, oldest first (the list is newest first; entries of one millisecond in the order written). */
async function entries(filter: string): Promise<Entry[]> {
  const r = await admin.get(q(filter));
  expect(r.status).toBe(200);
  return (r.body.data as Entry[]).reverse();
}

describe('Management API writes', () => {
  it('records creates, updates, patches and deletes with the caller, the entity and the outcome', async () => {
    const id = await admin.create('/identities', { name: 'audited-1', type: 'Device', isAdmin: false });
    expect((await admin.patch(`/identities/${id}`, { roleAttributes: ['a'] })).status).toBe(200);
    expect((await admin.put(`/identities/${id}`, { name: 'audited-1b', type: 'Device', isAdmin: false })).status).toBe(200);
    expect((await admin.post(`/identities/${id}/disable`, { durationMinutes: 0 })).status).toBe(200);
    expect((await admin.del(`/identities/${id}`)).status).toBe(200);

    const list = await entries(`entityId = "${id}"`);
    expect(list.map((e) => [e.action, e.entityType, e.outcome])).toEqual([
      ['create', 'identities', 'success'],
      ['patch', 'identities', 'success'],
      ['update', 'identities', 'success'],
      ['create', 'identities/disable', 'success'],
      ['delete', 'identities', 'success'],
    ]);
    expect(list[0]).toMatchObject({
      source: 'management',
      route: 'POST /identities',
      identityId: adminId,
      identityName: 'Default Admin',
      apiSessionId: adminSessionId,
      sourceAddress: '127.0.0.1',
      errorCode: null,
      _links: { self: { href: `./audit-log/${list[0]!.id}` } },
    });
    expect(list[3]!.route).toBe('POST /identities/:id/disable');
    expect(new Date(list[0]!.createdAt).getTime()).toBe(clock.now().getTime());
    const one = await admin.get(`/audit-log/${list[0]!.id}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(list[0]);
    expect((await admin.get('/audit-log/nope')).status).toBe(404);
  });

  it('records failures with their error code: validation, missing entity, no session, a body that does not parse', async () => {
    expect((await admin.post('/services', { name: '' })).status).toBe(400);
    expect((await admin.del('/services/does-not-exist')).status).toBe(404);
    expect((await app.client().post('/services', { name: 'anonymous' })).status).toBe(401);
    const garbled = await admin.post('/services', undefined, { raw: '{"name": ', contentType: 'application/json' });
    expect(garbled.status).toBe(400);

    const failures = await entries('outcome = "failure" and entityType = "services"');
    expect(failures.map((e) => [e.action, e.errorCode, e.entityId, e.identityId])).toEqual([
      ['create', 'COULD_NOT_VALIDATE', null, adminId],
      ['delete', 'NOT_FOUND', 'does-not-exist', adminId],
      ['create', 'UNAUTHORIZED', null, null],
      ['create', 'COULD_NOT_PARSE_BODY', null, null],
    ]);
  });

  it('leaves out reads and Client API writes other than authentication', async () => {
    await admin.get('/identities');
    expect(await entries('action = "read"')).toEqual([]);
    const { client } = await login(app, ADMIN_USER, ADMIN_PASSWORD);
    expect((await client.post('/current-identity/mfa', undefined, { api: 'client' })).status).toBe(201);
    expect((await client.del('/current-identity/mfa', { api: 'client' })).status).toBe(200);
    expect(await entries('source = "client" and action != "login"')).toEqual([]);
    await client.close();
  });
});

describe('logins and MFA', () => {
  let userId: string;
  let secret: string;

  it('password logins: success names the session, failures the username tried; never the password', async () => {
    userId = await createUser(admin, 'audited-user', PASSWORD);
    const ok = await login(app, 'audited-user', PASSWORD);
    expect((await app.client().post('/authenticate?method=password', { username: 'audited-user', password: 'wrong-password' })).status).toBe(401);
    expect(
      (await app.client().post('/authenticate?method=password', { username: 'nobody-here', password: 'whatever-1' }, { api: 'client' })).status,
    ).toBe(401);

    const logins = await entries('action = "login" and principal in ["audited-user", "nobody-here"]');
    expect(logins).toHaveLength(3);
    expect(logins[0]).toMatchObject({
      source: 'management',
      entityType: 'api-sessions',
      entityId: ok.session.id,
      apiSessionId: ok.session.id,
      identityId: userId,
      identityName: 'audited-user',
      principal: 'audited-user',
      authMethod: 'password',
      outcome: 'success',
      errorCode: null,
    });
    expect(logins[1]).toMatchObject({
      principal: 'audited-user',
      outcome: 'failure',
      errorCode: 'INVALID_AUTH',
      identityId: null,
      apiSessionId: null,
    });
    expect(logins[2]).toMatchObject({ source: 'client', principal: 'nobody-here', outcome: 'failure', errorCode: 'INVALID_AUTH' });
    await ok.client.close();
  });

  it('certificate and external JWT logins name the fingerprint and the token subject', async () => {
    const id = await admin.create('/identities', { name: 'audited-device', type: 'Device', isAdmin: false, enrollment: { ott: true } });
    const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.token;
    const { csrPem, keyPem } = await csr('EC-P256', 'audited-device');
    const cert = (await app.client().post('/enroll/ott', { token, clientCsr: csrPem }, { api: 'client' })).body.data.cert as string;
    const { resp, client } = await certLogin(app.client(), cert, keyPem);
    expect(resp.status).toBe(200);
    await client.close();
    const [certEntry] = await entries(`authMethod = "cert" and identityId = "${id}"`);
    expect(certEntry).toMatchObject({
      action: 'login',
      source: 'client',
      principal: fingerprintSha1(cert),
      outcome: 'success',
      entityId: resp.body.data.id,
    });

    const unsigned =
      [
        { alg: 'none', typ: 'JWT' },
        { sub: 'someone@example.com', iss: 'https://idp.example' },
      ]
        .map((p) => Buffer.from(JSON.stringify(p)).toString('base64url'))
        .join('.') + '.';
    const r = await app.client().post('/authenticate?method=ext-jwt', {}, { headers: { authorization: `Bearer ${unsigned}` } });
    expect(r.status).toBe(401);
    const [jwtEntry] = await entries('authMethod = "ext-jwt"');
    expect(jwtEntry).toMatchObject({ principal: 'someone@example.com', outcome: 'failure', errorCode: 'INVALID_AUTH' });
  });

  it('MFA completions: wrong and right codes on the partial session', async () => {
    const enrolling = await login(app, 'audited-user', PASSWORD);
    await enrolling.client.post('/current-identity/mfa');
    secret = secretOf((await enrolling.client.get('/current-identity/mfa')).body.data.provisioningUrl);
    expect((await enrolling.client.post('/current-identity/mfa/verify', { code: totp(secret, epochSeconds(clock)) })).status).toBe(200);
    await enrolling.client.close();

    clock.advance(STEP);
    const { client, session } = await login(app, 'audited-user', PASSWORD);
    expect((await client.post('/authenticate/mfa', { code: '00000x' })).status).toBe(401);
    expect((await client.post('/authenticate/mfa', { code: totp(secret, epochSeconds(clock)) }, { api: 'client' })).status).toBe(200);
    await client.close();
    const mfa = await entries(`action = "mfa" and apiSessionId = "${session.id}"`);
    expect(mfa.map((e) => [e.source, e.outcome, e.errorCode, e.entityType, e.entityId, e.identityName])).toEqual([
      ['management', 'failure', 'INVALID_MFA_TOKEN', 'api-sessions', session.id, 'audited-user'],
      ['client', 'success', null, 'api-sessions', session.id, 'audited-user'],
    ]);
  });

  it('filters with ZitiQL: failed logins only, paged', async () => {
    const r = await admin.get(q('action = "login" and outcome = "failure"'));
    expect(r.body.data.length).toBeGreaterThanOrEqual(3);
    for (const e of r.body.data) expect(e).toMatchObject({ action: 'login', outcome: 'failure' });
    expect(r.body.meta.pagination).toMatchObject({ offset: 0, totalCount: r.body.data.length });
    expect(r.body.meta.filterableFields).toEqual(expect.arrayContaining(['action', 'outcome', 'principal', 'entityType', 'identityId', 'createdAt']));
    const paged = await admin.get(`/audit-log?limit=1&offset=1&filter=${encodeURIComponent('action = "login" and outcome = "failure"')}`);
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.data[0].id).toBe(r.body.data[1].id); // newest first
    expect((await admin.get(`/audit-log?filter=${encodeURIComponent('action = ')}`)).body.error.code).toBe('INVALID_FILTER');
  });

  it('never holds a password, token or code', async () => {
    const all = JSON.stringify((await admin.get('/audit-log?limit=500')).body.data);
    for (const secretText of [PASSWORD, ADMIN_PASSWORD, 'wrong-password', admin.token!, secret]) expect(all).not.toContain(secretText);
  });

  it('is for administrators and ops readers only', async () => {
    expect((await app.client().get('/audit-log')).status).toBe(401);
    await createUser(admin, 'plain-reader', PASSWORD);
    const user = await login(app, 'plain-reader', PASSWORD);
    const denied = await user.client.get('/audit-log');
    expect(denied.status).toBe(401);
    expect(denied.body.error.code).toBe('UNAUTHORIZED');
    await user.client.close();

    await createUser(admin, 'ops-reader', PASSWORD, { permissions: ['ops.read'] });
    const ops = await login(app, 'ops-reader', PASSWORD);
    expect((await ops.client.get('/audit-log')).status).toBe(200);
    await ops.client.close();
  });
});

describe('console writes', () => {
  it('records tRPC mutations with source console, logins included', async () => {
    const base = app.urls.console!;
    let cookie = '';
    const mutate = async (path: string, input: unknown) => {
      const res = await request(`${base}/trpc/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-weft-console': '1', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify(input),
      });
      const setCookie = res.headers['set-cookie'];
      if (typeof setCookie === 'string' && !/Max-Age=0/.test(setCookie)) cookie = setCookie.split(';')[0]!;
      return { status: res.statusCode, body: (await res.body.json()) as any };
    };
    expect((await mutate('session.login', { username: ADMIN_USER, password: 'not-the-password' })).status).toBe(401);
    expect((await mutate('session.login', { username: ADMIN_USER, password: ADMIN_PASSWORD })).status).toBe(200);
    const created = await mutate('resources.create', { resource: 'services', body: { name: 'console-audited', encryptionRequired: true } });
    expect(created.body.result?.data, JSON.stringify(created.body)).toBeDefined();
    const serviceId = created.body.result.data.id as string;
    expect((await mutate('resources.update', { resource: 'services', id: serviceId, body: { name: 'console-audited-2' }, op: 'patch' })).status).toBe(
      200,
    );
    expect((await mutate('resources.delete', { resource: 'services', id: 'nope' })).status).toBe(404);

    const list = await entries('source = "console"');
    expect(list.map((e) => [e.action, e.entityType, e.entityId, e.outcome, e.errorCode])).toEqual([
      ['login', 'api-sessions', null, 'failure', 'INVALID_AUTH'],
      ['login', 'api-sessions', expect.any(String), 'success', null],
      ['create', 'services', serviceId, 'success', null],
      ['patch', 'services', serviceId, 'success', null],
      ['delete', 'services', 'nope', 'failure', 'NOT_FOUND'],
    ]);
    expect(list[0]).toMatchObject({ principal: ADMIN_USER, authMethod: 'password', identityId: null });
    expect(list[2]).toMatchObject({
      route: 'POST /services',
      identityName: 'Default Admin',
      apiSessionId: list[1]!.entityId,
      sourceAddress: '127.0.0.1',
    });
  });
});

describe('retention', () => {
  it('audit.retention (default 2160h) and audit.max_entries bound the log', async () => {
    const defaults = resolveConfig({}).config.audit;
    expect(defaults).toEqual({ retention: '2160h', max_entries: 1_000_000 });
    const dir = tempDir();
    writeFileSync(join(dir, 'weft.yml'), 'audit:\n  retention: 1h\n  max_entries: 5000\n');
    expect(resolveConfig({ configFile: join(dir, 'weft.yml') }).config.audit).toEqual({ retention: '1h', max_entries: 5000 });
    writeFileSync(join(dir, 'weft.yml'), 'audit:\n  retention: forever\n');
    expect(() => resolveConfig({ configFile: join(dir, 'weft.yml') })).toThrow(/audit\.retention/);

    const total = async () => (await app.core.store.getSql<{ n: number }>('SELECT count(*) AS n FROM audit_log'))!.n;
    const before = await total();
    expect(before).toBeGreaterThan(10);
    // the newest 10 stay
    expect(await pruneAuditLog(app.core, { retentionMs: parseDuration('2160h'), maxEntries: 10 })).toBe(before - 10);
    expect(await total()).toBe(10);
    const newest = (await admin.get('/audit-log?limit=1')).body.data[0].id;
    clock.advance(parseDuration('2h'));
    const later = await app.adminClient();
    expect((await later.post('/services', { name: '' })).status).toBe(400);
    // entries older than an hour go: what is left is the new login and the failed write
    await pruneAuditLog(app.core, { retentionMs: parseDuration('1h'), maxEntries: 1000 });
    const left = (await later.get('/audit-log')).body.data;
    expect(left.map((e: Entry) => [e.action, e.entityType, e.outcome])).toEqual([
      ['create', 'services', 'failure'],
      ['login', 'api-sessions', 'success'],
    ]);
    expect(left.map((e: Entry) => e.id)).not.toContain(newest);
    await later.close();
  });
});
