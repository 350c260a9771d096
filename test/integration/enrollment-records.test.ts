import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { csr, decodeJwt } from '../support/pki';

let app: TestApp;
let admin: ApiClient;

useTestApp((a, c) => ((app = a), (admin = c)));

const inOneHour = () => new Date(Date.now() + 3600_000).toISOString();
const identity = (name: string, extra: object = {}) => admin.create('/identities', { name, type: 'User', isAdmin: false, ...extra });
const count = async (path: string) => (await admin.get(path)).body.meta.pagination.totalCount as number;

describe('/enrollments', () => {
  it('create → 201; get shows every field; the identity view lists it', async () => {
    const id = await identity('rec-ott');
    const expiresAt = inOneHour();
    const r = await admin.post('/enrollments', { method: 'ott', identityId: id, expiresAt });
    expect(r.status).toBe(201);
    const eid = r.body.data.id;
    expect(r.body.data._links.self.href).toBe(`./enrollments/${eid}`);
    const e = (await admin.get(`/enrollments/${eid}`)).body.data;
    expect(e).toMatchObject({
      id: eid,
      method: 'ott',
      identityId: id,
      identity: { id, name: 'rec-ott', urlName: 'identities', entity: 'identities' },
      expiresAt,
      token: expect.any(String),
      jwt: expect.any(String),
      ca: null,
      caId: null,
      username: '',
      tags: {},
    });
    expect(decodeJwt(e.jwt).payload).toMatchObject({ em: 'ott', jti: e.token, sub: id, exp: Math.floor(Date.parse(expiresAt) / 1000) });
    const view = (await admin.get(`/identities/${id}`)).body.data.enrollment;
    expect(view).toEqual({ ott: { id: eid, token: e.token, jwt: e.jwt, expiresAt } });
    expect((await admin.get(`/identities/${id}/enrollments`)).body.data.map((x: { id: string }) => x.id)).toEqual([eid]);
  });

  it('409 when an enrollment of the same method is outstanding; other methods are fine', async () => {
    const id = await identity('rec-409', { enrollment: { ott: true } });
    const dup = await admin.post('/enrollments', { method: 'ott', identityId: id, expiresAt: inOneHour() });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('ENROLLMENT_EXISTS');
    expect((await admin.post('/enrollments', { method: 'updb', identityId: id, expiresAt: inOneHour(), username: 'rec-409-user' })).status).toBe(201);
    expect(await count(`/identities/${id}/enrollments`)).toBe(2);
  });

  it('validation: unknown identity, past expiry, ottca without a CA, updb without a username, taken username', async () => {
    const id = await identity('rec-validate');
    const bad = async (body: object, field: string) => {
      const r = await admin.post('/enrollments', body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('COULD_NOT_VALIDATE');
      expect(r.body.error.cause.field).toBe(field);
    };
    await bad({ method: 'ott', identityId: 'nope', expiresAt: inOneHour() }, 'identityId');
    await bad({ method: 'ott', identityId: id, expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt');
    await bad({ method: 'ott', identityId: id }, 'expiresAt');
    await bad({ method: 'ottca', identityId: id, expiresAt: inOneHour(), caId: 'missing' }, 'caId');
    await bad({ method: 'updb', identityId: id, expiresAt: inOneHour() }, 'username');
    await bad({ method: 'updb', identityId: id, expiresAt: inOneHour(), username: 'admin' }, 'username');
    await bad({ method: 'erott', identityId: id, expiresAt: inOneHour() }, 'method');
    expect(await count(`/identities/${id}/enrollments`)).toBe(0);
  });

  it('identity create with a bad enrollment request creates nothing', async () => {
    const before = await count('/identities');
    const r = await admin.post('/identities', { name: 'rec-bad-ottca', type: 'User', isAdmin: false, enrollment: { ottca: 'no-such-ca' } });
    expect(r.status).toBe(400);
    expect(r.body.error.cause.field).toBe('enrollment.ottca');
    const u = await admin.post('/identities', { name: 'rec-bad-updb', type: 'User', isAdmin: false, enrollment: { updb: 'adm' } });
    expect(u.status).toBe(400);
    expect(u.body.error.cause.field).toBe('enrollment.updb');
    expect(await count('/identities')).toBe(before);
  });

  it('refresh: new expiry and JWT, the old token no longer enrolls', async () => {
    const id = await identity('rec-refresh', { enrollment: { ott: true } });
    const old = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott;
    const expiresAt = new Date(Date.now() + 2 * 3600_000).toISOString();
    const r = await admin.post(`/enrollments/${old.id}/refresh`, { expiresAt });
    expect(r.status).toBe(200);
    expect(r.body.data.id).toBe(old.id);
    const now = (await admin.get(`/enrollments/${old.id}`)).body.data;
    expect(now.expiresAt).toBe(expiresAt);
    expect(now.token).not.toBe(old.token);
    expect(now.jwt).not.toBe(old.jwt);
    expect(decodeJwt(now.jwt).payload.jti).toBe(now.token);
    const anon = app.client();
    const stale = await anon.post('/enroll/ott', { token: old.token, clientCsr: (await csr()).csrPem }, { api: 'client' });
    expect(stale.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    expect((await anon.post('/enroll/ott', { token: now.token, clientCsr: (await csr()).csrPem }, { api: 'client' })).status).toBe(200);
    // an expired enrollment can be refreshed too
    const id2 = await identity('rec-refresh-expired', { enrollment: { ott: true } });
    const e2 = (await admin.get(`/identities/${id2}`)).body.data.enrollment.ott;
    await app.core.store.runSql('UPDATE enrollments SET expires_at = ? WHERE id = ?', new Date(Date.now() - 1000).toISOString(), e2.id);
    expect((await admin.post(`/enrollments/${e2.id}/refresh`, { expiresAt })).status).toBe(200);
    expect((await admin.post(`/enrollments/${e2.id}/refresh`, { expiresAt: '2000-01-01T00:00:00Z' })).status).toBe(400);
    expect((await admin.post('/enrollments/nope/refresh', { expiresAt })).status).toBe(404);
    await anon.close();
  });

  it('delete removes the enrollment; deleting the identity removes its enrollments', async () => {
    const id = await identity('rec-delete', { enrollment: { ott: true, updb: 'rec-delete-user' } });
    const e = (await admin.get(`/identities/${id}`)).body.data.enrollment;
    expect(Object.keys(e).sort()).toEqual(['ott', 'updb']);
    expect(e.updb.username).toBe('rec-delete-user');
    expect((await admin.del(`/enrollments/${e.ott.id}`)).status).toBe(200);
    expect((await admin.get(`/enrollments/${e.ott.id}`)).status).toBe(404);
    expect((await admin.del(`/identities/${id}`)).status).toBe(200);
    expect((await admin.get(`/enrollments/${e.updb.id}`)).status).toBe(404);
  });

  it('requires the enrollment permission', async () => {
    const id = await identity('rec-perm-target');
    const reader = await identity('rec-reader', { permissions: ['enrollment.read'] });
    await admin.post('/authenticators', { method: 'updb', identityId: reader, username: 'rec-reader', password: 'reader-pass-1' });
    const c = app.client();
    await c.login('rec-reader', 'reader-pass-1');
    expect((await c.get('/enrollments')).status).toBe(200);
    const denied = await c.post('/enrollments', { method: 'ott', identityId: id, expiresAt: inOneHour() });
    expect(denied.status).toBe(401);
    expect(denied.body.error.code).toBe('UNAUTHORIZED');
    await c.close();
  });
});

describe('username/password enrollment', () => {
  it('sets the password of the enrollment username; the token then dies', async () => {
    const id = await identity('updb-user', { enrollment: { updb: 'updb-user-name' } });
    const e = (await admin.get(`/identities/${id}`)).body.data.enrollment.updb;
    expect(decodeJwt(e.jwt).payload).toMatchObject({ em: 'updb', jti: e.token, sub: id });
    const anon = app.client();
    const weak = await anon.post(`/enroll/updb?token=${e.token}`, { password: 'abc' }, { api: 'client' });
    expect(weak.status).toBe(400);
    expect(weak.body.error.cause.field).toBe('password');
    const wrongUser = await anon.post(`/enroll/updb?token=${e.token}`, { username: 'someone-else', password: 'secret-pass-1' }, { api: 'client' });
    expect(wrongUser.status).toBe(400);
    const r = await anon.post(`/enroll/updb?token=${e.token}`, { username: 'updb-user-name', password: 'secret-pass-1' }, { api: 'client' });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({});
    const again = await anon.post(`/enroll/updb?token=${e.token}`, { password: 'other-pass-1' }, { api: 'client' });
    expect(again.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    await anon.login('updb-user-name', 'secret-pass-1', 'client');
    const me = await anon.get('/current-identity', { api: 'client' });
    expect(me.body.data).toMatchObject({ id, authenticators: { updb: { username: 'updb-user-name' } }, enrollment: {} });
    await anon.close();
  });

  it('the legacy /enroll form finds the method from the token', async () => {
    const id = await identity('updb-legacy', { enrollment: { updb: 'updb-legacy-name' } });
    const e = (await admin.get(`/identities/${id}`)).body.data.enrollment.updb;
    const anon = app.client();
    expect((await anon.post(`/enroll?token=${e.token}`, { password: 'legacy-pass-1' }, { api: 'client' })).status).toBe(200);
    await anon.login('updb-legacy-name', 'legacy-pass-1', 'client');
    await anon.close();
  });

  it('an ott token does not enroll through updb (nor the reverse)', async () => {
    const id = await identity('updb-cross', { enrollment: { ott: true, updb: 'updb-cross-name' } });
    const e = (await admin.get(`/identities/${id}`)).body.data.enrollment;
    const anon = app.client();
    expect((await anon.post(`/enroll/updb?token=${e.ott.token}`, { password: 'cross-pass-1' }, { api: 'client' })).body.error.code).toBe(
      'INVALID_ENROLLMENT_TOKEN',
    );
    expect((await anon.post('/enroll/ott', { token: e.updb.token, clientCsr: (await csr()).csrPem }, { api: 'client' })).body.error.code).toBe(
      'INVALID_ENROLLMENT_TOKEN',
    );
    expect(await count(`/identities/${id}/enrollments`)).toBe(2);
    await anon.close();
  });
});
