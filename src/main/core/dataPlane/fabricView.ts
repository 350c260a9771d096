// The routers of this node as the console shows them: every edge router (Weft's built-in one and the stock routers
// on the control channel) with its state, the links between routers, and every live circuit of every router with
// its path as router names (hops = routers crossed − 1). Read from FabricLive (memory) and the store (names).
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { namesById } from '../entities/resource';
import { builtinRouterId } from '../policy/index';
import type { FabricCircuit, FabricLive } from './fabric';
import type { LiveDataPlane } from './liveStatus';

/** At most this many routers are listed (online ones first); `totalRouters` says how many there are. */
export const FABRIC_VIEW_MAX_ROUTERS = 200;
/** At most this many circuits are listed (the newest); `totalCircuits` says how many are open. */
export const FABRIC_VIEW_MAX_CIRCUITS = 500;

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
  totalCircuits: number;
  links: FabricViewLink[];
  circuits: FabricViewCircuit[];
}

/** Names of routers (edge routers, then transit routers); an unknown id is named by itself. */
async function routerNames(ctx: Ctx, ids: string[], known = new Map<string, string>()): Promise<(id: string) => { id: string; name: string }> {
  const names = new Map(known);
  for (const table of ['edge_routers', 'routers']) {
    const missing = [...new Set(ids)].filter((id) => !names.has(id));
    for (const [id, name] of await namesById(ctx.core.store, table, missing)) names.set(id, name);
  }
  return (id) => ({ id, name: names.get(id) ?? id });
}

/**
 * Live circuits as the console shows them, the newest FABRIC_VIEW_MAX_CIRCUITS oldest first: service and dialing identity by name, the path as router
 * names, and the built-in router's byte counters on its own circuits. `known` names routers already read.
 */
export async function presentLiveCircuits(
  ctx: Ctx,
  circuits: FabricCircuit[],
  builtin: LiveDataPlane | undefined,
  known?: Map<string, string>,
): Promise<FabricViewCircuit[]> {
  const store = ctx.core.store;
  const own = new Map((builtin?.status().circuits ?? []).map((c) => [c.id, c]));
  circuits = [...circuits]
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id))
    .slice(0, FABRIC_VIEW_MAX_CIRCUITS);
  const [services, identities, router] = await Promise.all([
    namesById(store, 'services', [...new Set(circuits.map((c) => c.serviceId))]),
    namesById(store, 'identities', [...new Set(circuits.map((c) => c.clientId))]),
    routerNames(
      ctx,
      circuits.flatMap((c) => c.path),
      known,
    ),
  ]);
  const now = ctx.core.clock.now().getTime();
  return circuits
    .map((c) => {
      const mine = own.get(c.id);
      return {
        id: c.id,
        service: { id: c.serviceId, name: services.get(c.serviceId) ?? mine?.serviceName ?? c.serviceId },
        identity: { id: c.clientId, name: identities.get(c.clientId) ?? mine?.caller ?? c.clientId },
        terminatorId: c.terminatorId,
        path: c.path.map(router),
        hops: Math.max(0, c.path.length - 1),
        createdAt: c.createdAt.toISOString(),
        ageSeconds: Math.max(0, Math.round((now - c.createdAt.getTime()) / 1000)),
        ...(mine ? { bytesIn: mine.bytesIn, bytesOut: mine.bytesOut, hostKind: mine.hostKind } : {}),
      };
    })
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
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
  const builtinId = await builtinRouterId(ctx.core);
  const { rows, total } = await store.read(async () => ({
    rows: await store.allSql<{ id: string; name: string; is_online: number | boolean }>(
      'SELECT id, name, is_online FROM edge_routers ORDER BY is_online DESC, name ASC, id ASC LIMIT ?',
      FABRIC_VIEW_MAX_ROUTERS,
    ),
    total: Number((await store.getSql<{ n: number }>('SELECT count(*) AS n FROM edge_routers'))!.n),
  }));
  const listed = new Map(rows.map((r) => [r.id, r.name]));
  const [router, presented] = await Promise.all([
    routerNames(
      ctx,
      links.flatMap((l) => [l.srcRouterId, l.dstRouterId]),
      listed,
    ),
    presentLiveCircuits(ctx, circuits, builtin, listed),
  ]);
  const crossing = new Map<string, number>();
  for (const c of circuits) for (const id of new Set(c.path)) crossing.set(id, (crossing.get(id) ?? 0) + 1);
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
    circuits: presented,
    totalCircuits: circuits.length,
  };
}
