import { z } from 'zod';
import { scalar } from '../query/fields';
import { costSchema, nameSchema, nullableTags, patchOf, tagsSchema } from './common';
import type { ColumnSpec, WriteOp } from './resource';
import type { QueryFields } from '../query/compile';

/** What edge routers and transit routers have in common: columns, filter fields, bodies and PUT/PATCH rules. */
const listeners = z.record(z.string(), z.array(z.string()));

export const ROUTER_COLUMNS: Record<string, ColumnSpec> = {
  name: { column: 'name', codec: 'string' },
  cost: { column: 'cost', codec: 'int' },
  noTraversal: { column: 'no_traversal', codec: 'bool' },
  disabled: { column: 'disabled', codec: 'bool' },
  ctrlChanListeners: { column: 'ctrl_chan_listeners', codec: 'json' },
  isOnline: { column: 'is_online', codec: 'bool', write: false },
  isVerified: { column: 'is_verified', codec: 'bool', write: false },
  fingerprint: { column: 'fingerprint', codec: 'string', write: false, whenNull: '' },
  enrollmentToken: { column: 'enrollment_token', codec: 'string', write: false },
  enrollmentJwt: { column: 'enrollment_jwt', codec: 'string', write: false },
  enrollmentCreatedAt: { column: 'enrollment_created_at', codec: 'datetime', write: false },
  enrollmentExpiresAt: { column: 'enrollment_expires_at', codec: 'datetime', write: false },
};

export const ROUTER_FIELDS: QueryFields = {
  name: scalar('string', 't.name'),
  cost: scalar('number', 't.cost'),
  noTraversal: scalar('boolean', 't.no_traversal'),
  disabled: scalar('boolean', 't.disabled'),
  isOnline: scalar('boolean', 't.is_online'),
  isVerified: scalar('boolean', 't.is_verified'),
  fingerprint: scalar('string', 't.fingerprint'),
};

type Kind = 'boolean' | 'object' | 'array';
const BASE_KINDS: Record<string, Kind> = { disabled: 'boolean', noTraversal: 'boolean', ctrlChanListeners: 'object', tags: 'object' };

/** Create/update/patch bodies: the shared router fields plus `extra` (field → [schema, kind]). */
export function routerSchemas(extra: Record<string, [z.ZodType, Kind]> = {}) {
  const optional: Record<string, z.ZodType> = {
    cost: costSchema.nullable().optional(),
    ctrlChanListeners: listeners.nullable().optional(),
    disabled: z.boolean().nullable().optional(),
    noTraversal: z.boolean().nullable().optional(),
    tags: nullableTags.optional(),
  };
  const patchShape: Record<string, z.ZodType> = {
    name: nameSchema,
    cost: costSchema,
    ctrlChanListeners: listeners,
    disabled: z.boolean(),
    noTraversal: z.boolean(),
    tags: tagsSchema,
  };
  for (const [k, [schema]] of Object.entries(extra)) {
    optional[k] = schema.nullable().optional();
    patchShape[k] = schema;
  }
  return { create: z.object({ name: nameSchema, ...optional }), update: z.object({ name: nameSchema, ...optional }), patch: patchOf(patchShape) };
}

/**
 * PUT resets omitted optional fields and null means the zero value (as OpenZiti); PATCH leaves omitted fields and
 * ignores null on the non-nullable ones.
 */
export function normalizeRouterInput(op: WriteOp, input: Record<string, unknown>, extraKinds: Record<string, Kind> = {}): void {
  const kinds = { ...BASE_KINDS, ...extraKinds };
  if (op === 'patch') {
    if (input.name === null) delete input.name;
    for (const [k, kind] of Object.entries(kinds)) if (kind === 'boolean' && input[k] === null) delete input[k];
  }
  const reset = (v: unknown) => v === null || (op === 'update' && v === undefined);
  if (reset(input.cost)) input.cost = 0;
  for (const [k, kind] of Object.entries(kinds)) {
    if (!reset(input[k])) continue;
    input[k] = kind === 'boolean' ? false : kind === 'object' ? {} : [];
  }
}
