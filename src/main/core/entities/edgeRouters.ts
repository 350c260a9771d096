import { z } from 'zod';
import { issueRouterEnrollment } from '../enrollment/routers';
import { edgeRouterWritten } from '../policy/entityHooks';
import { deleteTunnelerRouter, syncTunnelerRouter } from '../policy/tunnelerRouters';
import { scalar } from '../query/fields';
import { roleAttributesField } from '../query/roleFields';
import { tagsSchema } from './common';
import { normalizeRouterInput, ROUTER_COLUMNS, ROUTER_FIELDS, routerSchemas } from './routerCommon';
import type { ResourceDef } from './resource';

const EXTRA = {
  appData: [tagsSchema, 'object'],
  isTunnelerEnabled: [z.boolean(), 'boolean'],
  roleAttributes: [z.array(z.string()), 'array'],
} as const satisfies Record<string, [z.ZodType, 'boolean' | 'object' | 'array']>;
const EXTRA_KINDS = Object.fromEntries(Object.entries(EXTRA).map(([k, [, kind]]) => [k, kind]));

/** Edge routers (management view). Enrollment fields are maintained by the enrollment module. */
export const edgeRouters: ResourceDef = {
  entity: 'edge-routers',
  table: 'edge_routers',
  permission: 'router',
  roleKind: 'edge-router',
  columns: {
    ...ROUTER_COLUMNS,
    isTunnelerEnabled: { column: 'is_tunneler_enabled', codec: 'bool' },
    roleAttributes: { column: 'role_attributes', codec: 'json' },
    appData: { column: 'app_data', codec: 'json' },
    hostname: { column: 'hostname', codec: 'string', write: false },
    supportedProtocols: { column: 'supported_protocols', codec: 'json', write: false },
    syncStatus: { column: 'sync_status', codec: 'string', write: false },
    certPem: { column: 'cert_pem', codec: 'string', write: false },
  },
  fields: {
    ...ROUTER_FIELDS,
    isTunnelerEnabled: scalar('boolean', 't.is_tunneler_enabled'),
    roleAttributes: roleAttributesField('edge-router'),
  },
  defaultSort: 't.name ASC',
  schemas: routerSchemas(EXTRA),
  links: (row) => ({
    'edge-router-policies': `edge-routers/${row.id}/edge-router-policies`,
    'service-edge-router-policies': `edge-routers/${row.id}/service-edge-router-policies`,
    identities: `edge-routers/${row.id}/identities`,
    services: `edge-routers/${row.id}/services`,
  }),
  beforeWrite(op, input) {
    normalizeRouterInput(op, input, EXTRA_KINDS);
  },
  afterWrite(op, id, input, existing, ctx) {
    if (op === 'create') issueRouterEnrollment(ctx, 'edge', id);
    edgeRouterWritten(ctx.core, id, op, input);
    syncTunnelerRouter(ctx, id, existing);
  },
  beforeDelete(row, ctx) {
    deleteTunnelerRouter(ctx, row);
  },
};
