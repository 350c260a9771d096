import { requirePermission } from '../auth/permissions';
import type { Ctx } from '../context';
import { namesById, ref } from '../entities/resource';

/** What a running router reports about itself (implemented by the built-in edge router). */
export interface LiveStatus {
  id: string;
  url: string;
  online: boolean;
  connections: number;
  terminators: Array<{ id: string; serviceId: string; kind: 'sdk' | 'host'; identity: string; caller?: string; cost: number; precedence: string }>;
  circuits: Array<{
    id: string;
    serviceId: string;
    serviceName: string;
    terminatorId: string;
    caller: string;
    hostKind: 'sdk' | 'tcp';
    createdAt: string;
    bytesIn: number;
    bytesOut: number;
  }>;
}

export interface LiveDataPlane {
  status(): LiveStatus;
}

/**
 * The live data plane as an operator sees it (console): the router, its terminators and open circuits with
 * names resolved. Needs read access to routers and terminators.
 */
export async function dataPlaneView(ctx: Ctx, live: LiveDataPlane | undefined) {
  requirePermission(ctx.caller, 'router', 'read');
  requirePermission(ctx.caller, 'terminator', 'read');
  if (!live) return { router: null, terminators: [], circuits: [] };
  const s = live.status();
  const store = ctx.core.store;
  const routerName = (await namesById(store, 'edge_routers', [s.id])).get(s.id) ?? s.id;
  const services = await namesById(store, 'services', [...new Set(s.terminators.map((t) => t.serviceId))]);
  const now = ctx.core.clock.now().getTime();
  return {
    router: { ...ref('edge-routers', s.id, routerName), url: s.url, isOnline: s.online, connections: s.connections },
    terminators: s.terminators.map((t) => ({ ...t, service: ref('services', t.serviceId, services.get(t.serviceId)) })),
    circuits: s.circuits.map((c) => ({ ...c, ageSeconds: Math.max(0, Math.round((now - Date.parse(c.createdAt)) / 1000)) })),
  };
}
