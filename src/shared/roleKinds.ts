/**
 * The entity kinds that carry role attributes and appear on the sides of policies: every fact about each, once, for
 * the core and the console. The type claiming each kind is the registered resource declared with that `roleKind`
 * (core/registry.ts); its declaration must name the same table (defineResource checks).
 * - `resource`: its URL segment; `table`: its entity table (a trusted SQL name)
 * - `plural`, `label`: how the console names them
 * - `missing`: OpenZiti's word in "no <missing> found with the given ids" (an `@id` role naming nothing)
 */
export const ROLE_KINDS = {
  identity: { resource: 'identities', table: 'identities', plural: 'identities', label: 'identity', missing: 'identities' },
  service: { resource: 'services', table: 'services', plural: 'services', label: 'service', missing: 'services' },
  'edge-router': { resource: 'edge-routers', table: 'edge_routers', plural: 'edge routers', label: 'edge router', missing: 'routers' },
  'posture-check': {
    resource: 'posture-checks',
    table: 'posture_checks',
    plural: 'posture checks',
    label: 'posture check',
    missing: 'posture checks',
  },
} as const;

export type RoleKindFacts = (typeof ROLE_KINDS)[RoleKind];

export type RoleKind = keyof typeof ROLE_KINDS;
export const ROLE_KIND_NAMES = Object.keys(ROLE_KINDS) as [RoleKind, ...RoleKind[]];
