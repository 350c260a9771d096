import { z } from 'zod';
import { issueRouterEnrollment } from '../enrollment/routers';
import { edgeRouterDeleting, edgeRouterWritten } from '../policy/entityHooks';
import { scalar } from '../query/fields';
import { roleAttributesField } from '../query/roleFields';
import { attributesSchema, costSchema, nameSchema, nullableTags, patchOf, tagsSchema } from './common';
import type { ResourceDef } from './resource';

const listeners = z.record(z.string(), z.array(z.string()));
const optional = {
  appData: nullableTags.optional(),
  cost: costSchema.nullable().optional(),
  ctrlChanListeners: listeners.nullable().optional(),
  disabled: z.boolean().optional(),
  isTunnelerEnabled: z.boolean().optional(),
  noTraversal: z.boolean().optional(),
  roleAttributes: attributesSchema.optional(),
  tags: nullableTags.optional(),
};

/** Edge routers (management view). Enrollment fields are maintained by the enrollment module. */
export const edgeRouters: ResourceDef = {
  entity: 'edge-routers',
  table: 'edge_routers',
  permission: 'router',
  roleAttributesType: 'edge-router',
  columns: {
    name: { column: 'name', codec: 'string' },
    cost: { column: 'cost', codec: 'int' },
    noTraversal: { column: 'no_traversal', codec: 'bool' },
    disabled: { column: 'disabled', codec: 'bool' },
    isTunnelerEnabled: { column: 'is_tunneler_enabled', codec: 'bool' },
    roleAttributes: { column: 'role_attributes', codec: 'json' },
    appData: { column: 'app_data', codec: 'json' },
    ctrlChanListeners: { column: 'ctrl_chan_listeners', codec: 'json' },
    hostname: { column: 'hostname', codec: 'string', write: false },
    supportedProtocols: { column: 'supported_protocols', codec: 'json', write: false },
    syncStatus: { column: 'sync_status', codec: 'string', write: false },
    isOnline: { column: 'is_online', codec: 'bool', write: false },
    isVerified: { column: 'is_verified', codec: 'bool', write: false },
    fingerprint: { column: 'fingerprint', codec: 'string', write: false },
    certPem: { column: 'cert_pem', codec: 'string', write: false },
    enrollmentToken: { column: 'enrollment_token', codec: 'string', write: false },
    enrollmentJwt: { column: 'enrollment_jwt', codec: 'string', write: false },
    enrollmentCreatedAt: { column: 'enrollment_created_at', codec: 'datetime', write: false },
    enrollmentExpiresAt: { column: 'enrollment_expires_at', codec: 'datetime', write: false },
  },
  fields: {
    name: scalar('string', 't.name'),
    cost: scalar('number', 't.cost'),
    isOnline: scalar('boolean', 't.is_online'),
    isVerified: scalar('boolean', 't.is_verified'),
    isTunnelerEnabled: scalar('boolean', 't.is_tunneler_enabled'),
    noTraversal: scalar('boolean', 't.no_traversal'),
    disabled: scalar('boolean', 't.disabled'),
    fingerprint: scalar('string', 't.fingerprint'),
    roleAttributes: roleAttributesField('edge-router'),
  },
  defaultSort: 't.name ASC',
  schemas: {
    create: z.object({ name: nameSchema, ...optional }),
    update: z.object({ name: nameSchema, ...optional }),
    patch: patchOf({ name: nameSchema, appData: tagsSchema, cost: costSchema, ctrlChanListeners: listeners, disabled: z.boolean(),
      isTunnelerEnabled: z.boolean(), noTraversal: z.boolean(), roleAttributes: z.array(z.string()), tags: tagsSchema }),
  },
  links: (row) => ({
    'edge-router-policies': `edge-routers/${row.id}/edge-router-policies`,
    'service-edge-router-policies': `edge-routers/${row.id}/service-edge-router-policies`,
    identities: `edge-routers/${row.id}/identities`,
    services: `edge-routers/${row.id}/services`,
  }),
  beforeWrite(op, input) {
    if (op === 'patch') {
      for (const k of ['name', 'disabled', 'isTunnelerEnabled', 'noTraversal'] as const) if (input[k] === null) delete input[k];
    }
    if (input.cost === null) input.cost = 0;
    for (const k of ['appData', 'ctrlChanListeners', 'tags'] as const) if (input[k] === null) input[k] = {};
    if (input.roleAttributes === null) input.roleAttributes = [];
  },
  afterWrite(op, id, input, existing, ctx) {
    if (op === 'create') issueRouterEnrollment(ctx, 'edge', id);
    edgeRouterWritten(ctx, id, op, input, existing);
  },
  beforeDelete(row, ctx) {
    edgeRouterDeleting(ctx, row);
  },
};
