import type { Core } from '../../core/context';
import type { RouteDef } from '../registry';
import type { FabricLive } from '../../core/dataPlane/index';
import { ascodeRoutes } from './ascode';
import { fabricRoutes } from './fabric';
import { certMethod, enrollmentRoutes } from './enrollment';
import { informationalRoutes } from './informational';
import { managementRoutes } from './management';
import { oidcRoutes } from './oidc';
import { policyRoutes } from './policy';
import { extJwtMethod, securityRoutes } from './security';
import { passwordMethod, sessionRoutes, type Authenticator } from './session';

/** Authentication methods of POST /authenticate?method=...; modules add theirs here. */
export function authenticationMethods(): Record<string, Authenticator> {
  return { password: passwordMethod, cert: certMethod, 'ext-jwt': extJwtMethod };
}

/** The whole route table of the APIs, assembled from each module's routes; `fabric`: what the routers hold in memory. */
export function buildRoutes(core: Core, live: { fabric?: FabricLive } = {}): RouteDef[] {
  const routes: RouteDef[] = [];
  routes.push(
    ...informationalRoutes(core, () => routes),
    ...sessionRoutes(core, authenticationMethods()),
    ...managementRoutes(core),
    ...enrollmentRoutes(core),
    ...policyRoutes(core),
    ...securityRoutes(core),
    ...ascodeRoutes(core),
    ...fabricRoutes(live.fabric),
  );
  return routes;
}

/** Routes outside the API bases, at their own paths: OpenZiti's OIDC provider (/oidc), unless api.oidc is off. */
export function buildRootRoutes(core: Core): RouteDef[] {
  return core.config.oidc?.enabled === false ? [] : oidcRoutes(core);
}

export const ROOT_ALIASES = [
  { method: 'GET' as const, path: '/', api: 'client' as const, target: '/' },
  { method: 'GET' as const, path: '/version', api: 'client' as const, target: '/version' },
  { method: 'GET' as const, path: '/.well-known/est/cacerts', api: 'client' as const, target: '/.well-known/est/cacerts' },
];
