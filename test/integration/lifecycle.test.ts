import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeLogin } from '../../src/main/core/auth/authenticate';
import { LOGIN_IDENTITY } from '../../src/main/core/auth/disabled';
import { getRow } from '../../src/main/core/store/rows';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ManualClock, MINUTE } from '../support/clock';
import { JwksServer, signingKey, signJwt, type SigningKey } from '../support/jwks';
import { createUser, epochSeconds, login } from '../support/users';

let app: TestApp;
let admin: ApiClient;
let clock: ManualClock;
let jwks: JwksServer;
let key: SigningKey;
let userId: string;

const passwordLogin = () => app.client().post('/authenticate?method=password', { username: 'life-user', password: 'life-password' });
const jwtLogin = async () => {
  const token = await signJwt(key, { iss: 'life-issuer', aud: 'weft', sub: userId }, epochSeconds(clock));
  return app.client().post('/authenticate?method=ext-jwt', {}, { headers: { authorization: `Bearer ${token}` } });
};
const certLogin = async () => {
  const identity = (await getRow(app.core.store, LOGIN_IDENTITY, 'SELECT * FROM identities WHERE id = ?', userId))!;
  return () => completeLogin(app.core, { method: 'cert', identity, authenticator: { id: 'a-cert' } }, {}, { ipAddress: '127.0.0.1' });
};

beforeAll(async () => {
  clock = new ManualClock();
  jwks = new JwksServer();
  const url = await jwks.start();
  key = await signingKey('life-kid');
  jwks.keys = [key.jwk];
  app = await startTestApp({ clock });
  admin = await app.adminClient();
  userId = await createUser(admin, 'life-user', 'life-password');
  await admin.create('/external-jwt-signers', { name: 'life', issuer: 'life-issuer', audience: 'weft', enabled: true, jwksEndpoint: url });
});
afterAll(async () => {
  await admin.close();
  await app.stop();
  await jwks.stop();
});

describe('disable and enable', () => {
  it('a timed disable ends existing API sessions, refuses logins by every method, and lapses by the clock', async () => {
    const { client } = await login(app, 'life-user', 'life-password');
    expect((await jwtLogin()).status).toBe(200);
    expect((await admin.get(`/identities/${userId}`)).body.data.hasApiSession).toBe(true);

    const r = await admin.post(`/identities/${userId}/disable`, { durationMinutes: 10 });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({});
    expect((await client.get('/current-identity')).status).toBe(401);
    const view = (await admin.get(`/identities/${userId}`)).body.data;
    expect(view).toMatchObject({ disabled: true, disabledAt: clock.now().toISOString(), hasApiSession: false });
    expect(Date.parse(view.disabledUntil) - clock.now().getTime()).toBe(10 * MINUTE);
    expect((await admin.get(`/identities?filter=${encodeURIComponent('disabled = true')}`)).body.data.map((i: any) => i.id)).toContain(userId);

    expect((await passwordLogin()).status).toBe(401);
    expect((await jwtLogin()).status).toBe(401);
    await expect((await certLogin())()).rejects.toThrow(expect.objectContaining({ status: 401 }));

    clock.advance(10 * MINUTE + 1);
    expect((await passwordLogin()).status).toBe(200);
    expect((await jwtLogin()).status).toBe(200);
    expect(await (await certLogin())()).toMatchObject({ identityId: userId });
    expect((await admin.get(`/identities/${userId}`)).body.data).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null });
    await client.close();
  });

  it('durationMinutes 0 disables until enabled; enable clears every disabled field', async () => {
    expect((await admin.post(`/identities/${userId}/disable`, { durationMinutes: 0 })).status).toBe(200);
    clock.advance(20 * MINUTE);
    await admin.close();
    admin = await app.adminClient();
    expect((await passwordLogin()).status).toBe(401);
    expect((await admin.get(`/identities/${userId}`)).body.data).toMatchObject({ disabled: true, disabledUntil: null });
    expect((await admin.post(`/identities/${userId}/enable`)).status).toBe(200);
    expect((await admin.get(`/identities/${userId}`)).body.data).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null });
    expect((await passwordLogin()).status).toBe(200);
  });

  it('bad requests and callers are refused without changing anything', async () => {
    for (const body of [{}, { durationMinutes: -1 }, { durationMinutes: 'ten' }, { durationMinutes: 1.5 }, null]) {
      const r = await admin.post(`/identities/${userId}/disable`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.cause.field).toMatch(/durationMinutes|\(root\)/);
    }
    expect((await admin.post('/identities/nope/disable', { durationMinutes: 1 })).status).toBe(404);
    expect((await admin.post('/identities/nope/enable')).status).toBe(404);
    const defaultAdmin = (await admin.get('/identities?filter=isDefaultAdmin = true')).body.data[0].id;
    expect((await admin.post(`/identities/${defaultAdmin}/disable`, { durationMinutes: 1 })).status).toBe(400);
    const { client } = await login(app, 'life-user', 'life-password');
    expect((await client.post(`/identities/${userId}/disable`, { durationMinutes: 1 })).status).toBe(401);
    expect((await client.get('/current-identity')).status).toBe(200);
    expect((await admin.get(`/identities/${userId}`)).body.data.disabled).toBe(false);
    await client.close();
  });
});

describe('data flow tracing', () => {
  it('stores a trace spec and reports it until it runs out', async () => {
    const r = await admin.put(`/identities/${userId}/trace`, { enabled: true, duration: '5m', traceId: 'trace-1', channels: ['ctrl', 'edge'] });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ enabled: true, traceId: 'trace-1', until: new Date(clock.now().getTime() + 5 * MINUTE).toISOString() });
    expect((await admin.get(`/identities/${userId}/trace`)).body.data).toMatchObject({
      enabled: true,
      traceId: 'trace-1',
      channels: ['ctrl', 'edge'],
    });
    clock.advance(6 * MINUTE);
    expect((await admin.get(`/identities/${userId}/trace`)).body.data).toMatchObject({ enabled: false, traceId: 'trace-1' });

    const generated = (await admin.put(`/identities/${userId}/trace`, { enabled: true })).body.data;
    expect(generated.traceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(generated.until) - clock.now().getTime()).toBe(10 * MINUTE);
    const off = await admin.put(`/identities/${userId}/trace`, { enabled: false, traceId: generated.traceId });
    expect(off.body.data).toMatchObject({ enabled: false, traceId: generated.traceId });
    expect((await admin.get(`/identities/${userId}/trace`)).body.data.enabled).toBe(false);

    const bad = await admin.put(`/identities/${userId}/trace`, { enabled: true, duration: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.cause.field).toBe('duration');
    expect((await admin.put(`/identities/${userId}/trace`, { enabled: 'yes' })).body.error.cause.field).toBe('enabled');
    expect((await admin.put('/identities/nope/trace', { enabled: true })).status).toBe(404);
  });
});
