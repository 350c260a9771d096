import { issueRouterEnrollment } from '../enrollment/routers';
import { deleteTunnelerRouter, syncTunnelerRouter } from '../policy/tunnelerRouters';
import { tagsSchema } from './common';
import { defineResource } from './define';
import { policiesNaming, reach, reachedFrom } from '../policy/access';
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
  associations: {
    'edge-router-policies': policiesNaming('edge-router', 'edge-router-policies'),
    'service-edge-router-policies': policiesNaming('edge-router', 'service-edge-router-policies'),
    identities: reachedFrom('edge-router', 'identities', reach.identitiesOfRouter),
    services: reachedFrom('edge-router', 'services', reach.servicesOfRouter),
  },
  async afterWrite(op, id, _input, existing, ctx) {
    if (op === 'create') await issueRouterEnrollment(ctx, 'edge', id);
    await syncTunnelerRouter(ctx, id, existing);
  },
  async beforeDelete(row, ctx) {
    await deleteTunnelerRouter(ctx, row);
  },
});
