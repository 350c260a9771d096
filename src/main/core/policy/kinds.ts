import type { RoleKind } from '../../../shared/roleKinds';

export { ROLE_KIND_NAMES, ROLE_KINDS, type RoleKind } from '../../../shared/roleKinds';

/**
 * What the policy engine adds to the shared facts of a role kind (src/shared/roleKinds.ts). A leaf: the policy
 * modules below the registry read it; test/integration/role-kinds.test.ts checks `table` against the declaration.
 */
export interface KindInfo {
  /** the entity table (trusted SQL name) */
  table: string;
  /** what "no such @id" says, in OpenZiti's words: "no <plural> found with the given ids" */
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
