import type { Core } from '../../core/core';
import type { RouteDef } from '../registry';
import { informationalRoutes } from './informational';
import { managementRoutes } from './management';
import { passwordMethod, sessionRoutes, type Authenticator } from './session';

/** The whole route table of both APIs. Later modules contribute routes and authentication methods here. */
export function buildRoutes(core: Core): RouteDef[] {
  const methods: Record<string, Authenticator> = { password: passwordMethod };
  const routes: RouteDef[] = [];
  routes.push(...informationalRoutes(core, () => routes), ...sessionRoutes(core, methods), ...managementRoutes(core));
  return routes;
}

export const ROOT_ALIASES = [
  { method: 'GET' as const, path: '/', api: 'client' as const, target: '/' },
  { method: 'GET' as const, path: '/version', api: 'client' as const, target: '/version' },
  { method: 'GET' as const, path: '/.well-known/est/cacerts', api: 'client' as const, target: '/.well-known/est/cacerts' },
];
