import type { Core } from '../../core/core';
import type { RouteDef } from '../registry';

export function securityRoutes(core: Core): RouteDef[] {
  void core;
  return [];
}
