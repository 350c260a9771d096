import { policyResource } from './policyResource';
import { EDGE_ROUTER_POLICY } from './policySpecs';

/** Edge router policies: which identities may use which edge routers. System policies belong to tunneler-enabled routers. */
export const edgeRouterPolicies = policyResource({
  entity: 'edge-router-policies',
  permission: 'edge-router-policy',
  spec: EDGE_ROUTER_POLICY,
  fields: { isSystem: { codec: 'bool', filter: true } },
});
