import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeLogin } from '../../src/main/core/auth/authenticate';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ManualClock, MINUTE } from '../support/clock';
import { JwksServer, signingKey, signJwt, type SigningKey } from '../support/jwks';
import { authPolicyBody, createUser, epochSeconds, login, OPEN_PRIMARY, secretOf, totp, totpStepStart } from '../support/users';

let app: TestApp;
let admin: ApiClient;
let clock: ManualClock;
let jwks: JwksServer;
let key: SigningKey;
let signerA: string;

const policy = (...body: Parameters<typeof authPolicyBody>): Promise<string> => admin.create('/auth-policies', authPolicyBody(...body));

const passwordLogin = (username: string, password: string) => app.client().post('/authenticate?method=password', { username, password });

async function extJwt(iss: string, sub: string, headers: Record<string, string> = {}) {
  const token = await signJwt(key, { iss, aud: 'weft', sub }, epochSeconds(clock));
  return app.client().post('/authenticate?method=ext-jwt', {}, { headers: { authorization: `Bearer ${token}`, ...headers } });
}

beforeAll(async () => {
  clock = new ManualClock(totpStepStart());
  jwks = new JwksServer();
  const url = await jwks.start();
  key = await signingKey('kid-1');
  jwks.keys = [key.jwk];
  app = await startTestApp({ clock });
  admin = await app.adminClient();
  signerA = await admin.create('/external-jwt-signers', {
    name: 'signer-a',
    issuer: 'issuer-a',
    audience: 'weft',
    enabled: true,
    jwksEndpoint: url,
    externalAuthUrl: 'https://a.example.test/auth',
    clientId: 'client-a',
    scopes: ['openid'],
  });
  await admin.create('/external-jwt-signers', { name: 'signer-b', issuer: 'issuer-b', audience: 'weft', enabled: true, jwksEndpoint: url });
});
afterAll(async () => {
  await admin.close();
  await app.stop();
  await jwks.stop();
});

describe('primary methods', () => {
  it('updb.allowed decides password logins', async () => {
    const denied = await policy('no-updb', { updb: { allowed: false } });
    const allowed = await policy('updb-ok');
    await createUser(admin, 'updb-denied', 'password-1', { authPolicyId: denied });
    await createUser(admin, 'updb-allowed', 'password-1', { authPolicyId: allowed });
    const r = await passwordLogin('updb-denied', 'password-1');
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('INVALID_AUTH');
    expect((await passwordLogin('updb-allowed', 'password-1')).status).toBe(200);
  });

  it('extJwt.allowed and allowedSigners decide ext-jwt logins', async () => {
    const none = await admin.create('/identities', {
      name: 'jwt-denied',
      type: 'User',
      isAdmin: false,
      authPolicyId: await policy('no-jwt', { extJwt: { allowed: false } }),
    });
    const onlyA = await admin.create('/identities', {
      name: 'jwt-only-a',
      type: 'User',
      isAdmin: false,
      authPolicyId: await policy('jwt-a', { extJwt: { allowedSigners: [signerA] } }),
    });
    const any = await admin.create('/identities', { name: 'jwt-any', type: 'User', isAdmin: false, authPolicyId: await policy('jwt-any') });
    expect((await extJwt('issuer-a', none)).status).toBe(401);
    expect((await extJwt('issuer-b', onlyA)).status).toBe(401);
    expect((await extJwt('issuer-a', onlyA)).status).toBe(200);
    expect((await extJwt('issuer-a', any)).status).toBe(200);
    expect((await extJwt('issuer-b', any)).status).toBe(200);
  });

  it('cert.allowed and allowExpiredCerts apply to certificate logins (the shared completeLogin)', async () => {
    const lenient = await policy('cert-lenient');
    const strict = await policy('cert-strict', { cert: { allowExpiredCerts: false } });
    const off = await policy('cert-off', { cert: { allowed: false } });
    const id = await admin.create('/identities', { name: 'cert-user', type: 'Device', isAdmin: false, authPolicyId: lenient });
    const core = app.core;
    const identity = async () => (await core.store.getSql<any>('SELECT * FROM identities WHERE id = ?', id))!;
    const authenticator = { id: 'auth-cert', method: 'cert' };
    const attempt = async (certExpired: boolean) =>
      completeLogin(core, { method: 'cert', identity: await identity(), authenticator, certExpired }, {}, { ipAddress: '127.0.0.1' });
    expect(await attempt(true)).toMatchObject({ identityId: id, authenticatorId: 'auth-cert', token: expect.any(String) });
    await admin.patch(`/identities/${id}`, { authPolicyId: strict });
    expect(await attempt(false)).toMatchObject({ identityId: id });
    await expect(attempt(true)).rejects.toThrow(expect.objectContaining({ status: 401, code: 'INVALID_AUTH' }));
    await admin.patch(`/identities/${id}`, { authPolicyId: off });
    await expect(attempt(false)).rejects.toThrow(expect.objectContaining({ status: 401 }));
  });
});

describe('password rules on every password set', () => {
  it('minPasswordLength, mixed case, number and special character are each enforced', async () => {
    const strict = await policy('strict-passwords', {
      updb: { minPasswordLength: 10, requireMixedCase: true, requireNumberChar: true, requireSpecialChar: true },
    });
    const id = await admin.create('/identities', { name: 'rules-user', type: 'User', isAdmin: false, authPolicyId: strict });
    const create = (password: string) => admin.post('/authenticators', { method: 'updb', identityId: id, username: 'rules-user', password });
    for (const [pw, reason] of [
      ['Sh0rt!', /at least 10/],
      ['alllower1!x', /upper and lower/],
      ['NoNumbers!!x', /number/],
      ['NoSpecial123x', /special/],
    ] as const) {
      const r = await create(pw);
      expect(r.status, pw).toBe(400);
      expect(r.body.error.cause.field).toBe('password');
      expect(r.body.error.cause.reason).toMatch(reason);
    }
    expect((await admin.get(`/identities/${id}/authenticators`)).body.data).toHaveLength(0);
    const ok = await create('Good-Passw0rd');
    expect(ok.status).toBe(201);
    const authId = ok.body.data.id;
    // updates and self-service changes obey the same rules
    expect((await admin.patch(`/authenticators/${authId}`, { password: 'weakweakweak' })).status).toBe(400);
    const { client } = await login(app, 'rules-user', 'Good-Passw0rd');
    const self = await client.patch(`/current-identity/authenticators/${authId}`, { currentPassword: 'Good-Passw0rd', password: 'still weak' });
    expect(self.status).toBe(400);
    expect(self.body.error.cause.field).toBe('password');
    expect(
      (await client.patch(`/current-identity/authenticators/${authId}`, { currentPassword: 'Good-Passw0rd', password: 'Better-Passw0rd' })).status,
    ).toBe(200);
    await client.close();
  });
});

describe('lockout', () => {
  it('maxAttempts failures lock the identity for lockoutDurationMinutes; the lock expires by the clock', async () => {
    const p = await policy('lock-5m', { updb: { maxAttempts: 3, lockoutDurationMinutes: 5 } });
    const id = await createUser(admin, 'lock-user', 'right-password', { authPolicyId: p });
    const { client } = await login(app, 'lock-user', 'right-password');
    // failures below the limit are forgotten after a success
    for (let i = 0; i < 2; i++) expect((await passwordLogin('lock-user', 'wrong-password')).status).toBe(401);
    expect((await passwordLogin('lock-user', 'right-password')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await passwordLogin('lock-user', 'wrong-password')).status).toBe(401);
    expect((await client.get('/current-identity')).status).toBe(200);
    expect((await passwordLogin('lock-user', 'wrong-password')).status).toBe(401);

    // locked: the right password is refused and existing sessions are gone
    expect((await passwordLogin('lock-user', 'right-password')).status).toBe(401);
    expect((await client.get('/current-identity')).status).toBe(401);
    const locked = (await admin.get(`/identities/${id}`)).body.data;
    expect(locked).toMatchObject({ disabled: true, disabledAt: clock.now().toISOString() });
    expect(Date.parse(locked.disabledUntil) - clock.now().getTime()).toBe(5 * MINUTE);

    clock.advance(5 * MINUTE - 1000);
    expect((await passwordLogin('lock-user', 'right-password')).status).toBe(401);
    clock.advance(2000);
    expect((await passwordLogin('lock-user', 'right-password')).status).toBe(200);
    expect((await admin.get(`/identities/${id}`)).body.data).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null });
    await client.close();
  });

  it('lockoutDurationMinutes 0 locks until an administrator enables the identity', async () => {
    const p = await policy('lock-forever', { updb: { maxAttempts: 2, lockoutDurationMinutes: 0 } });
    const id = await createUser(admin, 'lock-forever-user', 'right-password', { authPolicyId: p });
    for (let i = 0; i < 2; i++) expect((await passwordLogin('lock-forever-user', 'nope-nope')).status).toBe(401);
    clock.advance(24 * 60 * MINUTE);
    expect((await passwordLogin('lock-forever-user', 'right-password')).status).toBe(401);
    // (a day later the admin's own session has timed out too)
    await admin.close();
    admin = await app.adminClient();
    expect((await admin.get(`/identities/${id}`)).body.data).toMatchObject({ disabled: true, disabledUntil: null });
    expect((await admin.post(`/identities/${id}/enable`)).status).toBe(200);
    expect((await passwordLogin('lock-forever-user', 'right-password')).status).toBe(200);
  });
});

describe('secondary factors', () => {
  it('requireTotp: the session stays partial; an identity without MFA enrolls through the partial session', async () => {
    const p = await policy('totp-required', {}, { requireTotp: true });
    await createUser(admin, 'totp-user', 'totp-password', { authPolicyId: p });
    const { client, session } = await login(app, 'totp-user', 'totp-password');
    expect(session).toMatchObject({ isMfaRequired: true, isMfaComplete: false });
    expect(session.authQueries).toEqual([expect.objectContaining({ typeId: 'MFA', isTotpEnrolled: false })]);
    expect((await client.get('/current-identity')).status).toBe(401);
    expect((await client.post('/authenticate/mfa', { code: '123456' })).status).toBe(401);

    expect((await client.post('/current-identity/mfa')).status).toBe(201);
    const secret = secretOf((await client.get('/current-identity/mfa')).body.data.provisioningUrl);
    expect((await client.post('/current-identity/mfa/verify', { code: totp(secret, epochSeconds(clock)) })).status).toBe(200);
    expect((await client.get('/current-identity')).status).toBe(200);
    await client.close();

    const next = await login(app, 'totp-user', 'totp-password');
    expect(next.session.authQueries).toEqual([expect.objectContaining({ typeId: 'MFA', isTotpEnrolled: true })]);
    clock.advance(30_000);
    expect((await next.client.post('/authenticate/mfa', { code: totp(secret, epochSeconds(clock)) })).status).toBe(200);
    expect((await next.client.get('/current-identity')).status).toBe(200);
    await next.client.close();
  });

  it('requireExtJwtSigner: a password login owes a JWT of that signer, presented with the partial session', async () => {
    const p = await policy('jwt-required', {}, { requireExtJwtSigner: signerA });
    const id = await createUser(admin, 'jwt2fa-user', 'jwt2fa-password', { authPolicyId: p });
    const other = await admin.create('/identities', { name: 'jwt2fa-other', type: 'User', isAdmin: false });
    const { client, session } = await login(app, 'jwt2fa-user', 'jwt2fa-password');
    expect(session.authQueries).toEqual([
      {
        typeId: 'EXT-JWT',
        provider: 'url',
        id: signerA,
        httpUrl: 'https://a.example.test/auth',
        clientId: 'client-a',
        scopes: ['openid'],
      },
    ]);
    expect((await client.get('/current-identity')).status).toBe(401);
    const zt = { 'zt-session': client.token! };
    expect((await extJwt('issuer-b', id, zt)).status).toBe(401);
    expect((await extJwt('issuer-a', other, zt)).status).toBe(401);
    expect((await client.get('/current-identity')).status).toBe(401);
    const done = await extJwt('issuer-a', id, zt);
    expect(done.status).toBe(200);
    expect(done.body.data.token).toBe(client.token);
    expect((await client.get('/current-identity')).status).toBe(200);
    expect((await client.get('/current-api-session')).body.data.authQueries).toEqual([]);

    // a primary login by the required signer satisfies it; another signer's login still owes it
    const byA = await extJwt('issuer-a', id);
    expect(byA.status).toBe(200);
    expect(byA.body.data.authQueries).toEqual([]);
    const byB = await extJwt('issuer-b', id);
    expect(byB.status).toBe(200);
    expect(byB.body.data.authQueries).toEqual([expect.objectContaining({ typeId: 'EXT-JWT', id: signerA })]);
    await client.close();
  });

  it('signers used by a policy cannot be deleted; a policy cannot name a missing signer', async () => {
    const r = await admin.del(`/external-jwt-signers/${signerA}`);
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('CAN_NOT_DELETE_REFERENCED_ENTITY');
    const bad = await admin.post('/auth-policies', {
      name: 'bad-signer',
      primary: OPEN_PRIMARY,
      secondary: { requireTotp: false, requireExtJwtSigner: 'nope' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.cause.field).toBe('secondary.requireExtJwtSigner');
  });
});
