/**
 * The entity kinds that carry role attributes and appear on the sides of policies: what both the core and the
 * console need to know about each. The core adds what the policy engine needs (core/policy/kinds.ts); the type
 * claiming each kind is the registered resource declared with that `roleKind` (core/registry.ts).
 */
export const ROLE_KINDS = {
  identity: { resource: 'identities', plural: 'identities', label: 'identity' },
  service: { resource: 'services', plural: 'services', label: 'service' },
  'edge-router': { resource: 'edge-routers', plural: 'edge routers', label: 'edge router' },
  'posture-check': { resource: 'posture-checks', plural: 'posture checks', label: 'posture check' },
} as const;

export type RoleKind = keyof typeof ROLE_KINDS;
export const ROLE_KIND_NAMES = Object.keys(ROLE_KINDS) as [RoleKind, ...RoleKind[]];
