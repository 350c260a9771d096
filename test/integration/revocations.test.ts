import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { createUser, login } from '../support/users';

let app: TestApp;
let admin: ApiClient;

useTestApp((a, c) => ((app = a), (admin = c)));

describe('/revocations (Management API)', () => {
  it('creates, lists and gets revocations; a revocation of the same id replaces the earlier one', async () => {
    const jti = randomUUID();
    const before = Date.now();
    const r = await admin.post('/revocations', { id: jti, type: 'JTI', tags: { why: 'leaked' } });
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ id: jti, _links: { self: { href: `./revocations/${jti}` } } });

    const g = (await admin.get(`/revocations/${jti}`)).body.data;
    expect(g).toMatchObject({ id: jti, type: 'JTI', tags: { why: 'leaked' }, _links: { self: { href: `./revocations/${jti}` } } });
    // kept as long as a revoked credential could live: the API session timeout
    expect(Date.parse(g.expiresAt) - before).toBeGreaterThanOrEqual(app.core.config.sessionTimeoutMs - 1000);

    const again = await admin.post('/revocations', { id: jti, type: 'JTI' });
    expect(again.status).toBe(201);
    expect((await admin.get(`/revocations/${jti}`)).body.data.tags).toEqual({});

    const list = await admin.get(`/revocations?filter=${encodeURIComponent(`type = "JTI"`)}`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: any) => x.id)).toEqual([jti]);
    expect(list.body.meta.pagination).toMatchObject({ totalCount: 1 });
    expect((await admin.get('/revocations/nope')).status).toBe(404);
    // no update or delete in OpenZiti's API
    expect((await admin.del(`/revocations/${jti}`)).status).toBe(405);
    expect((await admin.patch(`/revocations/${jti}`, { tags: {} })).status).toBe(405);
  });

  it('refuses bad revocations with a field error and changes nothing', async () => {
    const bad = async (body: unknown, field: string, status = 400) => {
      const r = await admin.post('/revocations', body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      if (status === 400) expect(r.body.error).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field } });
      return r;
    };
    await bad({ type: 'JTI' }, 'id');
    await bad({ id: randomUUID() }, 'type');
    await bad({ id: randomUUID(), type: 'SESSION' }, 'type');
    await bad({ id: 'not-a-uuid', type: 'JTI' }, 'id');
    await bad({ id: 'not-a-session', type: 'API_SESSION' }, 'id');
    await bad({ id: null, type: 'JTI' }, 'id');
    const unknownIdentity = await bad({ id: 'no-such-identity', type: 'IDENTITY' }, 'id', 404);
    expect(unknownIdentity.body.error.code).toBe('NOT_FOUND');
    expect((await admin.get('/revocations?filter=type != "JTI"')).body.data).toEqual([]);
  });

  it("an IDENTITY revocation ends the identity's API sessions; an API_SESSION revocation ends that one", async () => {
    const id = await createUser(admin, 'revoked-user', 'revoked-password-1');
    const first = await login(app, 'revoked-user', 'revoked-password-1');
    expect((await first.client.get('/current-api-session', { api: 'client' })).status).toBe(200);
    expect((await admin.post('/revocations', { id, type: 'IDENTITY' })).status).toBe(201);
    expect((await first.client.get('/current-api-session', { api: 'client' })).status).toBe(401);
    // logging in again later works: only sessions issued before the revocation are revoked
    const second = await login(app, 'revoked-user', 'revoked-password-1');
    expect((await second.client.get('/current-api-session', { api: 'client' })).status).toBe(200);

    expect((await admin.post('/revocations', { id: second.session.id, type: 'API_SESSION' })).status).toBe(201);
    expect((await second.client.get('/current-api-session', { api: 'client' })).status).toBe(401);
    expect((await admin.get(`/revocations/${second.session.id}`)).body.data.type).toBe('API_SESSION');
    await first.client.close();
    await second.client.close();
  });

  it('is for administrators', async () => {
    await createUser(admin, 'plain-user', 'plain-password-1');
    const { client } = await login(app, 'plain-user', 'plain-password-1');
    expect((await client.get('/revocations')).status).toBe(401);
    expect((await client.post('/revocations', { id: randomUUID(), type: 'JTI' })).status).toBe(401);
    expect((await app.client().get('/revocations')).status).toBe(401);
    await client.close();
  });
});
