import { z } from 'zod';
import { requirePermission } from '../permissions';
import { hashPassword, verifyPassword } from './passwords';
import { checkPasswordForIdentity } from './policyChecks';
import { usableCas } from '../entities/cas';
import { authenticatorMethodMax, certInUse, invalidCertPem } from '../enrollmentErrors';
import { chainToAnchor, PkiError, parseCertificate, splitPemBundle } from '../pki/index';
import type { Core } from '../core';
import type { Ctx } from '../context';
import { invalidAuth, notFound, validationError } from '../errors';
import { scalar } from '../query/fields';
import type { Row } from '../store/db';
import { parseInput } from '../validation';
import { nullableTags, passwordSchema, usernameSchema } from '../entities/common';
import { defineResource } from '../entities/define';
import { applyCreate, applyUpdate, createResource, requireDecoded } from '../entities/resource';
import { getRow, rowShape } from '../store/rows';

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

export const authenticators = defineResource({
  entity: 'authenticators',
  table: 'authenticators',
  permission: 'identity',
  fields: {
    method: { codec: 'string', schema: createSchema.shape.method, required: true, createOnly: true, filter: true },
    identityId: { codec: 'string', schema: createSchema.shape.identityId, required: true, createOnly: true, filter: true },
    username: { codec: 'string', schema: usernameSchema, whenNull: '', filter: true },
    // written by the handlers below (hashed), never shown
    passwordHash: { codec: 'string', schema: z.string(), shown: false },
    fingerprint: { codec: 'string', whenNull: '', filter: true },
    // set by createCertAuthenticator; a create body's certPem is for cert authenticators only
    certPem: { codec: 'string', whenNull: '', filter: scalar('string', 't.cert_pem', false) },
    isIssuedByNetwork: { codec: 'bool' },
    isExtendRequested: { codec: 'bool' },
    isKeyRollRequested: { codec: 'bool' },
    extendRequestedAt: { codec: 'datetime' },
    lastAuthResolvedToRoot: { codec: 'bool' },
    lastExtendRolledKeys: { codec: 'bool' },
  },
  refs: { identity: { column: 'identity_id', entity: 'identities', table: 'identities' } },
  defaultSort: 't.created_at ASC, t.id ASC',
  // the bodies differ by method and operation (see the handlers); the generic create gets the hash computed by the handler
  schemas: { create: createSchema.extend({ passwordHash: z.string().optional() }), update: updateSchema, patch: patchSchema },
  links: (row) => ({ identity: `identities/${row.identity_id}` }),
  handlers: {
    async create(ctx, body): Promise<string> {
      requirePermission(ctx.caller, 'identity', 'create');
      const input = parseInput(createSchema, body);
      const identity = await ctx.core.store.getSql<Row>('SELECT id, auth_policy_id FROM identities WHERE id = ?', input.identityId);
      if (!identity) throw validationError('identityId', 'identity not found', input.identityId);
      if (input.method === 'cert') return createCertAuthenticator(ctx, input.identityId, input.certPem, input.tags ?? {});
      if (!input.username) throw validationError('username', 'is required');
      if (!input.password) throw validationError('password', 'is required');
      const store = ctx.core.store;
      const refuseSecond = async () => {
        if (await store.getSql("SELECT 1 FROM authenticators WHERE identity_id = ? AND method = 'updb'", input.identityId)) {
          throw validationError('identityId', 'the identity already has a updb authenticator', input.identityId);
        }
      };
      await refuseSecond(); // before the slow hash
      await checkPasswordForIdentity(ctx, input.identityId, input.password);
      const hash = await hashPassword(input.password);
      // and again with the write: one made meanwhile (another request, an enrollment) counts
      return store.tx(async () => {
        await refuseSecond();
        return createResource(ctx, authenticators, { ...input, password: undefined, passwordHash: hash });
      });
    },
    async update(ctx, id, body, op) {
      requirePermission(ctx.caller, 'identity', 'update');
      await updateCredentials(ctx, id, body, op, false);
    },
  },
});

const PASSWORD_HASH = rowShape({ password_hash: 'string?' });

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
  const row = await requireDecoded(store, authenticators, id);
  if (selfService && row.identity_id !== ctx.caller.identityId) throw notFound('authenticator');
  if (row.method !== 'updb' && (input.username != null || input.password != null)) {
    throw validationError(input.username != null ? 'username' : 'password', `cannot be set on a ${row.method} authenticator`);
  }
  if (selfService && row.method === 'updb' && !(await verifyPassword(row.password_hash, input.currentPassword!))) {
    throw invalidAuth('the current password is not correct');
  }
  let passwordHash: string | undefined;
  if (input.password != null) {
    await checkPasswordForIdentity(ctx, row.identity_id, input.password);
    passwordHash = await hashPassword(input.password);
  }
  const def = { ...authenticators, schemas: { update: internalUpdate, patch: internalUpdate } };
  await store.tx(async () => {
    // self-service: only over the password that was verified above (a change made meanwhile wins)
    if (selfService && row.method === 'updb') {
      const now = await getRow(store, PASSWORD_HASH, 'SELECT password_hash FROM authenticators WHERE id = ?', id);
      if (!now) throw notFound('authenticator');
      if (now.password_hash !== row.password_hash) throw invalidAuth('the current password is not correct');
    }
    // permission (management) or ownership (self-service) was checked by the caller / above
    await applyUpdate(
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
  });
}

interface CertAuthenticator {
  identityId: string;
  certPem: string;
  fingerprint: string;
  caId?: string | null;
  issuedByNetwork: boolean;
}

/** A certificate authenticator, written by the system through the resource write path (enrollment, extension). */
export async function addCertAuthenticator(core: Core, a: CertAuthenticator, tags: object = {}): Promise<string> {
  return applyCreate(
    core.system,
    authenticators,
    { method: 'cert', identityId: a.identityId, tags },
    { columns: { fingerprint: a.fingerprint, cert_pem: a.certPem, ca_id: a.caId ?? null, is_issued_by_network: a.issuedByNetwork ? 1 : 0 } },
  );
}

/** A password authenticator with an already hashed password, written by the system (bootstrap, enrollment). */
export async function addUpdbAuthenticator(core: Core, identityId: string, username: string, passwordHash: string): Promise<string> {
  return applyCreate(core.system, authenticators, { method: 'updb', identityId, username, passwordHash });
}

export function issuedByNetwork(ctx: Ctx, certPem: string): boolean {
  return chainToAnchor(certPem, [], [ctx.core.pki.signing.certPem], ctx.core.clock.now(), true).ok;
}

/**
 * POST /authenticators with method `cert`: binds an existing client certificate to an identity. The certificate is
 * recorded with the CA it chains to (so a re-enroll becomes ottca) and whether the controller issued it.
 */
export async function createCertAuthenticator(ctx: Ctx, identityId: string, certPem: string | undefined, tags: object): Promise<string> {
  if (!certPem) throw validationError('certPem', 'is required for method cert');
  const certs = splitPemBundle(certPem);
  if (certs.length !== 1) throw invalidCertPem({ field: 'certPem', reason: 'exactly one PEM certificate is expected', value: certs.length });
  let fingerprint: string;
  try {
    const info = parseCertificate(certs[0]!);
    if (info.isCa) throw invalidCertPem({ field: 'certPem', reason: 'a CA certificate cannot be a client certificate' });
    fingerprint = info.fingerprint;
  } catch (e) {
    if (e instanceof PkiError) throw invalidCertPem({ field: 'certPem', reason: e.message });
    throw e;
  }
  const store = ctx.core.store;
  const now = ctx.core.clock.now();
  const ca = (await usableCas(ctx, 'is_auth_enabled')).find((c) => chainToAnchor(certs[0]!, [], c.anchors, now, true).ok);
  // checked with the write: an authenticator made meanwhile (another request, an enrollment) counts
  return store.tx(async () => {
    if (await store.getSql('SELECT 1 FROM authenticators WHERE fingerprint = ? OR unverified_fingerprint = ?', fingerprint, fingerprint))
      throw certInUse();
    if (await store.getSql("SELECT 1 FROM authenticators WHERE identity_id = ? AND method = 'cert'", identityId)) throw authenticatorMethodMax();
    return addCertAuthenticator(
      ctx.core,
      {
        identityId,
        certPem: certs[0]!,
        fingerprint,
        caId: ca?.row.id ?? null,
        issuedByNetwork: issuedByNetwork(ctx, certs[0]!),
      },
      tags,
    );
  });
}
