import type { Core } from '../../core/core';
import type { RouteDef } from '../registry';

export function enrollmentRoutes(core: Core): RouteDef[] {
  void core;
  return [];
}
