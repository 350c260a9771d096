// A check and the write it decides started together with a competing change (same tick, no sleeps): the check is
// made with the write (one transaction, or a conditional statement), so the competitor never slips in between.
// Each case below failed before its fix (audit items in the titles). Runs on both stores (npm run test:postgres
// runs this folder again).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiSessionsOf } from '../../src/main/core/auth/apiSessions';
import { authenticatePassword } from '../../src/main/core/auth/authenticate';
import { disableMfa, verifyMfa } from '../../src/main/core/auth/mfa';
import { ARGON2_CONCURRENCY } from '../../src/main/core/auth/passwords';
import { addRouterTerminator, removeRouterTerminator, updateRouterTerminator } from '../../src/main/core/dataPlane/terminators';
import { applyDelete } from '../../src/main/core/entities/resource';
import { services } from '../../src/main/core/policy/services';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ManualClock } from '../support/clock';
import { ConsoleClient } from '../support/consoleTrpc';
import { authPolicyBody, createUser, epochSeconds, login, secretOf, totp, totpStepStart } from '../support/users';

let app: TestApp;
let admin: ApiClient;
let ui: ConsoleClient;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock(totpStepStart());
  app = await startTestApp({ clock, consoleAddress: '127.0.0.1:0' });
  admin = await app.adminClient();
  ui = await new ConsoleClient(app.urls.console!).login(ADMIN_USER, ADMIN_PASSWORD);
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

const settled = <T>(ps: Array<Promise<T>>) => Promise.allSettled(ps);

describe('checks made with their writes', () => {
  it('A4: two bulk attribute changes of the same identities at once both stay', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await admin.create('/identities', { name: `cta-bulk-${i}`, type: 'Device', isAdmin: false }));
    const [a, b] = await ui.batch('mutate', [
      { path: 'bulk.roleAttributes', input: { resource: 'identities', ids, add: ['cta-a'] } },
      { path: 'bulk.roleAttributes', input: { resource: 'identities', ids, add: ['cta-b'] } },
    ]);
    expect([a!.error, b!.error]).toEqual([undefined, undefined]);
    expect([a!.data.done, b!.data.done]).toEqual([8, 8]);
    for (const id of ids) expect((await admin.get(`/identities/${id}`)).body.data.roleAttributes.sort()).toEqual(['cta-a', 'cta-b']);
  });

  it('A5: a router removing or updating its terminator while the service is deleted does not fail', async () => {
    const router = await admin.create('/edge-routers', { name: 'cta-router' });
    for (const op of ['remove', 'update'] as const) {
      const serviceId = await admin.create('/services', { name: `cta-term-${op}`, encryptionRequired: true });
      const id = await addRouterTerminator(app.core, {
        serviceId,
        routerId: router,
        binding: 'edge',
        address: `hosted:${op}`,
        identity: '',
        cost: 0,
        precedence: 'default',
      });
      const [routerSide, deletion] = await settled<void>([
        op === 'remove' ? removeRouterTerminator(app.core, id) : updateRouterTerminator(app.core, id, { cost: 5 }),
        applyDelete(app.core.system, services, serviceId),
      ]);
      expect(deletion.status).toBe('fulfilled');
      expect(routerSide).toEqual({ status: 'fulfilled', value: undefined });
      expect((await admin.get(`/terminators/${id}`)).status).toBe(404);
    }
  });

  it('A6: the right password among wrong ones that lock the identity meanwhile gets no session', async () => {
    const policy = await admin.create('/auth-policies', authPolicyBody('cta-lockout', { updb: { maxAttempts: 3, lockoutDurationMinutes: 0 } }));
    const id = await createUser(admin, 'cta-locked', 'right-password', { authPolicyId: policy });
    const attempt = (password: string) => authenticatePassword(app.core, { username: 'cta-locked', password }, { ipAddress: '127.0.0.1' });
    for (let i = 0; i < 2; i++) await expect(attempt('wrong-password')).rejects.toMatchObject({ code: 'INVALID_AUTH' });
    // the wrong guesses are verified first (the hashing queue is first come, first served): the first of them locks
    // the identity while the right one is still being verified
    const wrong = Array.from({ length: ARGON2_CONCURRENCY + 1 }, () => attempt('wrong-password'));
    const outcomes = await settled([...wrong, attempt('right-password')]);
    expect(outcomes.map((o) => o.status)).toEqual(outcomes.map(() => 'rejected'));
    expect((outcomes.at(-1) as PromiseRejectedResult).reason).toMatchObject({ code: 'INVALID_AUTH' });
    expect((await admin.get(`/identities/${id}`)).body.data).toMatchObject({ disabled: true });
    expect((await admin.get(`/api-sessions?filter=${encodeURIComponent(`identityId = "${id}"`)}`)).body.data).toEqual([]);
  });

  it('A7: two updb authenticators created for one identity at once: exactly one is made', async () => {
    const id = await admin.create('/identities', { name: 'cta-two-logins', type: 'User', isAdmin: false });
    const rs = await Promise.all(
      ['cta-login-1', 'cta-login-2'].map((username) =>
        admin.post('/authenticators', { method: 'updb', identityId: id, username, password: 'some-password' }),
      ),
    );
    expect(rs.map((r) => r.status).sort()).toEqual([201, 400]);
    const stored = await admin.get(`/authenticators?filter=${encodeURIComponent(`identityId = "${id}"`)}`);
    expect(stored.body.data).toHaveLength(1);
  });

  it('A12: a pending MFA enrollment removed without a code while it is being verified: never verified-and-gone', async () => {
    await createUser(admin, 'cta-mfa', 'mfa-password');
    const { client } = await login(app, 'cta-mfa', 'mfa-password');
    expect((await client.post('/current-identity/mfa')).status).toBe(201);
    const secret = secretOf((await client.get('/current-identity/mfa')).body.data.provisioningUrl);
    const resolved = (await apiSessionsOf(app.core).resolve(client.token!))!;
    const ctx = app.core.ctx(resolved.caller);
    const [verify, disable] = await settled<void>([verifyMfa(ctx, { code: totp(secret, epochSeconds(clock)) }), disableMfa(ctx, undefined)]);
    const row = await app.core.store.getSql<{ is_verified: number }>(
      'SELECT is_verified FROM mfas WHERE identity_id = ?',
      resolved.caller.identityId,
    );
    const session = await app.core.store.getSql<{ is_mfa_complete: number }>(
      'SELECT is_mfa_complete FROM api_sessions WHERE id = ?',
      resolved.session.id,
    );
    // either the verification won (the enrollment is verified and stays: removing it takes a code) or the removal did
    if (verify.status === 'fulfilled') {
      expect(row?.is_verified).toBeTruthy();
      expect(disable).toMatchObject({ status: 'rejected', reason: { code: 'INVALID_MFA_TOKEN' } });
    } else {
      expect(row).toBeUndefined();
      expect(session?.is_mfa_complete).toBeFalsy();
    }
    await client.close();
  });

  it('A15: two password changes over the same current password at once: one wins, the other is refused', async () => {
    await createUser(admin, 'cta-self', 'first-password');
    const { client } = await login(app, 'cta-self', 'first-password');
    const authId = (await client.get('/current-identity/authenticators')).body.data[0].id as string;
    const rs = await Promise.all(
      ['second-password', 'third-password'].map((password) =>
        client.patch(`/current-identity/authenticators/${authId}`, { currentPassword: 'first-password', password }),
      ),
    );
    expect(rs.map((r) => r.status).sort()).toEqual([200, 401]);
    const winner = rs[0]!.status === 200 ? 'second-password' : 'third-password';
    const loser = winner === 'second-password' ? 'third-password' : 'second-password';
    const attempt = (password: string) => app.client().post('/authenticate?method=password', { username: 'cta-self', password });
    expect((await attempt(loser)).status).toBe(401);
    expect((await attempt(winner)).status).toBe(200);
    await client.close();
  });

  // last: it moves the clock past the session timeout
  it('A11: a session this node saw idle but another node kept active is not ended', async () => {
    const { client } = await login(app, ADMIN_USER, ADMIN_PASSWORD);
    const sessions = apiSessionsOf(app.core);
    const first = (await sessions.resolve(client.token!))!; // kept by this node
    clock.advance(sessions.timeoutMs + 1000);
    // another node's request: the session's activity in the database (a touch, which ends no cached view)
    await app.core.store.touchSql('UPDATE api_sessions SET last_activity_at = ? WHERE id = ?', clock.now().toISOString(), first.session.id);
    expect((await sessions.resolve(client.token!))?.session.id).toBe(first.session.id);
    expect((await client.get('/current-identity')).status).toBe(200);
    await client.close();
  });
});
