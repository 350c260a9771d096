import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import type { Core } from '../core';
import { notFound, validationError } from '../errors';
import { newId } from '../ids';
import { applySystemCreate } from '../entities/resource';
import { defineResource } from '../entities/define';
import { scalar } from '../query/fields';
import { usernameSchema } from '../entities/common';
import { getRow, type Decoded } from '../store/rows';
import { parseInput } from '../validation';
import { enrollmentExists, enrollmentExpired, invalidEnrollmentToken } from '../enrollmentErrors';
import { signEnrollmentJwt } from './jwt';

/** Enrollments created with an identity (and router enrollments) expire after 180 minutes, as in OpenZiti. */
export const DEFAULT_ENROLLMENT_MINUTES = 180;
export const IDENTITY_ENROLL_METHODS = ['ott', 'ottca', 'updb'] as const;
export type IdentityEnrollMethod = (typeof IDENTITY_ENROLL_METHODS)[number];

export const defaultExpiry = (core: Core) => new Date(core.clock.now().getTime() + DEFAULT_ENROLLMENT_MINUTES * 60_000);

export interface NewEnrollment {
  identityId: string;
  method: IdentityEnrollMethod;
  caId?: string | null;
  username?: string | null;
  expiresAt: Date;
  /** field prefix for validation errors (identity create nests them under `enrollment`) */
  fieldPrefix?: string;
}

/** Inserts an identity enrollment with a fresh token and signed JWT. Call inside a transaction. */
export async function insertEnrollment(ctx: Ctx, e: NewEnrollment): Promise<string> {
  const store = ctx.core.store;
  const field = (name: string) => (e.fieldPrefix ? `${e.fieldPrefix}.${name}` : name);
  if (await store.getSql('SELECT 1 FROM enrollments WHERE identity_id = ? AND method = ?', e.identityId, e.method)) throw enrollmentExists(e.method);
  if (e.method === 'ottca') {
    if (!e.caId || !(await store.getSql('SELECT 1 FROM cas WHERE id = ?', e.caId)))
      throw validationError(field(e.fieldPrefix ? 'ottca' : 'caId'), 'ca not found', e.caId ?? null);
  }
  if (e.method === 'updb') {
    const f = field(e.fieldPrefix ? 'updb' : 'username');
    const parsed = usernameSchema.safeParse(e.username);
    if (!parsed.success) throw validationError(f, e.username ? parsed.error.issues[0]!.message : 'username not provided', e.username ?? null);
    const taken = await store.getSql(
      "SELECT 1 FROM authenticators WHERE username = ? UNION ALL SELECT 1 FROM enrollments WHERE method = 'updb' AND username = ?",
      e.username,
      e.username,
    );
    if (taken) {
      throw validationError(f, `duplicate value '${e.username}' in unique index on authenticators store`, e.username, {
        plain: `The username ${e.username} is already taken`,
      });
    }
  }
  const id = newId();
  const token = randomUUID();
  await applySystemCreate(ctx, enrollments, {
    id,
    columns: {
      method: e.method,
      identity_id: e.identityId,
      ca_id: e.method === 'ottca' ? e.caId : null,
      username: e.method === 'updb' ? e.username : null,
      token,
      jwt: signEnrollmentJwt(ctx.core, { em: e.method, sub: e.identityId, jti: token, exp: e.expiresAt }),
      issued_at: ctx.core.clock.now().toISOString(),
      expires_at: e.expiresAt.toISOString(),
    },
  });
  return id;
}

const futureDate = z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time' });
const createSchema = z.object({
  method: z.enum(IDENTITY_ENROLL_METHODS),
  identityId: z.string().min(1),
  expiresAt: futureDate,
  caId: z.string().nullable().optional(),
  username: z.string().nullable().optional(),
  tags: z.record(z.string(), z.unknown()).nullable().optional(),
});
export const enrollmentCreateSchema = createSchema;
export const enrollmentRefreshSchema = z.object({ expiresAt: futureDate });

function futureExpiry(core: Core, value: string): Date {
  const at = new Date(value);
  if (at <= core.clock.now()) throw validationError('expiresAt', 'must be after the current date and time', value);
  return at;
}

/** POST /enrollments: 409 when an enrollment of the same method is already outstanding for the identity. */
export async function createEnrollment(ctx: Ctx, body: unknown): Promise<string> {
  requirePermission(ctx.caller, 'enrollment', 'create');
  const input = parseInput(createSchema, body);
  const store = ctx.core.store;
  if (!(await store.getSql('SELECT 1 FROM identities WHERE id = ?', input.identityId)))
    throw validationError('identityId', 'identity not found', input.identityId);
  const expiresAt = futureExpiry(ctx.core, input.expiresAt);
  return store.tx(async () => {
    const id = await insertEnrollment(ctx, { ...input, expiresAt });
    if (input.tags) await store.runSql('UPDATE enrollments SET tags = ? WHERE id = ?', JSON.stringify(input.tags), id);
    return id;
  });
}

/** POST /enrollments/{id}/refresh: a new expiry window, token and JWT; the previous token stops working. */
export async function refreshEnrollment(ctx: Ctx, id: string, body: unknown): Promise<void> {
  requirePermission(ctx.caller, 'enrollment', 'update');
  const input = parseInput(enrollmentRefreshSchema, body);
  const store = ctx.core.store;
  // read and written in one transaction: an enrollment used or deleted meanwhile is 404
  await store.tx(async () => {
    const row = await getRow(store, enrollments.shape, 'SELECT * FROM enrollments WHERE id = ?', id);
    if (!row) throw notFound('enrollment');
    const expiresAt = futureExpiry(ctx.core, input.expiresAt);
    const token = randomUUID();
    const now = ctx.core.clock.now().toISOString();
    await store.runSql(
      'UPDATE enrollments SET token = ?, jwt = ?, issued_at = ?, expires_at = ?, updated_at = ? WHERE id = ?',
      token,
      signEnrollmentJwt(ctx.core, { em: row.method as IdentityEnrollMethod, sub: row.identity_id, jti: token, exp: expiresAt }),
      now,
      expiresAt.toISOString(),
      now,
      id,
    );
  });
}

/** The outstanding enrollment for a token; unknown tokens and other methods are INVALID_ENROLLMENT_TOKEN, late ones ENROLLMENT_EXPIRED. */
export async function enrollmentByToken(core: Core, token: unknown, methods: readonly string[]): Promise<Enrollment> {
  const row =
    typeof token === 'string' && token ? await getRow(core.store, enrollments.shape, 'SELECT * FROM enrollments WHERE token = ?', token) : undefined;
  if (!row || !methods.includes(row.method)) throw invalidEnrollmentToken();
  if (row.expires_at <= core.clock.now().toISOString()) throw enrollmentExpired();
  return row;
}

/** Identity create with `enrollment: {ott | ottca | updb}` (already parsed): runs inside the identity's create transaction. */
export async function createIdentityEnrollments(
  ctx: Ctx,
  identityId: string,
  request: { ott?: boolean; ottca?: string; updb?: string } | undefined,
): Promise<void> {
  if (!request) return;
  const base = { identityId, expiresAt: defaultExpiry(ctx.core), fieldPrefix: 'enrollment' };
  if (request.ott) await insertEnrollment(ctx, { ...base, method: 'ott' });
  if (request.ottca !== undefined) await insertEnrollment(ctx, { ...base, method: 'ottca', caId: request.ottca });
  if (request.updb !== undefined) await insertEnrollment(ctx, { ...base, method: 'updb', username: request.updb });
}

/** Outstanding identity enrollments (management view). Created by identity create, POST /enrollments and re-enroll. */
export const enrollments = defineResource({
  entity: 'enrollments',
  table: 'enrollments',
  permission: 'enrollment',
  fields: {
    method: { codec: 'string', notNull: true, filter: true },
    identityId: { codec: 'string', notNull: true, filter: true },
    caId: { codec: 'string', filter: true },
    username: { codec: 'string', whenNull: '', filter: true },
    token: { codec: 'string', notNull: true, filter: true },
    jwt: { codec: 'string', notNull: true },
    expiresAt: { codec: 'datetime', notNull: true, filter: true },
  },
  filters: { identity: scalar('string', 't.identity_id') },
  refs: {
    identity: { column: 'identity_id', entity: 'identities', table: 'identities' },
    ca: { column: 'ca_id', entity: 'cas', table: 'cas' },
  },
  defaultSort: 't.created_at ASC, t.id ASC',
  // written by the core only: the create body is the handler's
  writable: false,
  schemas: { create: enrollmentCreateSchema },
  links: (row) => ({
    identity: `identities/${row.identity_id}`,
    refresh: `enrollments/${row.id}/refresh`,
    ...(row.ca_id ? { ca: `cas/${row.ca_id}` } : {}),
  }),
  handlers: { create: (ctx, body) => createEnrollment(ctx, body) },
  decorate(items) {
    // OpenZiti's enrollment view names the identity's URL segment
    for (const item of items) if (item.identity) (item.identity as Record<string, unknown>).urlName = 'identities';
  },
});

/** An enrollment's row, decoded through its declaration. */
export type Enrollment = Decoded<typeof enrollments.shape>;
