import { unauthorized } from './errors';

export const PERMISSION_GROUPS = [
  'auth-policy',
  'ca',
  'config',
  'config-type',
  'edge-router-policy',
  'enrollment',
  'external-jwt-signer',
  'identity',
  'posture-check',
  'router',
  'service',
  'service-edge-router-policy',
  'service-policy',
  'terminator',
] as const;
export type PermissionGroup = (typeof PERMISSION_GROUPS)[number] | 'ops';
export type Action = 'read' | 'create' | 'update' | 'delete';

/** Every value of the seed's permission enum. */
export const PERMISSIONS: readonly string[] = [
  'admin_readonly',
  ...PERMISSION_GROUPS.flatMap((g) => [g, `${g}.read`, `${g}.create`, `${g}.update`, `${g}.delete`]),
  'ops',
  'ops.read',
  'ops.update',
  'ops.delete',
];

/** Who is calling: resolved from an API session (REST) or the console login (tRPC). */
/** The system itself as a caller (bootstrap, maintenance): full rights, no session. */
export const SYSTEM: Caller = { identityId: 'system', identityName: 'system', isAdmin: true, permissions: new Set() };
/** Who calls a route that needs no API session (version, login, enrollment): nobody, with no permission at all. */
export const ANONYMOUS: Caller = { identityId: '', identityName: 'anonymous', isAdmin: false, permissions: new Set() };

export interface Caller {
  identityId: string;
  identityName: string;
  isAdmin: boolean;
  permissions: ReadonlySet<string>;
  apiSessionId?: string;
  /** True while MFA / secondary auth is outstanding: the session only reaches the completion endpoints. */
  partial?: boolean;
}

export function can(caller: Caller, group: PermissionGroup, action: Action): boolean {
  if (caller.partial) return false;
  if (caller.isAdmin) return true;
  const p = caller.permissions;
  if (p.has(group)) return true;
  // the ops group has no create: creating things under it (snapshots, checks) counts as update
  if (p.has(`${group}.${group === 'ops' && action === 'create' ? 'update' : action}`)) return true;
  return action === 'read' && p.has('admin_readonly');
}

/** Throws 401 UNAUTHORIZED (OpenZiti's answer for insufficient access) unless allowed. */
export function requirePermission(caller: Caller, group: PermissionGroup, action: Action): void {
  if (!can(caller, group, action)) throw unauthorized();
}

/** Operations reserved for administrators with no permission group (e.g. resource counts). */
export function requireAdminRead(caller: Caller): void {
  if (caller.partial || !(caller.isAdmin || caller.permissions.has('admin_readonly'))) throw unauthorized();
}

/** Operations reserved for administrators (e.g. ending another identity's circuit through the fabric API). */
export function requireAdmin(caller: Caller): void {
  if (caller.partial || !caller.isAdmin) throw unauthorized();
}
