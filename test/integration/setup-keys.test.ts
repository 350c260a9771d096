// Setup keys (/weft/setup-keys, redeemed at the Client API's /weft/setup-keys/redeem), on SQLite and PostgreSQL in one
// file: the key shown once and kept as a digest, a redeem making a Device identity with the key's attributes and an
// OTT enrollment JWT, maxUses held under 12 redeems in the same tick, expired / revoked / unknown keys refused, bad
// input changing nothing, callers without the identity permission refused, writes audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ManualClock, MINUTE } from '../support/clock';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { STORE_KINDS } from '../support/bothStores';
import { createUser, login } from '../support/users';
import { csr } from '../support/pki';

let server: PostgresServer | undefined;
afterAll(async () => server?.stop());

const payloadOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));

describe.each(STORE_KINDS)('setup keys on %s', (kind) => {
  let app: TestApp;
  let admin: ApiClient;
  let anon: ApiClient;
  const clock = new ManualClock();
  const inAnHour = () => new Date(clock.now().getTime() + 60 * MINUTE).toISOString();
  const redeem = (body: unknown) => anon.post('/weft/setup-keys/redeem', body, { api: 'client' });
  const makeKey = async (body: Record<string, unknown>) => {
    const r = await admin.post('/weft/setup-keys', { expiresAt: inAnHour(), ...body });
    expect(r.status, r.text).toBe(201);
    return r.body.data as { id: string; key: string };
  };
  const count = async (path: string, filter: string) =>
    (await admin.get(`${path}?limit=1&filter=${encodeURIComponent(filter)}`)).body.meta.pagination.totalCount as number;

  beforeAll(async () => {
    let database: string | undefined;
    if (kind === 'postgres') {
      server ??= await startPostgres();
      database = await server.createDatabase();
    }
    app = await startTestApp({ database, clock });
    admin = await app.adminClient();
    anon = app.client();
  }, 120_000);
  afterAll(async () => {
    await anon?.close();
    await admin?.close();
    await app?.stop();
  });

  it('shows the key once, and a redeem makes a Device identity with its attributes and an OTT enrollment', async () => {
    const { id, key } = await makeKey({ name: 'office', maxUses: 10, roleAttributes: ['office', 'laptops'], identityNamePrefix: 'office-pc' });
    expect(key).toMatch(/^wsk_/);
    const got = (await admin.get(`/weft/setup-keys/${id}`)).body.data;
    expect(got).toMatchObject({ name: 'office', maxUses: 10, uses: 0, revoked: false, roleAttributes: ['office', 'laptops'] });
    expect(JSON.stringify(got)).not.toContain(key);
    const digest = await app.core.store.getSql<{ digest: string }>('SELECT digest FROM setup_keys WHERE id = ?', id);
    expect(digest!.digest).toMatch(/^[0-9a-f]{64}$/);

    const r = await redeem({ key });
    expect(r.status, r.text).toBe(201);
    const { identityId, enrollmentJwt } = r.body.data;
    const identity = (await admin.get(`/identities/${identityId}`)).body.data;
    expect(identity.name).toMatch(/^office-pc-[0-9a-f]{8}$/);
    expect(identity.roleAttributes).toEqual(['office', 'laptops']);
    expect(identity.type.name).toBe('Device');
    expect(identity.isAdmin).toBe(false);
    expect(identity.enrollment.ott.jwt).toBe(enrollmentJwt);
    expect(payloadOf(enrollmentJwt)).toMatchObject({ em: 'ott', sub: identityId });

    // a free name is taken as given; a taken one gets the prefix and a random part
    const named = await redeem({ key, name: 'alices-laptop' });
    expect((await admin.get(`/identities/${named.body.data.identityId}`)).body.data.name).toBe('alices-laptop');
    const again = await redeem({ key, name: 'alices-laptop' });
    expect((await admin.get(`/identities/${again.body.data.identityId}`)).body.data.name).toMatch(/^office-pc-/);
    expect((await admin.get(`/weft/setup-keys/${id}`)).body.data.uses).toBe(3);
  });

  it('holds maxUses under 12 redeems in the same tick: exactly 5 identities, 7 refusals', async () => {
    const { id, key } = await makeKey({ name: 'burst', maxUses: 5, roleAttributes: ['burst'] });
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => redeem({ key, name: `burst-${i}` })));
    const ok = replies.filter((r) => r.status === 201);
    const refused = replies.filter((r) => r.status !== 201);
    expect(ok.length).toBe(5);
    expect(refused.length).toBe(7);
    for (const r of refused) {
      expect(r.status).toBe(410);
      expect(r.body.error.code).toBe('SETUP_KEY_USED_UP');
    }
    expect(new Set(ok.map((r) => r.body.data.identityId)).size).toBe(5);
    expect(await count('/identities', 'anyOf(roleAttributes) = "burst"')).toBe(5);
    expect((await admin.get(`/weft/setup-keys/${id}`)).body.data.uses).toBe(5);
  });

  it("enrolls with the key's own JWT: each enrollment a new device; 8 at once against 3 uses, a bad CSR among them, leave 3", async () => {
    const made = await admin.post('/weft/setup-keys', { name: 'jwt-key', expiresAt: inAnHour(), maxUses: 3, roleAttributes: ['by-jwt'] });
    expect(made.status, made.text).toBe(201);
    const { id, key, enrollmentJwt } = made.body.data as { id: string; key: string; enrollmentJwt: string };
    // OpenZiti's enrollment JWT, as stock enrollers read it: em ott, the key as jti, the key's expiry
    expect(payloadOf(enrollmentJwt)).toMatchObject({ em: 'ott', jti: key, sub: id, exp: Math.floor(Date.parse(inAnHour()) / 1000) });
    const enroll = (csrPem: string) =>
      anon.req('POST', `/enroll?method=ott&token=${encodeURIComponent(key)}`, undefined, {
        api: 'client',
        raw: csrPem,
        contentType: 'application/x-pem-file',
        headers: { accept: 'application/json' },
      });
    const csrs = await Promise.all(Array.from({ length: 8 }, (_, i) => csr('EC-P256', `jwt-device-${i}`)));
    // a CSR that is no CSR: refused, and it neither makes an identity nor spends a use
    const replies = await Promise.all([enroll('not a csr'), ...csrs.map((c) => enroll(c.csrPem))]);
    expect(replies[0]!.status).toBe(400);
    const ok = replies.filter((r) => r.status === 200);
    expect(ok.length).toBe(3);
    for (const r of replies.slice(1).filter((x) => x.status !== 200)) expect(r.body.error.code).toBe('SETUP_KEY_USED_UP');
    expect((await admin.get(`/weft/setup-keys/${id}`)).body.data.uses).toBe(3);
    // three enrolled devices with the key's attributes, no enrollment left pending
    const devices = (await admin.get(`/identities?filter=${encodeURIComponent('anyOf(roleAttributes) = "by-jwt"')}`)).body.data as any[];
    expect(devices.length).toBe(3);
    for (const d of devices) expect(d).toMatchObject({ type: { name: 'Device' }, enrollment: {}, authenticators: { cert: {} } });
  });

  it('refuses expired, revoked and unknown keys, and unknown and revoked alike', async () => {
    const before = await count('/identities', 'true');
    const soon = await makeKey({ name: 'soon', expiresAt: new Date(clock.now().getTime() + MINUTE).toISOString() });
    const revoked = await makeKey({ name: 'revoked', roleAttributes: ['x'] });
    const patched = await admin.patch(`/weft/setup-keys/${revoked.id}`, { revoked: true });
    expect(patched.status, patched.text).toBe(200);
    // a revoked key cannot be brought back
    expect((await admin.patch(`/weft/setup-keys/${revoked.id}`, { revoked: false })).status).toBe(400);
    clock.advance(2 * MINUTE);
    const expired = await redeem({ key: soon.key });
    expect(expired.status).toBe(410);
    expect(expired.body.error.code).toBe('SETUP_KEY_EXPIRED');
    const gone = await redeem({ key: revoked.key });
    const unknown = await redeem({ key: 'wsk_not-a-key' });
    expect(gone.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(gone.body.error.code).toBe('INVALID_SETUP_KEY');
    expect(gone.body.error.message).toBe(unknown.body.error.message);
    expect(await count('/identities', 'true')).toBe(before);
    expect((await admin.get(`/weft/setup-keys/${soon.id}`)).body.data.uses).toBe(0);
  });

  it('refuses bad input with COULD_NOT_VALIDATE and changes nothing', async () => {
    const identities = await count('/identities', 'true');
    const keys = await count('/weft/setup-keys', 'true');
    const { key } = await makeKey({ name: 'valid' });
    for (const body of [{}, { key: 42 }, { key: '' }, { key, name: 7 }, 'nonsense']) {
      const r = await redeem(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('COULD_NOT_VALIDATE');
    }
    for (const body of [
      { name: 'past', expiresAt: new Date(clock.now().getTime() - MINUTE).toISOString() },
      { name: 'no-expiry' },
      { name: 'zero', expiresAt: inAnHour(), maxUses: 0 },
      { name: 'fraction', expiresAt: inAnHour(), maxUses: 1.5 },
      { name: 'bad-date', expiresAt: 'tomorrow' },
      { expiresAt: inAnHour() },
    ]) {
      const r = await admin.post('/weft/setup-keys', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('COULD_NOT_VALIDATE');
    }
    expect(await count('/identities', 'true')).toBe(identities);
    expect(await count('/weft/setup-keys', 'true')).toBe(keys + 1);
    // names are unique
    const dup = await admin.post('/weft/setup-keys', { name: 'valid', expiresAt: inAnHour() });
    expect(dup.status).toBe(400);
    expect(await count('/weft/setup-keys', 'true')).toBe(keys + 1);
  });

  it('is audited, and refused to callers without the identity permission', async () => {
    const audit = (await admin.get('/audit-log?limit=100&filter=' + encodeURIComponent('entityType = "weft/setup-keys"'))).body.data;
    expect(audit.some((e: any) => e.action === 'create' && e.outcome === 'success')).toBe(true);
    expect(audit.some((e: any) => ['update', 'patch'].includes(e.action) && e.outcome === 'success')).toBe(true);
    await createUser(admin, `sk-user-${kind}`, 'sk-password-1');
    const { client } = await login(app, `sk-user-${kind}`, 'sk-password-1');
    const before = await count('/weft/setup-keys', 'true');
    for (const r of [await client.get('/weft/setup-keys'), await client.post('/weft/setup-keys', { name: 'sneaky', expiresAt: inAnHour() })]) {
      expect(r.status).toBe(401);
    }
    expect(await count('/weft/setup-keys', 'true')).toBe(before);
    await client.close();
  });
});
