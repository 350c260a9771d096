import type { PermissionGroup } from '../auth/permissions';
import { edgeRouters } from '../entities/edgeRouters';
import { identities } from '../entities/identities';
import { postureChecks } from '../entities/postureChecks';
import type { ResourceDef } from '../entities/resource';
import { services } from '../entities/services';
import type { RoleKind } from './kinds';

/** The resource declaration and permission group of each role kind (role listings, role previews, integrity). */
export const KIND_RESOURCES: Record<RoleKind, { def: ResourceDef; permission: PermissionGroup }> = {
  identity: { def: identities, permission: 'identity' },
  service: { def: services, permission: 'service' },
  'edge-router': { def: edgeRouters, permission: 'router' },
  'posture-check': { def: postureChecks, permission: 'posture-check' },
};
