import { z } from 'zod';
import type { Core } from '../core';
import { invalidAuth } from '../errors';
import type { ApiObject } from '../entities/resource';
import { isDisabled, LOGIN_IDENTITY, type LoginIdentity } from './disabled';
import { loadAuthPolicy, type AuthPolicy } from '../entities/authPolicies';
import { getRow, rowShape, selectList, type Decoded } from '../store/rows';
import { parseInput } from '../validation';
import { passwordSchema, usernameSchema } from '../entities/common';
import { hashPassword, needsRehash, verifyPassword } from './passwords';
import { callerOf, apiSessionsOf } from './apiSessions';
import { isTotpEnrolled } from './mfaRecords';
import { recordAuthEvent, recordingFailures, refused, refusedAndRecorded } from './authEvents';

const info = (keys: string[]) => z.object(Object.fromEntries(keys.map((k) => [k, z.string().max(255).optional()]))).partial();
export const envInfoSchema = info(['arch', 'domain', 'hostname', 'os', 'osRelease', 'osVersion']);
export const sdkInfoSchema = info(['appId', 'appVersion', 'branch', 'revision', 'type', 'version']);

const authenticateBody = z
  .object({
    username: usernameSchema.optional(),
    password: passwordSchema.optional(),
    configTypes: z.array(z.string()).nullable().optional(),
    envInfo: envInfoSchema.nullable().optional(),
    sdkInfo: sdkInfoSchema.nullable().optional(),
  })
  .nullable()
  .optional();
export type AuthenticateBody = NonNullable<z.infer<typeof authenticateBody>>;

export interface ClientInfo {
  ipAddress: string;
}

/** How the login's API session is made: by default a legacy one; `oidc` for an OIDC login (core/auth/oidc.ts). */
export interface LoginOptions {
  oidc?: { expiresAt: Date };
}

/** The columns of an authenticator a login reads. */
export const LOGIN_AUTHENTICATOR = rowShape({ id: 'string', identity_id: 'string', method: 'string', username: 'string?', password_hash: 'string?' });
export type LoginAuthenticator = Decoded<typeof LOGIN_AUTHENTICATOR>;
const IDENTITY_SQL = `SELECT ${selectList(LOGIN_IDENTITY)} FROM identities`;
const AUTHENTICATOR_SQL = `SELECT ${selectList(LOGIN_AUTHENTICATOR)} FROM authenticators`;
const CURRENT = rowShape({ disabled: 'bool', disabled_until: 'datetime?', failed_login_attempts: 'int' });

export function parseAuthenticateBody(body: unknown): AuthenticateBody {
  return parseInput(authenticateBody, body ?? {}) ?? {};
}

/** POST /authenticate?method=password */
export function authenticatePassword(core: Core, rawBody: unknown, client: ClientInfo, opts: LoginOptions = {}): Promise<ApiObject> {
  return recordingFailures(core, 'password', client, () => passwordLogin(core, rawBody, client, opts));
}

async function passwordLogin(core: Core, rawBody: unknown, client: ClientInfo, opts: LoginOptions): Promise<ApiObject> {
  const body = parseAuthenticateBody(rawBody);
  if (body.username === undefined) throw invalidAuth('username and password are required');
  if (body.password === undefined) throw invalidAuth('username and password are required');
  const store = core.store;
  const auth = await getRow(store, LOGIN_AUTHENTICATOR, `${AUTHENTICATOR_SQL} WHERE method = 'updb' AND username = ?`, body.username);
  const identity = auth && (await getRow(store, LOGIN_IDENTITY, `${IDENTITY_SQL} WHERE id = ?`, auth.identity_id));
  const failed = (reason: string) =>
    recordAuthEvent(core, {
      event_type: 'fail',
      method: 'password',
      authenticator_id: auth?.id,
      identity_id: identity?.id,
      auth_policy_id: identity?.auth_policy_id,
      remote_address: client.ipAddress,
      reason,
    });
  if (!auth || !identity) {
    await verifyPassword(undefined, body.password);
    await failed('no identity with this username');
    throw refusedAndRecorded();
  }
  const ctx = core.system;
  const policy = await loadAuthPolicy(ctx, identity.auth_policy_id);
  const ok = await verifyPassword(auth.password_hash ?? undefined, body.password);
  const now = core.clock.now();
  if (!policy.primary.updb.allowed || isDisabled(identity, now)) {
    await failed(isDisabled(identity, now) ? 'the identity is disabled' : 'the auth policy does not allow passwords');
    throw refusedAndRecorded();
  }
  if (!ok) {
    await store.tx(async () => {
      await recordFailure(core, identity, policy.primary.updb);
      await failed('invalid password');
    });
    throw refusedAndRecorded();
  }
  const view = await completeLogin(core, { method: 'password', identity, authenticator: auth, resetFailures: true }, body, client, opts);
  await upgradeHash(core, auth, body.password);
  return view;
}

/**
 * A hash made with older parameters (passwords.ts ARGON2_PARAMS) is replaced at the next successful login, while
 * the password is at hand; unless the password was changed meanwhile. A failure here does not fail the login.
 */
async function upgradeHash(core: Core, auth: LoginAuthenticator, password: string): Promise<void> {
  const old = auth.password_hash;
  if (old === null || !needsRehash(old)) return;
  try {
    const hash = await hashPassword(password);
    await core.store.runSql('UPDATE authenticators SET password_hash = ? WHERE id = ? AND password_hash = ?', hash, auth.id, old);
  } catch (err) {
    core.log.warn({ err, authenticatorId: auth.id }, 'could not upgrade a password hash');
  }
}

/** Counts a failed primary authentication; reaching maxAttempts disables the identity (the lockout). */
export async function recordFailure(
  core: Core,
  identity: { id: string },
  rules: { maxAttempts: number; lockoutDurationMinutes: number },
): Promise<void> {
  const store = core.store;
  await store.tx(async () => {
    const attempts = ((await store.getSql<{ n: number }>('SELECT failed_login_attempts AS n FROM identities WHERE id = ?', identity.id))?.n ?? 0) + 1;
    if (rules.maxAttempts > 0 && attempts >= rules.maxAttempts) {
      const now = core.clock.now();
      const until = rules.lockoutDurationMinutes > 0 ? new Date(now.getTime() + rules.lockoutDurationMinutes * 60_000).toISOString() : null;
      await store.runSql(
        'UPDATE identities SET failed_login_attempts = 0, disabled = 1, disabled_at = ?, disabled_until = ? WHERE id = ?',
        now.toISOString(),
        until,
        identity.id,
      );
      await apiSessionsOf(core).removeForIdentity(identity.id);
      core.log.warn({ identityId: identity.id }, 'identity locked after too many failed authentications');
    } else {
      await store.runSql('UPDATE identities SET failed_login_attempts = ? WHERE id = ?', attempts, identity.id);
    }
  });
}

export type PrimaryMethod = 'password' | 'cert' | 'ext-jwt';

/** What a primary authentication established, handed to completeLogin. */
export interface PrimaryLogin {
  method: PrimaryMethod;
  identity: LoginIdentity;
  /** the authenticator that was used (updb, cert); ext-jwt has none */
  authenticator?: { id: string } | null;
  /** ext-jwt: the signer whose JWT was verified (recorded as the session's authenticatorId, as OpenZiti does) */
  extJwtSignerId?: string;
  /** cert: the client certificate is outside its validity period (accepted only with allowExpiredCerts) */
  certExpired?: boolean;
  /** password: a verified password resets the count of failed attempts (with the session, in its transaction) */
  resetFailures?: boolean;
}

/** Whether the identity's auth policy lets this primary method (and signer / expired cert) log in. */
export function primaryAllowed(policy: AuthPolicy, login: PrimaryLogin): boolean {
  switch (login.method) {
    case 'password':
      return policy.primary.updb.allowed;
    case 'cert':
      return policy.primary.cert.allowed && (!login.certExpired || policy.primary.cert.allowExpiredCerts);
    case 'ext-jwt': {
      const signers = policy.primary.extJwt.allowedSigners ?? [];
      return policy.primary.extJwt.allowed && (!signers.length || signers.includes(login.extJwtSignerId ?? ''));
    }
    default:
      return false;
  }
}

/**
 * The shared tail of every login method (password, cert, ext-jwt): refuses disabled identities and methods the
 * identity's auth policy does not allow (401 INVALID_AUTH), then creates the API session. The session is partial
 * (reaches only the MFA / completion endpoints) while the policy's secondary factors are outstanding: TOTP when
 * the identity enrolled MFA or the policy requires it, a JWT of `requireExtJwtSigner` unless that signer did the
 * primary login.
 */
export async function completeLogin(
  core: Core,
  login: PrimaryLogin,
  body: AuthenticateBody,
  client: ClientInfo,
  opts: LoginOptions = {},
): Promise<ApiObject> {
  const { identity } = login;
  const store = core.store;
  const policy = await loadAuthPolicy(core.system, identity.auth_policy_id);
  const refusal = (reason: string) =>
    refused({
      reason,
      identity_id: identity.id,
      auth_policy_id: identity.auth_policy_id,
      authenticator_id: login.authenticator?.id,
      external_jwt_signer_id: login.extJwtSignerId,
    });
  if (isDisabled(identity, core.clock.now()) || !primaryAllowed(policy, login)) {
    core.log.info({ identityId: identity.id, method: login.method }, 'login refused by auth policy or disabled identity');
    throw refusal(isDisabled(identity, core.clock.now()) ? 'the identity is disabled' : `the auth policy does not allow this ${login.method} login`);
  }
  const required = policy.secondary.requireExtJwtSigner;
  const session = await store.tx(async () => {
    // the identity as it is now, not as it was before the (slow) credential check: a lockout or a disable that
    // committed meanwhile refuses the login
    const current = await getRow(store, CURRENT, `SELECT ${selectList(CURRENT)} FROM identities WHERE id = ?`, identity.id);
    if (!current || isDisabled(current, core.clock.now())) {
      core.log.info({ identityId: identity.id, method: login.method }, 'login refused: the identity was disabled or deleted meanwhile');
      throw refusal('the identity was disabled or deleted meanwhile');
    }
    if (login.resetFailures && current.failed_login_attempts) {
      await store.runSql('UPDATE identities SET failed_login_attempts = 0 WHERE id = ?', identity.id);
    }
    if (body.envInfo || body.sdkInfo) {
      await store.runSql(
        'UPDATE identities SET env_info = coalesce(?, env_info), sdk_info = coalesce(?, sdk_info) WHERE id = ?',
        body.envInfo ? JSON.stringify(body.envInfo) : null,
        body.sdkInfo ? JSON.stringify(body.sdkInfo) : null,
        identity.id,
      );
    }
    const made = await apiSessionsOf(core).create({
      identityId: identity.id,
      authenticatorId: login.authenticator?.id ?? login.extJwtSignerId ?? '',
      ipAddress: client.ipAddress,
      configTypes: body.configTypes ?? [],
      isMfaRequired: (await isTotpEnrolled(core, identity.id)) || policy.secondary.requireTotp,
      isExtJwtRequired: !!required && !(login.method === 'ext-jwt' && login.extJwtSignerId === required),
      oidc: opts.oidc,
    });
    await recordAuthEvent(core, {
      event_type: 'success',
      method: login.method,
      authenticator_id: login.authenticator?.id ?? undefined,
      external_jwt_signer_id: login.extJwtSignerId,
      identity_id: identity.id,
      auth_policy_id: identity.auth_policy_id,
      remote_address: client.ipAddress,
    });
    return made;
  });
  const ctx = core.ctx(callerOf(identity, session));
  const view = await apiSessionsOf(core).view(ctx, session);
  view.token = session.token;
  return view;
}

/**
 * Login through the console's one-time link: an API session for the default admin, made by the same login tail as every
 * REST login (auth policy, disabled state; partial while MFA is outstanding, so the TOTP step still applies).
 */
export async function defaultAdminLogin(core: Core, ipAddress: string): Promise<string> {
  const identity = await getRow(core.store, LOGIN_IDENTITY, `${IDENTITY_SQL} WHERE is_default_admin = 1`);
  if (!identity) throw invalidAuth('there is no default admin');
  const authenticator =
    (await getRow(core.store, LOGIN_AUTHENTICATOR, `${AUTHENTICATOR_SQL} WHERE identity_id = ? AND method = 'updb'`, identity.id)) ?? null;
  const view = await completeLogin(core, { method: 'password', identity, authenticator }, {}, { ipAddress });
  return String(view.token);
}
