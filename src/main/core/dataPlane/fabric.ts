// OpenZiti's fabric management API (/fabric/v1) as the core answers it: routers (edge and transit routers as one
// list, as OpenZiti's fabric presents them), the links between stock routers and the circuits — which live in
// memory, in the control channel (stock routers) and the built-in router, and reach the core through FabricLive.
// Terminators and services are the registry's own types (the routes reuse their generic operations).
import { requireAdmin, requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { notFound } from '../errors';
import { namesById, ref } from '../entities/resource';
import { pageQuery, type ListParams, type Page } from '../query/list';
import { scalar } from '../query/fields';
import type { QueryFields } from '../query/compile';
import type { Store } from '../store/db';
import type { SqlDialect } from '../store/sqlDialect';

/** A circuit as a router of this node holds it. */
export interface FabricCircuit {
  id: string;
  routerId: string;
  serviceId: string;
  terminatorId: string;
  /** the dialing identity */
  clientId: string;
  createdAt: Date;
  /** the routers the circuit crosses, ingress first, egress last (one router when both ends are on it) */
  path: string[];
  /** the links between them */
  links?: string[];
}

/** A link between two routers as its dialing router reports it. */
export interface FabricLink {
  id: string;
  srcRouterId: string;
  dstRouterId: string;
  protocol: string;
  cost: number;
  state: 'connected' | 'failed';
  iteration?: number;
  createdAt?: Date;
}

/** What the routers of this node (the built-in one and the stock routers on the control channel) hold in memory. */
export interface FabricLive {
  /** the version header (version|revision|build date|os|arch) of each router connected to this node */
  versions(): Map<string, string>;
  circuits(): FabricCircuit[];
  links(): FabricLink[];
  /** where each connected router accepts links (its hello's link listeners) */
  linkListeners?(): Map<string, Array<{ address: string; protocol: string }>>;
  /** ends a circuit (its router unroutes it, the SDKs' connections close); false when no router here has it */
  endCircuit(id: string): boolean;
}

const NONE: FabricLive = { versions: () => new Map(), circuits: () => [], links: () => [], endCircuit: () => false };

// ---- routers ----

const ROUTER_COLUMNS = 'id, name, fingerprint, cost, no_traversal, disabled, is_online, ctrl_chan_listeners, created_at, updated_at, tags';
/** Edge routers and transit routers as one table (alias t), as OpenZiti's fabric lists them. */
const ROUTERS_SQL = `(SELECT ${ROUTER_COLUMNS} FROM edge_routers UNION ALL SELECT ${ROUTER_COLUMNS} FROM routers)`;
const ROUTER_FIELDS: QueryFields = {
  id: scalar('string', 't.id'),
  name: scalar('string', 't.name'),
  fingerprint: scalar('string', 't.fingerprint'),
  cost: scalar('number', 't.cost'),
  noTraversal: scalar('boolean', 't.no_traversal'),
  disabled: scalar('boolean', 't.disabled'),
  connected: scalar('boolean', 't.is_online'),
  createdAt: scalar('datetime', 't.created_at'),
  updatedAt: scalar('datetime', 't.updated_at'),
};

interface RouterRow {
  id: string;
  name: string;
  fingerprint: string | null;
  cost: number;
  no_traversal: number | boolean;
  disabled: number | boolean;
  is_online: number | boolean;
  ctrl_chan_listeners: string;
  created_at: string;
  updated_at: string;
  tags: string;
}

/** A list of rows (alias t) of an SQL source, filtered, sorted and paged by the ZitiQL filter and list parameters. */
async function listFrom<R>(store: Store, source: string, sourceArgs: unknown[], fields: QueryFields, params: ListParams, defaultSort: string) {
  const { compiled, limit, offset } = pageQuery(params, fields, { tagsSql: 't.tags', sql: store.sql });
  const where = compiled.where && compiled.where !== '1=1' ? ` WHERE ${compiled.where}` : '';
  const order = compiled.sort.length ? [...compiled.sort.map((s) => store.sql.orderBy(s.sql, s.dir)), 't.id ASC'].join(', ') : defaultSort;
  const total = (await store.getSql<{ n: number }>(`SELECT count(*) AS n FROM ${source} t${where}`, ...sourceArgs, ...compiled.params))!.n;
  const rows = await store.allSql<R>(
    `SELECT t.* FROM ${source} t${where} ORDER BY ${order} LIMIT ? OFFSET ?`,
    ...sourceArgs,
    ...compiled.params,
    limit,
    offset,
  );
  return { rows, meta: { pagination: { limit, offset, totalCount: Number(total) }, filterableFields: Object.keys(fields) } };
}

const VERSION_KEYS = ['version', 'revision', 'buildDate', 'os', 'arch'] as const;

function presentRouter(r: RouterRow, live: FabricLive) {
  const versions = live.versions();
  const version = versions.get(r.id)?.split('|');
  const listeners = JSON.parse(r.ctrl_chan_listeners || '{}') as Record<string, string[]>;
  return {
    id: r.id,
    name: r.name,
    fingerprint: r.fingerprint ?? '',
    connected: Boolean(Number(r.is_online)),
    cost: Number(r.cost),
    noTraversal: Boolean(Number(r.no_traversal)),
    disabled: Boolean(Number(r.disabled)),
    // where it accepts links from other routers (stock routers' link listeners)
    listenerAddresses: live.linkListeners?.().get(r.id) ?? [],
    ctrlChanListeners: listeners,
    ...(version?.length === 5 ? { versionInfo: Object.fromEntries(VERSION_KEYS.map((k, i) => [k, version[i]!])) } : {}),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    tags: JSON.parse(r.tags || '{}') as object,
    _links: { self: { href: `./routers/${r.id}` } },
  };
}

export async function listFabricRouters(ctx: Ctx, live: FabricLive = NONE, params: ListParams): Promise<Page<object>> {
  requirePermission(ctx.caller, 'router', 'read');
  const store = ctx.core.store;
  const { rows, meta } = await store.read(() => listFrom<RouterRow>(store, ROUTERS_SQL, [], ROUTER_FIELDS, params, 't.name ASC, t.id ASC'));
  return { data: rows.map((r) => presentRouter(r, live)), meta };
}

export async function getFabricRouter(ctx: Ctx, live: FabricLive = NONE, id: string): Promise<object> {
  requirePermission(ctx.caller, 'router', 'read');
  const row = await ctx.core.store.getSql<RouterRow>(`SELECT t.* FROM ${ROUTERS_SQL} t WHERE t.id = ?`, id);
  if (!row) throw notFound('router');
  return presentRouter(row, live);
}

// ---- links ----

const LINK_COLUMNS = ['id', 'src_router_id', 'dst_router_id', 'protocol', 'cost', 'state', 'iteration', 'created_at'] as const;
type LinkRow = Record<Exclude<(typeof LINK_COLUMNS)[number], 'cost' | 'iteration'>, string> & { cost: number; iteration: number };
const LINK_FIELDS: QueryFields = {
  id: scalar('string', 't.id'),
  sourceRouter: scalar('string', 't.src_router_id'),
  destRouter: scalar('string', 't.dst_router_id'),
  protocol: scalar('string', 't.protocol'),
  cost: scalar('number', 't.cost'),
  state: scalar('string', 't.state'),
  createdAt: scalar('datetime', 't.created_at'),
};

const linkRow = (l: FabricLink): LinkRow => ({
  id: l.id,
  src_router_id: l.srcRouterId,
  dst_router_id: l.dstRouterId,
  protocol: l.protocol,
  cost: l.cost,
  state: l.state,
  iteration: l.iteration ?? 0,
  created_at: (l.createdAt ?? new Date(0)).toISOString(),
});

async function presentLinks(ctx: Ctx, rows: LinkRow[]) {
  const names = await routerNames(
    ctx.core.store,
    rows.flatMap((r) => [r.src_router_id, r.dst_router_id]),
  );
  // as OpenZiti's LinkDetail: Weft does not measure link latency (both 0), the full cost is the static cost
  return rows.map((r) => ({
    id: r.id,
    sourceRouter: ref('routers', r.src_router_id, names.get(r.src_router_id)),
    destRouter: ref('routers', r.dst_router_id, names.get(r.dst_router_id)),
    protocol: r.protocol,
    staticCost: Number(r.cost),
    cost: Number(r.cost),
    sourceLatency: 0,
    destLatency: 0,
    state: r.state === 'connected' ? 'Connected' : 'Failed',
    down: r.state !== 'connected',
    iteration: Number(r.iteration),
    connections: [],
    _links: { self: { href: `./links/${r.id}` } },
  }));
}

/** Links between stock routers, as their dialing routers reported them. */
export async function listFabricLinks(ctx: Ctx, live: FabricLive = NONE, params: ListParams): Promise<Page<object>> {
  requirePermission(ctx.caller, 'router', 'read');
  const store = ctx.core.store;
  const source = memorySource(store.sql, LINK_COLUMNS, live.links().map(linkRow));
  const { rows, meta } = await listFrom<LinkRow>(store, source.sql, source.args, LINK_FIELDS, params, 't.created_at ASC, t.id ASC');
  return { data: await presentLinks(ctx, rows), meta };
}

export async function getFabricLink(ctx: Ctx, live: FabricLive = NONE, id: string): Promise<object> {
  requirePermission(ctx.caller, 'router', 'read');
  const l = live.links().find((x) => x.id === id);
  if (!l) throw notFound('link');
  const [one] = await presentLinks(ctx, [linkRow(l)]);
  return one!;
}

/** The names of routers of both tables by id. */
async function routerNames(store: Store, ids: string[]): Promise<Map<string, string>> {
  const rows = await store.allSql<{ id: string; name: string }>(
    `SELECT t.id, t.name FROM ${ROUTERS_SQL} t WHERE t.id IN ${store.sql.jsonValues()}`,
    JSON.stringify([...new Set(ids)]),
  );
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** Rows held in memory as an SQL source (alias t) from one JSON parameter, so ZitiQL filters, sorts and pages them. */
function memorySource(sql: SqlDialect, columns: readonly string[], rows: object[]): { sql: string; args: unknown[] } {
  const select = columns.map((c) => `${sql.jsonExtract('e.value', `$.${c}`)} AS ${c}`).join(', ');
  return { sql: `(SELECT ${select} FROM ${sql.jsonEach('?', 'e')})`, args: [JSON.stringify(rows)] };
}

// ---- circuits ----

const CIRCUIT_FIELDS: QueryFields = {
  id: scalar('string', 't.id'),
  clientId: scalar('string', 't.client_id'),
  serviceId: scalar('string', 't.service_id'),
  terminatorId: scalar('string', 't.terminator_id'),
  routerId: scalar('string', 't.router_id'),
  createdAt: scalar('datetime', 't.created_at'),
};
const CIRCUIT_COLUMNS = ['id', 'client_id', 'service_id', 'terminator_id', 'router_id', 'created_at', 'path', 'links'] as const;
/** A circuit as a row; path and links are JSON arrays of ids. */
type CircuitRow = Record<(typeof CIRCUIT_COLUMNS)[number], string>;

const circuitRow = (c: FabricCircuit): CircuitRow => ({
  id: c.id,
  client_id: c.clientId,
  service_id: c.serviceId,
  terminator_id: c.terminatorId,
  router_id: c.routerId,
  created_at: c.createdAt.toISOString(),
  path: JSON.stringify(c.path),
  links: JSON.stringify(c.links ?? []),
});

function checkCircuitRead(ctx: Ctx): void {
  requirePermission(ctx.caller, 'router', 'read');
  requirePermission(ctx.caller, 'terminator', 'read');
}

async function presentCircuits(ctx: Ctx, rows: CircuitRow[]) {
  const store = ctx.core.store;
  const paths = new Map(rows.map((r) => [r.id, JSON.parse(r.path) as string[]]));
  const [services, names] = await Promise.all([
    namesById(store, 'services', [...new Set(rows.map((r) => r.service_id))]),
    routerNames(store, [...paths.values()].flat()),
  ]);
  return rows.map((r) => ({
    id: r.id,
    clientId: r.client_id,
    service: ref('services', r.service_id, services.get(r.service_id)),
    terminator: ref('terminators', r.terminator_id, r.terminator_id),
    // the routers from ingress to egress and the links between them
    path: {
      nodes: paths.get(r.id)!.map((id) => ref('routers', id, names.get(id))),
      links: (JSON.parse(r.links) as string[]).map((id) => ref('links', id, id)),
    },
    createdAt: r.created_at,
    updatedAt: r.created_at,
    tags: {},
    _links: { self: { href: `./circuits/${r.id}` } },
  }));
}

export async function listFabricCircuits(ctx: Ctx, live: FabricLive = NONE, params: ListParams): Promise<Page<object>> {
  checkCircuitRead(ctx);
  const store = ctx.core.store;
  const source = memorySource(store.sql, CIRCUIT_COLUMNS, live.circuits().map(circuitRow));
  const { rows, meta } = await listFrom<CircuitRow>(store, source.sql, source.args, CIRCUIT_FIELDS, params, 't.created_at ASC, t.id ASC');
  return { data: await presentCircuits(ctx, rows), meta };
}

export async function getFabricCircuit(ctx: Ctx, live: FabricLive = NONE, id: string): Promise<object> {
  checkCircuitRead(ctx);
  const c = live.circuits().find((x) => x.id === id);
  if (!c) throw notFound('circuit');
  const [one] = await presentCircuits(ctx, [circuitRow(c)]);
  return one!;
}

/** Ends a circuit on its router (OpenZiti's DELETE /circuits/{id}): administrators only. 404 when no router has it. */
export function deleteFabricCircuit(ctx: Ctx, live: FabricLive = NONE, id: string): void {
  requireAdmin(ctx.caller);
  if (!live.endCircuit(id)) throw notFound('circuit');
}
