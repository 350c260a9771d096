// An identity's "last seen" outlives its API sessions (migration 019, core/policy/identities.ts), on SQLite and
// PostgreSQL in one file: kept at logout (to the millisecond of its last activity, also when that activity was not yet
// written through), at expiry (a token used after the timeout, the sweep), when the identity's sessions are ended
// (disable); only ever moving forward, also under many logins (some refused) and session deletions in the same tick;
// gone with the identity.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiSessionsOf } from '../../src/main/core/auth/index';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ManualClock, MINUTE } from '../support/clock';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { STORE_KINDS } from '../support/bothStores';
import { createUser, login } from '../support/users';

let server: PostgresServer | undefined;
afterAll(async () => server?.stop());

describe.each(STORE_KINDS)('identity last seen on %s', (kind) => {
  let app: TestApp;
  let admin: ApiClient;
  const clock = new ManualClock('2026-03-02T10:00:00.000Z');
  const iso = () => clock.now().toISOString();
  const view = async (id: string) => {
    const r = await admin.get(`/identities/${id}`);
    expect(r.status, r.text).toBe(200);
    return r.body.data as { hasApiSession: boolean; lastSeenAt: string | null };
  };
  const kept = async (id: string) =>
    (await app.core.store.getSql<{ last_seen_at: string }>('SELECT last_seen_at FROM identity_last_seen WHERE identity_id = ?', id))?.last_seen_at;
  /** past the session timeout: the admin logs in again */
  const pastTimeout = async () => {
    clock.advance(31 * MINUTE);
    await admin.login(ADMIN_USER, ADMIN_PASSWORD);
  };

  beforeAll(async () => {
    let database: string | undefined;
    if (kind === 'postgres') {
      server ??= await startPostgres();
      database = await server.createDatabase();
    }
    app = await startTestApp({ database, clock, routerListener: 'off', ctrlListener: 'off' });
    admin = await app.adminClient();
  }, 120_000);
  afterAll(async () => {
    await admin?.close();
    await app?.stop();
  });

  it('never seen: null; after logout: the last activity, offline', async () => {
    const id = await createUser(admin, `logout-${kind}`, 'logout-password-1');
    expect(await view(id)).toMatchObject({ hasApiSession: false, lastSeenAt: null });

    const { client } = await login(app, `logout-${kind}`, 'logout-password-1');
    expect(await view(id)).toMatchObject({ hasApiSession: true, lastSeenAt: iso() });
    clock.advance(4_000);
    expect((await client.get('/current-identity', { api: 'client' })).status).toBe(200);
    const active = iso();
    clock.advance(250); // activity less than a second after the last written one is kept in memory only
    expect((await client.get('/current-identity', { api: 'client' })).status).toBe(200);
    const last = iso();
    expect(last).not.toBe(active);
    expect((await client.del('/current-api-session', { api: 'client' })).status).toBe(200);
    clock.advance(MINUTE);

    expect(await view(id)).toEqual(expect.objectContaining({ hasApiSession: false, lastSeenAt: last }));
    expect(await kept(id)).toBe(last);
    // the list shows it too
    const listed = await admin.get(`/identities?filter=${encodeURIComponent(`id = "${id}"`)}`);
    expect(listed.body.data[0]).toMatchObject({ hasApiSession: false, lastSeenAt: last });
    await client.close();
  });

  it('kept when the session expires: a token used after the timeout, and the sweep', async () => {
    const id = await createUser(admin, `expiry-${kind}`, 'expiry-password-1');
    const a = await login(app, `expiry-${kind}`, 'expiry-password-1');
    clock.advance(2_000);
    const b = await login(app, `expiry-${kind}`, 'expiry-password-1');
    clock.advance(3_000);
    expect((await a.client.get('/current-identity', { api: 'client' })).status).toBe(200);
    const lastOfA = iso();
    const lastOfB = b.session.lastActivityAt as string;
    expect(lastOfB < lastOfA).toBe(true);

    await pastTimeout();
    // b's token after the timeout: refused, its session deleted; a's, by the sweep
    expect((await b.client.get('/current-identity', { api: 'client' })).status).toBe(401);
    expect(await view(id)).toMatchObject({ hasApiSession: true, lastSeenAt: lastOfA });
    expect(await kept(id)).toBe(lastOfB);
    await apiSessionsOf(app.core).sweep();
    expect(await view(id)).toMatchObject({ hasApiSession: false, lastSeenAt: lastOfA });
    expect(await kept(id)).toBe(lastOfA);
    await a.client.close();
    await b.client.close();
  });

  it('kept when the identity is disabled (its sessions ended), and never moved back by an older session', async () => {
    const id = await createUser(admin, `disable-${kind}`, 'disable-password-1');
    const older = await login(app, `disable-${kind}`, 'disable-password-1');
    const olderAt = iso();
    clock.advance(10_000);
    const newer = await login(app, `disable-${kind}`, 'disable-password-1');
    const newerAt = iso();
    // the newer session ends first; then the older one (less recent activity) must not move last seen back
    expect((await newer.client.del('/current-api-session', { api: 'client' })).status).toBe(200);
    expect(await kept(id)).toBe(newerAt);
    clock.advance(MINUTE);
    expect((await admin.post(`/identities/${id}/disable`, { durationMinutes: 5 })).status).toBe(200);
    expect(await app.core.store.getSql('SELECT id FROM api_sessions WHERE identity_id = ?', id)).toBeUndefined();
    expect(await kept(id)).toBe(newerAt);
    expect(olderAt < newerAt).toBe(true);
    expect(await view(id)).toMatchObject({ hasApiSession: false, lastSeenAt: newerAt });
    expect((await admin.post(`/identities/${id}/enable`, {})).status).toBe(200);
    await older.client.close();
    await newer.client.close();
  });

  it('many logins (some refused) and session deletions in the same tick: the latest activity, nothing lost', async () => {
    const name = `burst-${kind}`;
    const id = await createUser(admin, name, 'burst-password-1');
    const clients = [];
    const activity: string[] = [];
    // eight sessions, each last active at its own time (a second apart: each written through)
    for (let i = 0; i < 8; i++) {
      const c = (await login(app, name, 'burst-password-1')).client;
      clock.advance(1_000);
      expect((await c.get('/current-identity', { api: 'client' })).status).toBe(200);
      activity.push(iso());
      clients.push(c);
    }
    const latest = activity[activity.length - 1]!;
    const sessions = (await admin.get(`/api-sessions?filter=${encodeURIComponent(`identityId = "${id}"`)}&limit=100`)).body.data as Array<{
      id: string;
    }>;
    expect(sessions).toHaveLength(8);
    clock.advance(MINUTE);
    const lastLoginAt = iso();

    // in one tick: every session deleted by the admin (in reverse order of activity), 4 logins, 4 refused logins
    const anon = Array.from({ length: 8 }, () => app.client());
    const replies = await Promise.all([
      ...[...sessions].reverse().map((s) => admin.del(`/api-sessions/${s.id}`)),
      ...anon.map((c, i) =>
        c.post('/authenticate?method=password', { username: name, password: i % 2 ? 'wrong-password' : 'burst-password-1' }, { api: 'client' }),
      ),
    ]);
    expect(replies.slice(0, 8).map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(replies.slice(8).map((r) => r.status)).toEqual([200, 401, 200, 401, 200, 401, 200, 401]);

    // the deleted sessions' latest activity is kept; the four new ones are live, last active now
    expect(await kept(id)).toBe(latest);
    expect(await view(id)).toMatchObject({ hasApiSession: true, lastSeenAt: lastLoginAt });
    // those end too, in one tick, with activity of their own first
    clock.advance(2_000);
    const live = anon.filter((_, i) => i % 2 === 0);
    live.forEach((c, i) => (c.token = replies[8 + 2 * i]!.body.data.token));
    expect((await Promise.all(live.map((c) => c.get('/current-identity', { api: 'client' })))).map((r) => r.status)).toEqual(Array(4).fill(200));
    const end = iso();
    expect((await Promise.all(live.map((c) => c.del('/current-api-session', { api: 'client' })))).map((r) => r.status)).toEqual(Array(4).fill(200));
    expect(await view(id)).toMatchObject({ hasApiSession: false, lastSeenAt: end });
    expect(await kept(id)).toBe(end);
    for (const c of [...clients, ...anon]) await c.close();
  });

  it('goes with the identity, also while it has live sessions', async () => {
    const id = await createUser(admin, `gone-${kind}`, 'gone-password-1');
    const first = await login(app, `gone-${kind}`, 'gone-password-1');
    expect((await first.client.del('/current-api-session', { api: 'client' })).status).toBe(200);
    expect(await kept(id)).toBe(iso());
    clock.advance(5_000);
    const second = await login(app, `gone-${kind}`, 'gone-password-1');
    expect((await admin.del(`/identities/${id}`)).status).toBe(200);
    expect(await kept(id)).toBeUndefined();
    expect(await app.core.store.getSql('SELECT id FROM api_sessions WHERE identity_id = ?', id)).toBeUndefined();
    expect((await second.client.get('/current-identity', { api: 'client' })).status).toBe(401);
    await first.client.close();
    await second.client.close();
  });
});
