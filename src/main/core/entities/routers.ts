import { z } from 'zod';
import { scalar } from '../query/fields';
import { issueRouterEnrollment } from '../enrollment/routers';
import { costSchema, nameSchema, nullableTags, patchOf, tagsSchema } from './common';
import type { ResourceDef } from './resource';

const listeners = z.record(z.string(), z.array(z.string()));
const optional = {
  cost: costSchema.nullable().optional(),
  ctrlChanListeners: listeners.nullable().optional(),
  disabled: z.boolean().nullable().optional(),
  noTraversal: z.boolean().nullable().optional(),
  tags: nullableTags.optional(),
};

/** Transit (fabric) routers: served at /routers and /transit-routers; enrolled like edge routers (em trott). */
export const routers: ResourceDef = {
  entity: 'routers',
  table: 'routers',
  permission: 'router',
  columns: {
    name: { column: 'name', codec: 'string' },
    cost: { column: 'cost', codec: 'int' },
    noTraversal: { column: 'no_traversal', codec: 'bool' },
    disabled: { column: 'disabled', codec: 'bool' },
    ctrlChanListeners: { column: 'ctrl_chan_listeners', codec: 'json' },
    interfaces: { column: 'interfaces', codec: 'json', write: false },
    isOnline: { column: 'is_online', codec: 'bool', write: false },
    isVerified: { column: 'is_verified', codec: 'bool', write: false },
    fingerprint: { column: 'fingerprint', codec: 'string', write: false },
    unverifiedCertPem: { column: 'unverified_cert_pem', codec: 'string', write: false },
    unverifiedFingerprint: { column: 'unverified_fingerprint', codec: 'string', write: false },
    enrollmentToken: { column: 'enrollment_token', codec: 'string', write: false },
    enrollmentJwt: { column: 'enrollment_jwt', codec: 'string', write: false },
    enrollmentCreatedAt: { column: 'enrollment_created_at', codec: 'datetime', write: false },
    enrollmentExpiresAt: { column: 'enrollment_expires_at', codec: 'datetime', write: false },
  },
  fields: {
    name: scalar('string', 't.name'),
    cost: scalar('number', 't.cost'),
    noTraversal: scalar('boolean', 't.no_traversal'),
    disabled: scalar('boolean', 't.disabled'),
    isOnline: scalar('boolean', 't.is_online'),
    isVerified: scalar('boolean', 't.is_verified'),
    fingerprint: scalar('string', 't.fingerprint'),
  },
  defaultSort: 't.name ASC',
  schemas: {
    create: z.object({ name: nameSchema, ...optional }),
    update: z.object({ name: nameSchema, ...optional }),
    patch: patchOf({ name: nameSchema, cost: costSchema, ctrlChanListeners: listeners, disabled: z.boolean(), noTraversal: z.boolean(), tags: tagsSchema }),
  },
  beforeWrite(op, input) {
    if (op === 'patch') for (const k of ['name', 'disabled', 'noTraversal'] as const) if (input[k] === null) delete input[k];
    // PUT resets omitted optional fields, as OpenZiti does
    if (input.cost === null || (op === 'update' && input.cost === undefined)) input.cost = 0;
    for (const k of ['disabled', 'noTraversal'] as const) if (input[k] === null || (op === 'update' && input[k] === undefined)) input[k] = false;
    for (const k of ['ctrlChanListeners', 'tags'] as const) if (input[k] === null || (op === 'update' && input[k] === undefined)) input[k] = {};
  },
  afterWrite(op, id, _input, _existing, ctx) {
    if (op === 'create') issueRouterEnrollment(ctx, 'transit', id);
  },
};
