import { randomInt } from 'node:crypto';
import { generateSecret, generateURI, verifySync } from 'otplib';
import QRCode from 'qrcode';
import { z } from 'zod';
import type { Core } from '../core';
import type { Ctx } from '../context';
import { ApiError, conflict, notFound } from '../errors';
import { newId } from '../ids';
import type { ApiObject } from '../entities/resource';
import type { Store } from '../store/db';
import { allRows, getRow, rowShape } from '../store/rows';
import { parseInput } from '../validation';
import { requirePermission } from '../permissions';
import { join } from 'node:path';
import { loadOrCreateSecretKey, SECRET_KEY_FILE, SecretBox, SecretBoxError } from './secretBox';
import { apiSessionsOf } from './apiSessions';
import { loadMfa, MFA, type Mfa } from './mfaRecords';

/** TOTP as authenticator apps expect it: SHA-1, 6 digits, 30 s steps; one step of skew either way is accepted. */
const TOTP_TOLERANCE_S = 30;
const RECOVERY_CODE_COUNT = 20;
/** Wrong codes a session may submit before it is ended (a new primary login, with its lockout rules, is then needed). */
export const MAX_MFA_FAILURES = 5;
const ISSUER = 'weft';

export const mfaCodeBody = z.object({ code: z.string().min(1, 'is required').max(100) });

const invalidCode = () => new ApiError('INVALID_MFA_TOKEN', 401, 'The MFA code supplied is not valid');

export { decorateMfaEnabled, isTotpEnrolled, loadMfa } from './mfaRecords';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** 20 codes of 6 base32 characters (30 bits each), like OpenZiti's. */
function recoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => Array.from({ length: 6 }, () => BASE32[randomInt(32)]).join(''));
}

export function provisioningUrl(secret: string, identityName: string): string {
  return generateURI({ issuer: ISSUER, label: identityName, secret });
}

// ---- secrets at rest ------------------------------------------------------------------------------
//
// The TOTP secret is sealed (AES-256-GCM, core/auth/secretBox.ts, bound to its row); recovery codes are kept as keyed
// digests (HMAC-SHA-256 with a key derived from the same key file: a plain hash of a 30-bit code is brute-forced in
// seconds), and a code is checked by digesting the input. Digests cannot be shown again, so the plain set is shown
// only while the enrollment is pending (GET /current-identity/mfa) and, after POST .../recovery-codes makes a new set,
// once by the next GET .../recovery-codes; until then it is kept sealed in `recovery_codes_pending`. Otherwise GET
// .../recovery-codes answers an empty list (OpenZiti shows the remaining codes again; that would need them readable).

/** What a new enrollment's sealed values and digests are bound to, before its row is written. */
type MfaKey = Pick<Mfa, 'id' | 'identity_id'>;

const secretContext = (mfa: MfaKey) => `mfas.secret:${mfa.id}`;
const pendingContext = (mfa: MfaKey) => `mfas.recovery_codes_pending:${mfa.id}`;
const recoveryPurpose = (identityId: string) => `mfa recovery code:${identityId}`;

async function totpSecret(core: Core, mfa: Mfa): Promise<string | undefined> {
  const box = await secretsOf(core);
  try {
    return box.open(mfa.secret, secretContext(mfa));
  } catch (e) {
    if (!(e instanceof SecretBoxError)) throw e;
    core.log.error({ identityId: mfa.identity_id }, `the TOTP secret of an MFA enrollment does not open with the data directory's secret key`);
    return undefined;
  }
}

async function digestCode(core: Core, identityId: string, code: string): Promise<string> {
  return (await secretsOf(core)).digest(code.toUpperCase(), recoveryPurpose(identityId));
}

/** The stored form of a new set of recovery codes: digests, and the plain set sealed until it is shown. */
async function storedCodes(core: Core, mfa: MfaKey, codes: string[]): Promise<{ digests: string; pending: string }> {
  const digests: string[] = [];
  for (const c of codes) digests.push(await digestCode(core, mfa.identity_id, c));
  return {
    digests: JSON.stringify(digests),
    pending: (await secretsOf(core)).seal(JSON.stringify(codes), pendingContext(mfa)),
  };
}

async function pendingCodes(core: Core, mfa: Mfa): Promise<string[]> {
  if (!mfa.recovery_codes_pending) return [];
  const box = await secretsOf(core);
  try {
    return JSON.parse(box.open(mfa.recovery_codes_pending, pendingContext(mfa))) as string[];
  } catch (e) {
    if (!(e instanceof SecretBoxError)) throw e;
    core.log.error({ identityId: mfa.identity_id }, `pending recovery codes do not open with the data directory's secret key`);
    return [];
  }
}

/**
 * Start-up step: seals TOTP secrets and digests recovery codes still stored in clear (rows written before secrets
 * were protected). Idempotent: sealed values and digests are recognised by their prefixes and left alone. A pending
 * enrollment keeps its plain codes sealed, to be shown until it is verified.
 */
export async function sealMfaSecrets(core: Core): Promise<number> {
  const box = await secretsOf(core);
  const store = core.store;
  const pending = () =>
    allRows(
      store,
      MFA,
      `SELECT * FROM mfas WHERE NOT ${store.sql.like('secret', "'v1:%'")} OR (recovery_codes <> '[]' AND NOT ${store.sql.like('recovery_codes', `'["h1:%'`)})`,
    );
  if (!(await pending()).length) return 0;
  // the plain text must not linger in the database's files
  const converted = await store.secureTx(async () => {
    let n = 0;
    for (const mfa of await pending()) {
      const codes = mfa.recovery_codes;
      const plain = codes.filter((c) => !SecretBox.isDigest(c));
      const secret = SecretBox.isSealed(mfa.secret) ? mfa.secret : box.seal(mfa.secret, secretContext(mfa));
      const digests: string[] = [];
      for (const c of codes) digests.push(SecretBox.isDigest(c) ? c : await digestCode(core, mfa.identity_id, c));
      // a pending enrollment still shows its codes: they are kept sealed until it is verified
      const shown =
        !mfa.is_verified && plain.length && !mfa.recovery_codes_pending
          ? box.seal(JSON.stringify(plain), pendingContext(mfa))
          : mfa.recovery_codes_pending;
      await store.runSql(
        'UPDATE mfas SET secret = ?, recovery_codes = ?, recovery_codes_pending = ? WHERE id = ?',
        secret,
        JSON.stringify(digests),
        shown,
        mfa.id,
      );
      n++;
    }
    return n;
  });
  core.log.info({ converted }, 'MFA secrets and recovery codes stored in clear were sealed');
  return converted;
}

/**
 * The time step a 6-digit TOTP code matches at `epoch` (seconds), one step of skew either way, or undefined.
 * Codes of `lastStep` or earlier are refused: each step's code works once.
 */
export function checkTotp(secret: string, code: string, epoch: number, lastStep?: number | null): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const result = verifySync({
    secret,
    token: code,
    epoch,
    epochTolerance: TOTP_TOLERANCE_S,
    ...(lastStep != null ? { afterTimeStep: lastStep } : {}),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}

/**
 * Checks a code against an enrollment and consumes it: a TOTP code must be newer than the last accepted one
 * (no replays), a recovery code is removed. Runs inside the caller's transaction.
 */
async function consumeCode(core: Core, mfa: Mfa, code: string, allowRecovery: boolean): Promise<boolean> {
  const trimmed = code.trim();
  if (/^\d{6}$/.test(trimmed)) {
    const secret = await totpSecret(core, mfa);
    if (secret === undefined) return false;
    const epoch = Math.floor(core.clock.now().getTime() / 1000);
    const step = checkTotp(secret, trimmed, epoch, mfa.last_time_step);
    if (step === undefined) return false;
    await core.store.runSql('UPDATE mfas SET last_time_step = ? WHERE id = ?', step, mfa.id);
    return true;
  }
  if (!allowRecovery) return false;
  if (!/^[A-Za-z2-7]{6}$/.test(trimmed)) return false;
  const codes = [...mfa.recovery_codes];
  const i = codes.indexOf(await digestCode(core, mfa.identity_id, trimmed));
  if (i < 0) return false;
  codes.splice(i, 1);
  await core.store.runSql(
    'UPDATE mfas SET recovery_codes = ?, updated_at = ? WHERE id = ?',
    JSON.stringify(codes),
    core.clock.now().toISOString(),
    mfa.id,
  );
  return true;
}

/**
 * Verifies a code for the caller's enrollment, atomically with its consumption. A wrong code counts against the
 * calling session and ends it after MAX_MFA_FAILURES; the failure is answered 401.
 */
async function requireCode(
  ctx: Ctx,
  mfa: Mfa,
  code: string,
  allowRecovery: boolean,
  /** what the code allows, in the same transaction (the enrollment as it is now; a throw keeps the code unused) */
  then?: (fresh: Mfa) => Promise<void>,
): Promise<void> {
  const core = ctx.core;
  const ok = await core.store.tx(async () => {
    const fresh = await getRow(core.store, MFA, 'SELECT * FROM mfas WHERE id = ?', mfa.id);
    if (!fresh || !(await consumeCode(core, fresh, code, allowRecovery))) return false;
    await then?.(fresh);
    return true;
  });
  if (ok) return;
  const sessionId = ctx.caller.apiSessionId;
  if (sessionId && (await noteMfaFailure(core, sessionId)) >= MAX_MFA_FAILURES) {
    await apiSessionsOf(core).remove(sessionId);
    core.log.warn({ identityId: ctx.caller.identityId }, 'API session ended after too many wrong MFA codes');
  }
  throw invalidCode();
}

function detail(mfa: Mfa, extra: ApiObject): ApiObject {
  return {
    _links: { self: { href: './current-identity/mfa' } },
    id: mfa.id,
    createdAt: mfa.created_at,
    updatedAt: mfa.updated_at,
    tags: mfa.tags,
    ...extra,
  };
}

const NAME = rowShape({ name: 'string' });

async function identityName(core: Core, identityId: string): Promise<string> {
  return (await getRow(core.store, NAME, 'SELECT name FROM identities WHERE id = ?', identityId))?.name ?? identityId;
}

// ---- current identity -----------------------------------------------------------------------------

/** POST /current-identity/mfa: starts (or restarts a pending) enrollment; 409 when one is completed. */
export async function initiateMfa(ctx: Ctx): Promise<string> {
  const core = ctx.core;
  const identityId = ctx.caller.identityId;
  return core.store.tx(async () => {
    const existing = await loadMfa(core, identityId);
    if (existing?.is_verified) throw conflict('MFA_EXISTS', 'The identity is already enrolled in MFA');
    if (existing) await core.store.runSql('DELETE FROM mfas WHERE id = ?', existing.id);
    const id = newId();
    const now = core.clock.now().toISOString();
    const row: MfaKey = { id, identity_id: identityId };
    const codes = await storedCodes(core, row, recoveryCodes());
    await core.store.runSql(
      `INSERT INTO mfas (id, identity_id, secret, is_verified, recovery_codes, recovery_codes_pending, created_at, updated_at)
       VALUES (?, ?, ?, 0, ?, ?, ?, ?)`,
      id,
      identityId,
      (await secretsOf(core)).seal(generateSecret(), secretContext(row)),
      codes.digests,
      codes.pending,
      now,
      now,
    );
    return id;
  });
}

async function requireMfa(ctx: Ctx, state?: 'pending' | 'verified'): Promise<Mfa> {
  const mfa = await loadMfa(ctx.core, ctx.caller.identityId);
  if (!mfa || (state === 'pending' && mfa.is_verified) || (state === 'verified' && !mfa.is_verified)) throw notFound('MFA enrollment');
  return mfa;
}

/** GET /current-identity/mfa: the secret material only while the enrollment is pending. */
export async function mfaStatus(ctx: Ctx): Promise<ApiObject> {
  const mfa = await requireMfa(ctx);
  if (mfa.is_verified) return detail(mfa, { isVerified: true });
  return detail(mfa, {
    isVerified: false,
    provisioningUrl: provisioningUrl(await pendingSecret(ctx, mfa), await identityName(ctx.core, ctx.caller.identityId)),
    recoveryCodes: await pendingCodes(ctx.core, mfa),
  });
}

/** How many of the caller's recovery codes are still unused (a used one is removed), for a completed enrollment. */
export async function recoveryCodesLeft(ctx: Ctx): Promise<number> {
  return (await requireMfa(ctx, 'verified')).recovery_codes.length;
}

/** GET /current-identity/mfa/qr-code: the provisioning URL as a PNG, while pending. */
export async function mfaQrCode(ctx: Ctx): Promise<Buffer> {
  const mfa = await requireMfa(ctx, 'pending');
  return QRCode.toBuffer(provisioningUrl(await pendingSecret(ctx, mfa), await identityName(ctx.core, ctx.caller.identityId)), {
    type: 'png',
    width: 256,
    margin: 2,
  });
}

/** The secret of a pending enrollment, to show; one sealed with another key cannot be shown (start over). */
async function pendingSecret(ctx: Ctx, mfa: Mfa): Promise<string> {
  const secret = await totpSecret(ctx.core, mfa);
  if (secret === undefined) throw notFound('MFA enrollment');
  return secret;
}

/** POST /current-identity/mfa/verify: completes the enrollment; the calling session has thereby passed MFA. */
export async function verifyMfa(ctx: Ctx, body: unknown): Promise<void> {
  const { code } = parseInput(mfaCodeBody, body);
  const mfa = await requireMfa(ctx, 'pending');
  // the code, the enrollment's state and the session's in one transaction: an enrollment restarted or completed
  // meanwhile is not marked verified, nor the session passed on its account
  await requireCode(ctx, mfa, code, false, async () => {
    const now = ctx.core.clock.now().toISOString();
    // the recovery codes were shown while the enrollment was pending: from now on only their digests are kept
    const r = await ctx.core.store.runSql(
      'UPDATE mfas SET is_verified = 1, recovery_codes_pending = NULL, updated_at = ? WHERE id = ? AND is_verified = 0',
      now,
      mfa.id,
    );
    if (!r.changes) throw notFound('MFA enrollment');
    await markPassed(ctx, now);
  });
}

/** DELETE /current-identity/mfa: a valid code (TOTP or recovery) unless the enrollment was never completed. */
export async function disableMfa(ctx: Ctx, code: string | undefined): Promise<void> {
  const mfa = await requireMfa(ctx);
  const store = ctx.core.store;
  if (!mfa.is_verified) {
    // no code for a pending enrollment, as long as it is still pending (one verified meanwhile needs a code)
    if ((await store.runSql('DELETE FROM mfas WHERE id = ? AND is_verified = 0', mfa.id)).changes) return;
    return disableMfa(ctx, code); // verified, restarted or removed meanwhile: as it is now
  }
  await requireCode(ctx, mfa, code ?? '', true, async () => void (await store.runSql('DELETE FROM mfas WHERE id = ?', mfa.id)));
}

/**
 * GET /current-identity/mfa/recovery-codes (code in the header or body): the codes made by the last regeneration, once;
 * an empty list when they have been shown (only their digests are kept: see "secrets at rest" above).
 */
export async function viewRecoveryCodes(ctx: Ctx, code: string | undefined): Promise<ApiObject> {
  const mfa = await requireMfa(ctx, 'verified');
  await requireCode(ctx, mfa, code ?? '', false);
  const core = ctx.core;
  const shown = await core.store.tx(async () => {
    const fresh = await loadMfa(core, ctx.caller.identityId);
    if (!fresh) throw notFound('MFA enrollment');
    if (fresh.recovery_codes_pending) await core.store.runSql('UPDATE mfas SET recovery_codes_pending = NULL WHERE id = ?', fresh.id);
    return { fresh, codes: await pendingCodes(core, fresh) };
  });
  return detail(shown.fresh, { recoveryCodes: shown.codes });
}

/**
 * POST /current-identity/mfa/recovery-codes: replaces all recovery codes and returns the new ones. They stay sealed
 * for the next GET .../recovery-codes unless `shownNow` (the console shows them in its answer).
 */
export async function regenerateRecoveryCodes(ctx: Ctx, body: unknown, opts: { shownNow?: boolean } = {}): Promise<string[]> {
  const { code } = parseInput(mfaCodeBody, body);
  const mfa = await requireMfa(ctx, 'verified');
  await requireCode(ctx, mfa, code, false);
  const codes = recoveryCodes();
  const stored = await storedCodes(ctx.core, mfa, codes);
  await ctx.core.store.runSql(
    'UPDATE mfas SET recovery_codes = ?, recovery_codes_pending = ?, updated_at = ? WHERE id = ?',
    stored.digests,
    opts.shownNow ? null : stored.pending,
    ctx.core.clock.now().toISOString(),
    mfa.id,
  );
  return codes;
}

/** POST /authenticate/mfa: a TOTP or recovery code completes the MFA factor of the calling session. */
export async function authenticateMfa(ctx: Ctx, body: unknown): Promise<void> {
  const { code } = parseInput(mfaCodeBody, body);
  const mfa = await loadMfa(ctx.core, ctx.caller.identityId);
  // not enrolled (a policy requires TOTP): enrollment, not a code, completes the factor
  if (!mfa?.is_verified) throw invalidCode();
  await requireCode(ctx, mfa, code, true);
  await ctx.core.store.tx(() => markPassed(ctx, ctx.core.clock.now().toISOString()));
}

async function markPassed(ctx: Ctx, now: string): Promise<void> {
  if (!ctx.caller.apiSessionId) return;
  await ctx.core.store.runSql(
    'UPDATE api_sessions SET is_mfa_complete = 1, mfa_passed_at = ?, mfa_failures = 0, updated_at = ? WHERE id = ?',
    now,
    now,
    ctx.caller.apiSessionId,
  );
}

/** POST /current-api-session/totp-token: a controller-signed proof that TOTP was checked now (posture responses). */
export async function createTotpToken(ctx: Ctx, body: unknown): Promise<{ token: string; issuedAt: string }> {
  const { code } = parseInput(mfaCodeBody, body);
  const mfa = await requireMfa(ctx, 'verified');
  await requireCode(ctx, mfa, code, false);
  const issued = ctx.core.clock.now();
  const now = issued.toISOString();
  await ctx.core.store.tx(() => markPassed(ctx, now));
  const token = ctx.core.jwt.sign({
    type: 'totp',
    apiSessionId: ctx.caller.apiSessionId,
    sub: ctx.caller.identityId,
    iss: ctx.core.config.apiPublicUrl,
    iat: Math.floor(issued.getTime() / 1000),
    jti: newId(),
  });
  return { token, issuedAt: now };
}

// ---- administration -------------------------------------------------------------------------------

/** DELETE /identities/{id}/mfa: removes any enrollment, completed or not. */
export async function removeIdentityMfa(ctx: Ctx, identityId: string): Promise<void> {
  requirePermission(ctx.caller, 'identity', 'update');
  if (!(await ctx.core.store.getSql('SELECT 1 FROM identities WHERE id = ?', identityId))) throw notFound('identity');
  await ctx.core.store.runSql('DELETE FROM mfas WHERE identity_id = ?', identityId);
}

const secretBoxes = new WeakMap<Core, SecretBox>();

/**
 * A core's seal for secrets at rest, with the key in `<data dir>/secrets.key` (created at the first start; refused
 * when others may read it or it has the wrong size). Never created anew while the database holds values sealed with a
 * lost key.
 */
async function secretsOf(core: Core): Promise<SecretBox> {
  const known = secretBoxes.get(core);
  if (known) return known;
  const box = new SecretBox(await openSecretKey(core.store, core.config.dataDir));
  // a concurrent first use may have made one meanwhile (from the same key file): keep the first
  const first = secretBoxes.get(core) ?? box;
  secretBoxes.set(core, first);
  return first;
}

/** The key of `<data dir>/secrets.key`, created if absent unless the database holds values sealed with a lost one. */
export async function openSecretKey(store: Store, dataDir: string): Promise<Buffer> {
  return loadOrCreateSecretKey(join(dataDir, SECRET_KEY_FILE), {
    mayCreate: async () =>
      (await store.getSql(`SELECT 1 FROM mfas WHERE ${store.sql.like('secret', "'v1:%'")} LIMIT 1`))
        ? 'the database holds MFA secrets sealed with it; restore the file from a backup of this data directory'
        : undefined,
  });
}

const FAILURES = rowShape({ n: 'int' });

/** Counts a wrong MFA code of a session, in the session's row (a restart keeps it); returns the session's count. */
async function noteMfaFailure(core: Core, sessionId: string): Promise<number> {
  return (
    (
      await getRow(
        core.store,
        FAILURES,
        'UPDATE api_sessions SET mfa_failures = mfa_failures + 1 WHERE id = ? RETURNING mfa_failures AS n',
        sessionId,
      )
    )?.n ?? 0
  );
}
