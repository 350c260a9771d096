import { can, requirePermission } from '../permissions';
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
    /** the dialing identity's id */
    callerId: string;
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

export interface LiveCircuit {
  id: string;
  serviceId: string;
  serviceName: string;
  serviceClass?: number;
  identityId?: string;
  identityName: string;
  identityClass?: number;
  bytesIn: number;
  bytesOut: number;
  ageSeconds: number;
  hostKind: 'sdk' | 'tcp';
}

export interface NetworkLive {
  router: { id: string; name: string; isOnline: boolean; connections: number } | null;
  /** terminators bound on the router, per service */
  terminators: Array<{ serviceId: string; serviceClass?: number; count: number }>;
  circuits: LiveCircuit[];
}

/**
 * The live overlay of the network graph (policy/networkGraph.ts): the router's state, bound terminators and open
 * circuits, with the classes of the services and identities involved so the page can put them on group nodes. Polled;
 * a few lookups per call.
 */
export async function networkLive(ctx: Ctx, live: LiveDataPlane | undefined): Promise<NetworkLive> {
  requirePermission(ctx.caller, 'router', 'read');
  requirePermission(ctx.caller, 'terminator', 'read');
  if (!live) return { router: null, terminators: [], circuits: [] };
  const s = live.status();
  const store = ctx.core.store;
  const now = ctx.core.clock.now().getTime();
  const identityRead = can(ctx.caller, 'identity', 'read');
  const names = [...new Set(s.circuits.map((c) => c.caller))];
  const identities =
    identityRead && names.length
      ? new Map(
          (
            await store.allSql<{ id: string; name: string; class_id: number | null }>(
              `SELECT t.id, t.name, m.class_id FROM identities t LEFT JOIN role_class_members m ON m.kind = 'identity' AND m.entity_id = t.id
         WHERE t.name IN ${store.sql.jsonValues()}`,
              JSON.stringify(names),
            )
          ).map((r) => [r.name, r]),
        )
      : new Map<string, { id: string; class_id: number | null }>();
  const serviceIds = [...new Set([...s.circuits.map((c) => c.serviceId), ...s.terminators.map((t) => t.serviceId)])];
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
  for (const t of s.terminators) counts.set(t.serviceId, (counts.get(t.serviceId) ?? 0) + 1);
  const routerName = (await store.getSql<{ name: string }>('SELECT name FROM edge_routers WHERE id = ?', s.id))?.name ?? s.id;
  return {
    router: { id: s.id, name: routerName, isOnline: s.online, connections: s.connections },
    terminators: [...counts].map(([serviceId, count]) => ({ serviceId, serviceClass: serviceClasses.get(serviceId), count })),
    circuits: s.circuits.map((c) => {
      const who = identities.get(c.caller);
      return {
        id: c.id,
        serviceId: c.serviceId,
        serviceName: c.serviceName,
        serviceClass: serviceClasses.get(c.serviceId),
        identityId: who?.id,
        identityName: c.caller,
        identityClass: (who as { class_id?: number | null } | undefined)?.class_id ?? undefined,
        bytesIn: c.bytesIn,
        bytesOut: c.bytesOut,
        hostKind: c.hostKind,
        ageSeconds: Math.max(0, Math.round((now - Date.parse(c.createdAt)) / 1000)),
      };
    }),
  };
}
