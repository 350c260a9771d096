export { ROLE_KIND_NAMES, ROLE_KINDS, type RoleKind } from '../../shared/roleKinds';

/** The three policy types. */
export type PolicyType = 'service-policy' | 'edge-router-policy' | 'service-edge-router-policy';
