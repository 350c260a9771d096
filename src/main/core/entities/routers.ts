import { defineResource } from './define';
import { ROUTER_FIELDS } from './routerCommon';

/** Transit (fabric) routers: served at /routers and /transit-routers; enrolled like edge routers (em trott). */
export const routers = defineResource({
  entity: 'routers',
  table: 'routers',
  permission: 'router',
  fields: {
    ...ROUTER_FIELDS,
    interfaces: { codec: 'json' },
    unverifiedCertPem: { codec: 'string' },
    unverifiedFingerprint: { codec: 'string' },
  },
  defaultSort: 't.name ASC',
  // a created router gets its enrollment JWT in the create's transaction (enrollment/onWrite.ts)
});
