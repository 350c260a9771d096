import { can, requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { namesById, ref } from '../entities/resource';
import type { FabricCircuit, FabricLive } from './fabric';
import { presentLiveCircuits } from './fabricView';
import type { LiveDataPlane, LiveStatus } from './liveStatus';

export type { LiveDataPlane, LiveStatus } from './liveStatus';

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

export interface LiveCircuit {
  id: string;
  serviceId: string;
  serviceName: string;
  serviceClass?: number;
  identityId?: string;
  identityName: string;
  identityClass?: number;
  /** the routers crossed, ingress first, by name */
  path: string[];
  /** links crossed: path length − 1 */
  hops: number;
  /** where the router reports them (the built-in router) */
  bytesIn?: number;
  bytesOut?: number;
  ageSeconds: number;
  hostKind?: 'sdk' | 'tcp';
}

export interface NetworkLive {
  router: { id: string; name: string; isOnline: boolean; connections: number } | null;
  /** terminators bound on the built-in router, per service */
  terminators: Array<{ serviceId: string; serviceClass?: number; count: number }>;
  /** the open circuits of every router of this node (fabric), else of the built-in router (the newest 500) */
  circuits: LiveCircuit[];
  totalCircuits: number;
}

/** The built-in router's circuits as the fabric has them (when no fabric is given). */
const ownCircuits = (s: LiveStatus): FabricCircuit[] =>
  s.circuits.map((c) => ({
    id: c.id,
    routerId: s.id,
    serviceId: c.serviceId,
    terminatorId: c.terminatorId,
    clientId: c.callerId,
    createdAt: new Date(c.createdAt),
    path: [s.id],
  }));

/**
 * The live overlay of the network graph (policy/networkGraph.ts): the built-in router's state and bound terminators,
 * and the open circuits of every router (the fabric: built-in and stock routers) with their paths, with the classes
 * of the services and identities involved so the page can put them on group nodes. Polled; a few lookups per call.
 */
export async function networkLive(ctx: Ctx, live: LiveDataPlane | undefined, fabric?: FabricLive): Promise<NetworkLive> {
  requirePermission(ctx.caller, 'router', 'read');
  requirePermission(ctx.caller, 'terminator', 'read');
  const s = live?.status();
  if (!s && !fabric) return { router: null, terminators: [], circuits: [], totalCircuits: 0 };
  const store = ctx.core.store;
  const open = fabric ? fabric.circuits() : ownCircuits(s!);
  const circuits = await presentLiveCircuits(ctx, open, live);
  const identityRead = can(ctx.caller, 'identity', 'read');
  const identityIds = [...new Set(circuits.map((c) => c.identity.id))];
  const identityClasses =
    identityRead && identityIds.length
      ? new Map(
          (
            await store.allSql<{ entity_id: string; class_id: number }>(
              `SELECT entity_id, class_id FROM role_class_members WHERE kind = 'identity' AND entity_id IN ${store.sql.jsonValues()}`,
              JSON.stringify(identityIds),
            )
          ).map((r) => [r.entity_id, r.class_id]),
        )
      : new Map<string, number>();
  const terminators = s?.terminators ?? [];
  const serviceIds = [...new Set([...circuits.map((c) => c.service.id), ...terminators.map((t) => t.serviceId)])];
  const serviceClasses = serviceIds.length
    ? new Map(
        (
          await store.allSql<{ entity_id: string; class_id: number }>(
            `SELECT entity_id, class_id FROM role_class_members WHERE kind = 'service' AND entity_id IN ${store.sql.jsonValues()}`,
            JSON.stringify(serviceIds),
          )
        ).map((r) => [r.entity_id, r.class_id]),
      )
    : new Map<string, number>();
  const counts = new Map<string, number>();
  for (const t of terminators) counts.set(t.serviceId, (counts.get(t.serviceId) ?? 0) + 1);
  const routerName = s && ((await store.getSql<{ name: string }>('SELECT name FROM edge_routers WHERE id = ?', s.id))?.name ?? s.id);
  return {
    router: s ? { id: s.id, name: routerName!, isOnline: s.online, connections: s.connections } : null,
    terminators: [...counts].map(([serviceId, count]) => ({ serviceId, serviceClass: serviceClasses.get(serviceId), count })),
    circuits: circuits.map((c) => ({
      id: c.id,
      serviceId: c.service.id,
      serviceName: c.service.name,
      serviceClass: serviceClasses.get(c.service.id),
      // the identity's own node (and a link to it) only for callers who may read identities
      identityId: identityRead ? c.identity.id : undefined,
      identityName: c.identity.name,
      identityClass: identityClasses.get(c.identity.id),
      path: c.path.map((r) => r.name),
      hops: c.hops,
      bytesIn: c.bytesIn,
      bytesOut: c.bytesOut,
      hostKind: c.hostKind,
      ageSeconds: c.ageSeconds,
    })),
    totalCircuits: open.length,
  };
}
