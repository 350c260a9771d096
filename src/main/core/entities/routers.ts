import { issueRouterEnrollment } from '../enrollment/routers';
import { normalizeRouterInput, ROUTER_COLUMNS, ROUTER_FIELDS, routerSchemas } from './routerCommon';
import type { ResourceDef } from './resource';

/** Transit (fabric) routers: served at /routers and /transit-routers; enrolled like edge routers (em trott). */
export const routers: ResourceDef = {
  entity: 'routers',
  table: 'routers',
  permission: 'router',
  columns: {
    ...ROUTER_COLUMNS,
    interfaces: { column: 'interfaces', codec: 'json', write: false },
    unverifiedCertPem: { column: 'unverified_cert_pem', codec: 'string', write: false },
    unverifiedFingerprint: { column: 'unverified_fingerprint', codec: 'string', write: false },
  },
  fields: ROUTER_FIELDS,
  defaultSort: 't.name ASC',
  schemas: routerSchemas(),
  beforeWrite(op, input) {
    normalizeRouterInput(op, input);
  },
  afterWrite(op, id, _input, _existing, ctx) {
    if (op === 'create') issueRouterEnrollment(ctx, 'transit', id);
  },
};
