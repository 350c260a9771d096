import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Ctx } from '../context';
import type { Core } from '../core';
import { attributesSchema, nameSchema } from '../entities/common';
import { defineResource } from '../entities/define';
import { applyCreate } from '../entities/resource';
import { ApiError, validationError } from '../errors';
import { requirePermission, SYSTEM } from '../permissions';
import { identities } from '../policy/index';
import { sqlMigration } from '../store/migrations/index';
import { parseInput } from '../validation';
import { enrollOtt, type EnrollmentCerts } from './identityEnroll';
import { signEnrollmentJwt } from './jwt';

/**
 * Setup keys (Weft's own, like NetBird's): a reusable, expiring secret that anyone holding it trades for a new Device
 * identity with the key's role attributes and a one-time-token (OTT) enrollment, which a stock `ziti edge enroll`
 * takes. The key is shown once when it is made, with an enrollment JWT (`em: ott`, `jti` = the key, `exp` = the key's
 * expiry) that stock enrollers take directly: each enrollment with it makes a new device and enrolls it in one
 * transaction. Only the key's SHA-256 digest is kept. A redeem counts a use with one conditional UPDATE in the
 * transaction that creates the identity, so `maxUses` holds however many redeem at once.
 */

const digestOf = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

const expiresAtSchema = z
  .string()
  .datetime({ offset: true, message: 'must be an RFC 3339 date-time' })
  .transform((s) => new Date(s).toISOString());

export const setupKeys = defineResource({
  entity: 'weft/setup-keys',
  table: 'setup_keys',
  permission: 'identity',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    expiresAt: { codec: 'datetime', schema: expiresAtSchema, required: 'create', filter: true },
    maxUses: { codec: 'int', schema: z.number().int().min(1).max(1_000_000), nullable: true, zero: null, filter: true },
    uses: { codec: 'int', notNull: true, filter: true },
    // revoking is for good: a revoked key stays revoked
    revoked: { codec: 'bool', schema: z.literal(true, { message: 'a key can only be revoked (true)' }), notNull: true, filter: true },
    roleAttributes: { codec: 'json', column: 'identity_role_attributes', schema: attributesSchema.unwrap(), nullable: true, zero: [] },
    identityNamePrefix: { codec: 'string', schema: z.string().trim().min(1).max(100), nullable: true, zero: null },
  },
  defaultSort: 't.created_at DESC',
  migrations: [
    sqlMigration(
      17,
      'setup keys',
      `CREATE TABLE setup_keys (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, digest TEXT NOT NULL UNIQUE,
  expires_at TEXT NOT NULL, max_uses INTEGER, uses INTEGER NOT NULL DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0,
  identity_role_attributes TEXT, identity_name_prefix TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);`,
    ),
  ],
  beforeWrite(_op, input, existing, ctx) {
    const now = ctx.core.clock.now().toISOString();
    if (input.expiresAt && input.expiresAt <= now) throw validationError('expiresAt', 'must be in the future', input.expiresAt);
    if (existing && input.revoked === undefined && existing.revoked) throw validationError('revoked', 'a revoked key cannot be changed');
  },
});

const KEY_PREFIX = 'wsk_';

/** Whether an enrollment token is a setup key (its JWT's jti) rather than an enrollment's own token. */
export const isSetupKey = (token: unknown): token is string => typeof token === 'string' && token.startsWith(KEY_PREFIX);

/** Makes a setup key: its id, the key itself and its enrollment JWT, which are shown this once. */
export async function createSetupKey(ctx: Ctx, body: unknown): Promise<{ id: string; key: string; enrollmentJwt: string }> {
  requirePermission(ctx.caller, 'identity', 'create');
  const key = `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
  const id = await applyCreate(ctx, setupKeys, body, { columns: { digest: digestOf(key), uses: 0, revoked: 0 } });
  const row = (await ctx.core.store.getSql<{ expires_at: string }>('SELECT expires_at FROM setup_keys WHERE id = ?', id))!;
  const enrollmentJwt = signEnrollmentJwt(ctx.core, { em: 'ott', sub: id, jti: key, exp: new Date(row.expires_at) });
  return { id, key, enrollmentJwt };
}

/**
 * A stock enroller (`ziti edge enroll`, an SDK) with a setup key's JWT: a new device made from the key and enrolled
 * with the CSR in one transaction — a refused CSR leaves no identity and counts no use.
 */
export async function enrollWithSetupKey(core: Core, key: string, csrPem: unknown, field: string): Promise<EnrollmentCerts> {
  return core.store.tx(async () => {
    const { token } = await redeem(core, { key });
    return enrollOtt(core, token, csrPem, field);
  });
}

const redeemSchema = z.object({
  key: z.string().min(1, 'must not be empty').max(200),
  name: nameSchema.max(255).optional(),
});

const invalidKey = () => new ApiError('INVALID_SETUP_KEY', 401, 'The setup key is not valid');
const keyExpired = () => new ApiError('SETUP_KEY_EXPIRED', 410, 'The setup key has expired');
const keyUsedUp = () => new ApiError('SETUP_KEY_USED_UP', 410, 'The setup key has been used as many times as it allows');

/**
 * Trades a setup key for a new Device identity with an OTT enrollment, in one transaction: the use is counted by a
 * conditional UPDATE (no read-then-write), the identity and its enrollment are written through the generic path.
 */
export async function redeemSetupKey(core: Core, body: unknown): Promise<{ identityId: string; enrollmentJwt: string }> {
  const { identityId, enrollmentJwt } = await redeem(core, body);
  return { identityId, enrollmentJwt };
}

async function redeem(core: Core, body: unknown): Promise<{ identityId: string; enrollmentJwt: string; token: string }> {
  const input = parseInput(redeemSchema, body);
  const digest = digestOf(input.key);
  const ctx: Ctx = { core, caller: SYSTEM };
  const store = core.store;
  return store.tx(async () => {
    const now = core.clock.now().toISOString();
    const counted = await store.runSql(
      'UPDATE setup_keys SET uses = uses + 1, updated_at = ? WHERE digest = ? AND revoked = 0 AND expires_at > ? AND (max_uses IS NULL OR uses < max_uses)',
      now,
      digest,
      now,
    );
    if (counted.changes !== 1) {
      const row = await store.getSql<{ revoked: number; expires_at: string }>('SELECT revoked, expires_at FROM setup_keys WHERE digest = ?', digest);
      if (!row || row.revoked) throw invalidKey();
      throw row.expires_at <= now ? keyExpired() : keyUsedUp();
    }
    const key = (await store.getSql<{ identity_role_attributes: string | null; identity_name_prefix: string | null; name: string }>(
      'SELECT identity_role_attributes, identity_name_prefix, name FROM setup_keys WHERE digest = ?',
      digest,
    ))!;
    const roleAttributes = key.identity_role_attributes ? (JSON.parse(key.identity_role_attributes) as string[]) : [];
    const free = input.name && !(await store.getSql('SELECT 1 FROM identities WHERE name = ?', input.name));
    const name = free ? input.name! : `${key.identity_name_prefix ?? key.name}-${randomBytes(4).toString('hex')}`;
    const identityId = await applyCreate(ctx, identities, {
      name,
      type: 'Device',
      isAdmin: false,
      roleAttributes,
      enrollment: { ott: true },
      tags: { setupKey: key.name },
    });
    const e = await store.getSql<{ jwt: string; token: string }>(
      "SELECT jwt, token FROM enrollments WHERE identity_id = ? AND method = 'ott'",
      identityId,
    );
    return { identityId, enrollmentJwt: e!.jwt, token: e!.token };
  });
}
