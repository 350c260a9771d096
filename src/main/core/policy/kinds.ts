/** The entity kinds that carry role attributes and appear on the sides of policies. */
export type RoleKind = 'identity' | 'service' | 'edge-router' | 'posture-check';

export interface KindInfo {
  /** the entity table (trusted SQL name) */
  table: string;
  /** what "no such @id" says: "no <plural> found with the given ids" */
  plural: string;
}

export const KINDS: Record<RoleKind, KindInfo> = {
  identity: { table: 'identities', plural: 'identities' },
  service: { table: 'services', plural: 'services' },
  'edge-router': { table: 'edge_routers', plural: 'routers' },
  'posture-check': { table: 'posture_checks', plural: 'posture checks' },
};

/** The three policy types and the sides (kinds) each one relates. */
export type PolicyType = 'service-policy' | 'edge-router-policy' | 'service-edge-router-policy';

export const POLICY_TABLES: Record<PolicyType, string> = {
  'service-policy': 'service_policies',
  'edge-router-policy': 'edge_router_policies',
  'service-edge-router-policy': 'service_edge_router_policies',
};
