import { z } from 'zod';
import { requirePermission } from '../auth/permissions';
import { hashPassword, verifyPassword } from '../auth/passwords';
import { checkPasswordForIdentity } from '../auth/policyChecks';
import { createCertAuthenticator } from '../enrollment/authenticators';
import type { Ctx } from '../context';
import { invalidAuth, notFound, validationError } from '../errors';
import { scalar } from '../query/fields';
import type { Row } from '../store/db';
import { parseInput } from '../validation';
import { nullableTags, passwordSchema, usernameSchema } from './common';
import { applyUpdate, createResource, requireRow, type ResourceDef } from './resource';

const createSchema = z.object({
  method: z.enum(['updb', 'cert']),
  identityId: z.string().min(1),
  username: usernameSchema.optional(),
  password: passwordSchema.optional(),
  certPem: z.string().optional(),
  tags: nullableTags.optional(),
});
const updateSchema = z.object({ username: usernameSchema, password: passwordSchema, tags: nullableTags.optional() });
const patchSchema = z.object({
  username: usernameSchema.nullable().optional(),
  password: passwordSchema.nullable().optional(),
  tags: nullableTags.optional(),
});
const withCurrent = { currentPassword: passwordSchema };

export const authenticators: ResourceDef = {
  entity: 'authenticators',
  table: 'authenticators',
  permission: 'identity',
  columns: {
    method: { column: 'method', codec: 'string' },
    identityId: { column: 'identity_id', codec: 'string' },
    username: { column: 'username', codec: 'string', whenNull: '' },
    fingerprint: { column: 'fingerprint', codec: 'string', write: false, whenNull: '' },
    certPem: { column: 'cert_pem', codec: 'string', write: false, whenNull: '' },
    isIssuedByNetwork: { column: 'is_issued_by_network', codec: 'bool', write: false },
    isExtendRequested: { column: 'is_extend_requested', codec: 'bool', write: false },
    isKeyRollRequested: { column: 'is_key_roll_requested', codec: 'bool', write: false },
    extendRequestedAt: { column: 'extend_requested_at', codec: 'datetime', write: false },
    lastAuthResolvedToRoot: { column: 'last_auth_resolved_to_root', codec: 'bool', write: false },
    lastExtendRolledKeys: { column: 'last_extend_rolled_keys', codec: 'bool', write: false },
  },
  refs: { identity: { column: 'identity_id', entity: 'identities', table: 'identities' } },
  fields: {
    method: scalar('string', 't.method'),
    identityId: scalar('string', 't.identity_id'),
    username: scalar('string', 't.username'),
    fingerprint: scalar('string', 't.fingerprint'),
    certPem: scalar('string', 't.cert_pem', false),
  },
  defaultSort: 't.created_at ASC, t.id ASC',
  schemas: { create: createSchema, update: updateSchema, patch: patchSchema },
  links: (row) => ({ identity: `identities/${row.identity_id}` }),
  handlers: {
    async create(ctx, body) {
      requirePermission(ctx.caller, 'identity', 'create');
      const input = parseInput(createSchema, body);
      const identity = ctx.core.store.getSql<Row>('SELECT id, auth_policy_id FROM identities WHERE id = ?', input.identityId);
      if (!identity) throw validationError('identityId', 'identity not found', input.identityId);
      if (input.method === 'cert') return createCertAuthenticator(ctx, input.identityId, input.certPem, input.tags ?? {});
      if (!input.username) throw validationError('username', 'is required');
      if (!input.password) throw validationError('password', 'is required');
      if (ctx.core.store.getSql("SELECT 1 FROM authenticators WHERE identity_id = ? AND method = 'updb'", input.identityId)) {
        throw validationError('identityId', 'the identity already has a updb authenticator', input.identityId);
      }
      checkPasswordForIdentity(ctx, input.identityId, input.password);
      const hash = await hashPassword(input.password);
      return createResource(ctx, authenticators, { ...input, password: undefined, passwordHash: hash });
    },
    async update(ctx, id, body, op) {
      requirePermission(ctx.caller, 'identity', 'update');
      await updateCredentials(ctx, id, body, op, false);
    },
  },
  beforeWrite(op, input) {
    if (op === 'create' && input.passwordHash) return { password_hash: input.passwordHash };
    if (input.passwordHash) return { password_hash: input.passwordHash };
  },
};

// The generic create passes passwordHash through beforeWrite; its schema must accept it.
authenticators.schemas.create = createSchema.extend({ passwordHash: z.string().optional() });
const internalUpdate = z.object({
  username: z.string().optional(),
  passwordHash: z.string().optional(),
  tags: nullableTags.optional(),
});

/**
 * Updates username/password of an authenticator (management, or self-service with currentPassword).
 * Hashing happens before the write transaction; password rules of the identity's auth policy apply.
 */
export async function updateCredentials(ctx: Ctx, id: string, body: unknown, op: 'update' | 'patch', selfService: boolean): Promise<void> {
  const store = ctx.core.store;
  const base = op === 'update' ? updateSchema : patchSchema;
  const input = parseInput(selfService ? base.extend(withCurrent) : base, body) as z.infer<typeof patchSchema> & { currentPassword?: string };
  const row = requireRow(store, authenticators, id);
  if (selfService && row.identity_id !== ctx.caller.identityId) throw notFound('authenticator');
  if (row.method !== 'updb' && (input.username != null || input.password != null)) {
    throw validationError(input.username != null ? 'username' : 'password', `cannot be set on a ${row.method} authenticator`);
  }
  if (selfService && row.method === 'updb' && !(await verifyPassword(row.password_hash as string, input.currentPassword!))) {
    throw invalidAuth('the current password is not correct');
  }
  let passwordHash: string | undefined;
  if (input.password != null) {
    checkPasswordForIdentity(ctx, row.identity_id as string, input.password);
    passwordHash = await hashPassword(input.password);
  }
  const def = { ...authenticators, schemas: { update: internalUpdate, patch: internalUpdate } };
  // permission (management) or ownership (self-service) was checked by the caller / above
  applyUpdate(
    ctx,
    def,
    id,
    {
      username: input.username ?? undefined,
      passwordHash,
      tags: input.tags ?? (op === 'update' ? {} : undefined),
    },
    'patch',
  );
}
