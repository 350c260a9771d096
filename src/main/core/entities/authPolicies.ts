import { z } from 'zod';
import type { Ctx } from '../context';
import { conflict, referencedEntity, validationError } from '../errors';
import { nameSchema, nullableTags } from './common';
import { defineResource } from './define';
import { decodeRow, getRow } from '../store/rows';

export const DEFAULT_AUTH_POLICY_ID = 'default';

const primarySchema = z.object({
  cert: z.object({ allowed: z.boolean(), allowExpiredCerts: z.boolean() }),
  extJwt: z.object({
    allowed: z.boolean(),
    allowedSigners: z
      .array(z.string())
      .nullable()
      .transform((v) => v ?? []),
  }),
  updb: z.object({
    allowed: z.boolean(),
    minPasswordLength: z.number().int().min(5, 'must be at least 5').max(100),
    requireSpecialChar: z.boolean(),
    requireNumberChar: z.boolean(),
    requireMixedCase: z.boolean(),
    maxAttempts: z.number().int().min(0),
    lockoutDurationMinutes: z.number().int().min(0),
  }),
});
const secondarySchema = z.object({
  requireTotp: z.boolean(),
  requireExtJwtSigner: z
    .string()
    .nullable()
    .optional()
    .transform((v) => v ?? null),
});
export type AuthPolicyPrimary = z.infer<typeof primarySchema>;
export type AuthPolicySecondary = z.infer<typeof secondarySchema>;
export interface AuthPolicy {
  id: string;
  name: string;
  primary: AuthPolicyPrimary;
  secondary: AuthPolicySecondary;
}

export const DEFAULT_PRIMARY: AuthPolicyPrimary = {
  cert: { allowed: true, allowExpiredCerts: true },
  extJwt: { allowed: true, allowedSigners: [] },
  updb: {
    allowed: true,
    minPasswordLength: 5,
    requireSpecialChar: false,
    requireNumberChar: false,
    requireMixedCase: false,
    maxAttempts: 0,
    lockoutDurationMinutes: 0,
  },
};
export const DEFAULT_SECONDARY: AuthPolicySecondary = { requireTotp: false, requireExtJwtSigner: null };

const deepPartial = z.object({
  cert: primarySchema.shape.cert.partial().nullable().optional(),
  // null signers in a PATCH leave them alone (the ziti CLI sends null for every section it does not change)
  extJwt: z
    .object({ allowed: z.boolean(), allowedSigners: z.array(z.string()).nullable() })
    .partial()
    .nullable()
    .optional(),
  updb: primarySchema.shape.updb.partial().nullable().optional(),
});

export async function loadAuthPolicy(ctx: Ctx, id: string): Promise<AuthPolicy> {
  const { store } = ctx.core;
  const sql = 'SELECT * FROM auth_policies WHERE id = ?';
  const row = (await getRow(store, authPolicies.shape, sql, id)) ?? (await getRow(store, authPolicies.shape, sql, DEFAULT_AUTH_POLICY_ID))!;
  return { id: row.id, name: row.name, primary: row.primary_json, secondary: row.secondary_json };
}

async function checkSigners(ctx: Ctx, p: AuthPolicyPrimary, s: AuthPolicySecondary): Promise<void> {
  const exists = async (id: string) => !!(await ctx.core.store.getSql('SELECT 1 FROM external_jwt_signers WHERE id = ?', id));
  for (const [i, id] of p.extJwt.allowedSigners.entries()) {
    if (!(await exists(id))) throw validationError(`primary.extJwt.allowedSigners.${i}`, 'external JWT signer not found', id);
  }
  if (s.requireExtJwtSigner && !(await exists(s.requireExtJwtSigner))) {
    throw validationError('secondary.requireExtJwtSigner', 'external JWT signer not found', s.requireExtJwtSigner);
  }
}

export const authPolicies = defineResource({
  entity: 'auth-policies',
  table: 'auth_policies',
  permission: 'auth-policy',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    // a PATCH merges into the stored sections: see beforeWrite
    primary: { codec: 'json', column: 'primary_json', schema: primarySchema, required: true },
    secondary: { codec: 'json', column: 'secondary_json', schema: secondarySchema, required: true },
  },
  tags: { putOmitted: 'leave' },
  defaultSort: 't.name ASC',
  schemas: {
    // PATCH sections are partial
    patch: z.object({
      name: nameSchema.nullable().optional(),
      primary: deepPartial.nullable().optional(),
      secondary: secondarySchema.partial().nullable().optional(),
      tags: nullableTags.optional(),
    }),
  },
  async beforeWrite(op, input, existing, ctx) {
    let primary = input.primary!;
    let secondary = input.secondary!;
    if (op === 'patch') {
      const stored = decodeRow(authPolicies.shape, existing!);
      const cur = stored.primary_json;
      const p = (input.primary ?? {}) as z.infer<typeof deepPartial>;
      primary = {
        cert: { ...cur.cert, ...strip(p.cert) },
        extJwt: { ...cur.extJwt, ...strip(p.extJwt) },
        updb: { ...cur.updb, ...strip(p.updb) },
      };
      secondary = { ...stored.secondary_json, ...strip(input.secondary) };
    }
    await checkSigners(ctx, primary, secondary);
    return { primary_json: JSON.stringify(primary), secondary_json: JSON.stringify(secondary) };
  },
  async beforeDelete(row, ctx) {
    if (row.id === DEFAULT_AUTH_POLICY_ID) throw conflict('CAN_NOT_DELETE_REFERENCED_ENTITY', 'the default auth policy cannot be deleted');
    if (await ctx.core.store.getSql('SELECT 1 FROM identities WHERE auth_policy_id = ? LIMIT 1', row.id)) {
      throw referencedEntity('the auth policy is used by identities');
    }
  },
});

/** Drops keys whose value is undefined or null (PATCH: absent or null means "leave as is"). */
function strip<T extends object>(o: T | null | undefined): { [K in keyof T]?: Exclude<T[K], null | undefined> } {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined && v !== null)) as {
    [K in keyof T]?: Exclude<T[K], null | undefined>;
  };
}
