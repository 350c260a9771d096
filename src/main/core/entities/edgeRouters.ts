import { issueRouterEnrollment } from '../enrollment/routers';
import { deleteTunnelerRouter, syncTunnelerRouter } from '../policy/tunnelerRouters';
import { tagsSchema } from './common';
import { defineResource } from './define';
import { ROUTER_FIELDS, ROUTER_FLAG } from './routerCommon';

/** Edge routers (management view). Enrollment fields are maintained by the enrollment module. */
export const edgeRouters = defineResource({
  entity: 'edge-routers',
  table: 'edge_routers',
  permission: 'router',
  roleKind: 'edge-router',
  fields: {
    ...ROUTER_FIELDS,
    isTunnelerEnabled: ROUTER_FLAG,
    appData: { codec: 'json', schema: tagsSchema, nullable: true, zero: {} },
    hostname: { codec: 'string' },
    supportedProtocols: { codec: 'json' },
    syncStatus: { codec: 'string' },
    certPem: { codec: 'string' },
  },
  defaultSort: 't.name ASC',
  links: (row) => ({
    'edge-router-policies': `edge-routers/${row.id}/edge-router-policies`,
    'service-edge-router-policies': `edge-routers/${row.id}/service-edge-router-policies`,
    identities: `edge-routers/${row.id}/identities`,
    services: `edge-routers/${row.id}/services`,
  }),
  afterWrite(op, id, _input, existing, ctx) {
    if (op === 'create') issueRouterEnrollment(ctx, 'edge', id);
    syncTunnelerRouter(ctx, id, existing);
  },
  beforeDelete(row, ctx) {
    deleteTunnelerRouter(ctx, row);
  },
});
