// The routers of this node as the console shows them: every edge router (Weft's built-in one and the stock routers
// on the control channel) with its state, the links between routers, and every live circuit of every router with
// its path as router names (hops = routers crossed − 1). Read from FabricLive (memory) and the store (names).
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { namesById } from '../entities/resource';
import { builtinRouterId } from '../policy/index';
import type { FabricLive } from './fabric';
import type { LiveDataPlane } from './status';

/** At most this many routers are listed (online ones first); `totalRouters` says how many there are. */
export const FABRIC_VIEW_MAX_ROUTERS = 200;

export interface FabricViewRouter {
  id: string;
  name: string;
  isOnline: boolean;
  /** Weft's own edge router (this node's) */
  builtin: boolean;
  /** live circuits crossing it */
  circuits: number;
}

export interface FabricViewLink {
  id: string;
  src: { id: string; name: string };
  dst: { id: string; name: string };
  state: 'connected' | 'failed';
  cost: number;
  protocol: string;
}

export interface FabricViewCircuit {
  id: string;
  service: { id: string; name: string };
  /** the dialing identity */
  identity: { id: string; name: string };
  terminatorId: string;
  /** the routers crossed, ingress first */
  path: Array<{ id: string; name: string }>;
  /** links crossed: path length − 1 */
  hops: number;
  createdAt: string;
  ageSeconds: number;
  /** bytes each way and how the service is hosted, where the router reports them (the built-in router) */
  bytesIn?: number;
  bytesOut?: number;
  hostKind?: 'sdk' | 'tcp';
}

export interface FabricView {
  routers: FabricViewRouter[];
  totalRouters: number;
  links: FabricViewLink[];
  circuits: FabricViewCircuit[];
}

/**
 * The fabric of this node for the console's network map and live view: needs read access to routers and
 * terminators (as the other live views). `builtin` adds the built-in router's byte counters to its circuits.
 */
export async function fabricView(ctx: Ctx, live: FabricLive | undefined, builtin?: LiveDataPlane): Promise<FabricView> {
  requirePermission(ctx.caller, 'router', 'read');
  requirePermission(ctx.caller, 'terminator', 'read');
  const store = ctx.core.store;
  const circuits = live?.circuits() ?? [];
  const links = live?.links() ?? [];
  const builtinCircuits = new Map((builtin?.status().circuits ?? []).map((c) => [c.id, c]));
  const builtinId = await builtinRouterId(ctx.core);

  const { rows, total } = await store.read(async () => ({
    rows: await store.allSql<{ id: string; name: string; is_online: number | boolean }>(
      'SELECT id, name, is_online FROM edge_routers ORDER BY is_online DESC, name ASC, id ASC LIMIT ?',
      FABRIC_VIEW_MAX_ROUTERS,
    ),
    total: Number((await store.getSql<{ n: number }>('SELECT count(*) AS n FROM edge_routers'))!.n),
  }));
  // routers named by circuits and links that are not listed (transit routers, or past the cap)
  const names = new Map(rows.map((r) => [r.id, r.name]));
  const unlisted = [...new Set([...circuits.flatMap((c) => c.path), ...links.flatMap((l) => [l.srcRouterId, l.dstRouterId])])].filter(
    (id) => !names.has(id),
  );
  for (const table of ['edge_routers', 'routers']) {
    const missing = unlisted.filter((id) => !names.has(id));
    for (const [id, name] of await namesById(store, table, missing)) names.set(id, name);
  }
  const [services, identities] = await Promise.all([
    namesById(store, 'services', [...new Set(circuits.map((c) => c.serviceId))]),
    namesById(store, 'identities', [...new Set(circuits.map((c) => c.clientId))]),
  ]);
  const router = (id: string) => ({ id, name: names.get(id) ?? id });

  const crossing = new Map<string, number>();
  for (const c of circuits) for (const id of new Set(c.path)) crossing.set(id, (crossing.get(id) ?? 0) + 1);
  const now = ctx.core.clock.now().getTime();
  return {
    routers: rows.map((r) => ({
      id: r.id,
      name: r.name,
      isOnline: Boolean(Number(r.is_online)),
      builtin: r.id === builtinId,
      circuits: crossing.get(r.id) ?? 0,
    })),
    totalRouters: total,
    links: links.map((l) => ({
      id: l.id,
      src: router(l.srcRouterId),
      dst: router(l.dstRouterId),
      state: l.state,
      cost: l.cost,
      protocol: l.protocol,
    })),
    circuits: circuits
      .map((c) => {
        const own = builtinCircuits.get(c.id);
        return {
          id: c.id,
          service: { id: c.serviceId, name: services.get(c.serviceId) ?? own?.serviceName ?? c.serviceId },
          identity: { id: c.clientId, name: identities.get(c.clientId) ?? own?.caller ?? c.clientId },
          terminatorId: c.terminatorId,
          path: c.path.map(router),
          hops: Math.max(0, c.path.length - 1),
          createdAt: c.createdAt.toISOString(),
          ageSeconds: Math.max(0, Math.round((now - c.createdAt.getTime()) / 1000)),
          ...(own ? { bytesIn: own.bytesIn, bytesOut: own.bytesOut, hostKind: own.hostKind } : {}),
        };
      })
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id)),
  };
}
