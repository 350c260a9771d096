import type { PolicyTypeSpec } from './policyIndex';

/** The three policy types: their tables and the role sides each one has. */
export const SERVICE_POLICY: PolicyTypeSpec = {
  type: 'service-policy',
  table: 'service_policies',
  sides: [
    { field: 'identityRoles', column: 'identity_roles', kind: 'identity' },
    { field: 'serviceRoles', column: 'service_roles', kind: 'service' },
    { field: 'postureCheckRoles', column: 'posture_check_roles', kind: 'posture-check' },
  ],
};

export const EDGE_ROUTER_POLICY: PolicyTypeSpec = {
  type: 'edge-router-policy',
  table: 'edge_router_policies',
  sides: [
    { field: 'edgeRouterRoles', column: 'edge_router_roles', kind: 'edge-router' },
    { field: 'identityRoles', column: 'identity_roles', kind: 'identity' },
  ],
};

export const SERVICE_EDGE_ROUTER_POLICY: PolicyTypeSpec = {
  type: 'service-edge-router-policy',
  table: 'service_edge_router_policies',
  sides: [
    { field: 'edgeRouterRoles', column: 'edge_router_roles', kind: 'edge-router' },
    { field: 'serviceRoles', column: 'service_roles', kind: 'service' },
  ],
};
