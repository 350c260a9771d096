import { policyResource } from './policyResource';
import { SERVICE_EDGE_ROUTER_POLICY } from './policySpecs';

/** Service edge router policies: which services may be reached through which edge routers. */
export const serviceEdgeRouterPolicies = policyResource({
  entity: 'service-edge-router-policies',
  permission: 'service-edge-router-policy',
  spec: SERVICE_EDGE_ROUTER_POLICY,
});
