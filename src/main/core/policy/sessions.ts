import type { Ctx } from '../context';
import { classesOf } from './access';
import type { Row, Store } from '../store/db';
import { decodeRow, decodeRows, json, rowShape, type Decoded } from '../store/rows';
import { defineResource } from '../entities/define';
import { namesById, ref, type ApiObject } from '../entities/resource';

/** Edge routers offered with a session: at most this many, online ones first (as OpenZiti). */
export const SESSION_EDGE_ROUTER_LIMIT = 25;

/** What a session's decoration reads of its row: whose session for which service, and the policies that granted it. */
const SESSION_GRANT = rowShape({
  id: 'string',
  api_session_id: 'string',
  identity_id: 'string',
  service_id: 'string',
  service_policies: json<string[]>(),
});
type SessionGrant = Decoded<typeof SESSION_GRANT>;

/**
 * Dial/Bind sessions. Created through the Client API (core/policy/sessionGrant.ts); both APIs list, read and delete
 * them. `edgeRouters` are the routers the identity may use for the service, computed when shown.
 */
export const sessions = defineResource({
  entity: 'sessions',
  table: 'sessions',
  permission: 'ops',
  writable: false,
  fields: {
    token: { codec: 'string', filter: true },
    apiSessionId: { codec: 'string', filter: true },
    identityId: { codec: 'string', filter: true },
    serviceId: { codec: 'string', filter: true },
    type: { codec: 'string', filter: true },
  },
  refs: {
    service: { column: 'service_id', entity: 'services', table: 'services' },
    identity: { column: 'identity_id', entity: 'identities', table: 'identities' },
  },
  // `apiSession.identity.name` (the API session is shown by decorate)
  filterRefs: { apiSession: { column: 'api_session_id', entity: 'api-sessions' } },
  defaultSort: 't.created_at DESC, t.id ASC',
  links: (row) => ({ 'route-path': `sessions/${row.id}/route-path` }),
  async decorate(items, raws, ctx) {
    const rows = decodeRows(SESSION_GRANT, raws);
    const routers = await sessionEdgeRouters(ctx, rows);
    const policyNames = await namesById(ctx.core.store, 'service_policies', [...new Set(rows.flatMap((r) => r.service_policies))]);
    items.forEach((item, i) => {
      const row = rows[i]!;
      item.apiSession = ref('api-sessions', row.api_session_id, undefined);
      item.edgeRouters = routers.get(row.id) ?? [];
      item.servicePolicies = row.service_policies.filter((id) => policyNames.has(id)).map((id) => ref('service-policies', id, policyNames.get(id)));
    });
  },
});

/** The columns of an edge router shown to an identity. */
const EDGE_ROUTER_VIEW = rowShape({
  app_data: json<unknown>(),
  cost: 'int',
  disabled: 'bool',
  hostname: 'string',
  is_online: 'bool',
  name: 'string',
  no_traversal: 'bool',
  supported_protocols: json<Record<string, string>>(),
  sync_status: 'string',
});

/** The columns EDGE_ROUTER_VIEW reads, as a select list over `r` (only these: a router row's certificate and enrollment are large). */
const EDGE_ROUTER_VIEW_COLUMNS = Object.keys(EDGE_ROUTER_VIEW)
  .map((c) => `r.${c}`)
  .join(', ');

/** The edge router fields shown to an identity (sessions, service edge routers, current identity's routers). */
export function edgeRouterView(row: Row): ApiObject {
  const r = decodeRow(EDGE_ROUTER_VIEW, row);
  return {
    appData: r.app_data,
    cost: r.cost,
    disabled: r.disabled,
    hostname: r.hostname,
    isOnline: r.is_online,
    name: r.name,
    noTraversal: r.no_traversal,
    supportedProtocols: r.supported_protocols,
    syncStatus: r.sync_status,
  };
}

/**
 * The routers an identity class may use for a service class (reachable by both), online first then by name,
 * at most SESSION_EDGE_ROUTER_LIMIT: walks edge routers in that order (index from migration 003) and stops early.
 * The rows hold the columns edgeRouterView shows.
 */
export async function commonRouters(store: Store, identityClass: number, serviceClass: number): Promise<Row[]> {
  return store.allSql<Row>(
    `SELECT ${EDGE_ROUTER_VIEW_COLUMNS} FROM edge_routers r
     WHERE (SELECT class_id FROM role_class_members WHERE kind = 'edge-router' AND entity_id = r.id) IN (
       SELECT router_class FROM identity_router_access WHERE identity_class = ?
       INTERSECT SELECT router_class FROM service_router_access WHERE service_class = ?)
     ORDER BY r.is_online DESC, r.name, r.id LIMIT ?`,
    identityClass,
    serviceClass,
    SESSION_EDGE_ROUTER_LIMIT,
  );
}

/** commonRouters for several (identity class, service class) pairs in one query, keyed "ic:sc". */
export async function commonRoutersForPairs(store: Store, pairs: Array<[number, number]>): Promise<Map<string, Row[]>> {
  if (pairs.length === 1) return new Map([[pairs[0]!.join(':'), await commonRouters(store, ...pairs[0]!)]]);
  const out = new Map<string, Row[]>();
  if (!pairs.length) return out;
  const sql = store.sql;
  const rows = await store.allSql<Row & { ic: number; sc: number }>(
    `WITH pairs(ic, sc) AS (
       SELECT CAST(${sql.jsonExtract('e.value', '$[0]')} AS BIGINT), CAST(${sql.jsonExtract('e.value', '$[1]')} AS BIGINT) FROM ${sql.jsonEach('?', 'e')})
     SELECT * FROM (
       SELECT p.ic, p.sc, ${EDGE_ROUTER_VIEW_COLUMNS}, row_number() OVER (PARTITION BY p.ic, p.sc ORDER BY r.is_online DESC, r.name, r.id) AS rn
       FROM pairs p
       JOIN identity_router_access ia ON ia.identity_class = p.ic
       JOIN service_router_access sa ON sa.service_class = p.sc AND sa.router_class = ia.router_class
       JOIN role_class_members m ON m.class_id = ia.router_class
       JOIN edge_routers r ON r.id = m.entity_id) AS x
     WHERE rn <= ? ORDER BY ic, sc, rn`,
    JSON.stringify(pairs),
    SESSION_EDGE_ROUTER_LIMIT,
  );
  for (const r of rows) {
    const key = `${r.ic}:${r.sc}`;
    out.set(key, [...(out.get(key) ?? []), r]);
  }
  return out;
}

/**
 * commonRoutersForPairs' answers kept while the store's generation stays the same: session writes leave it alone, so a
 * burst of session creations reads each pair's routers once; any other write (a router's online state, a policy, an
 * attribute) starts over. Kept only when no write came in between reading and keeping. Bounded.
 */
const routersOfPairs = new WeakMap<Store, { generation: number; pairs: Map<string, Row[]> }>();
const MAX_KEPT_PAIRS = 4096;

async function keptCommonRouters(store: Store, pairs: Array<[number, number]>): Promise<Map<string, Row[]>> {
  let kept = routersOfPairs.get(store);
  if (!kept || kept.generation !== store.generation) routersOfPairs.set(store, (kept = { generation: store.generation, pairs: new Map() }));
  const out = new Map<string, Row[]>();
  const missing = pairs.filter((p) => {
    const hit = kept.pairs.get(p.join(':'));
    if (hit) out.set(p.join(':'), hit);
    return !hit;
  });
  if (!missing.length) return out;
  const generation = store.generation;
  const read = await commonRoutersForPairs(store, missing);
  const keep = store.generation === generation && kept.generation === generation;
  if (keep && kept.pairs.size + missing.length > MAX_KEPT_PAIRS) kept.pairs.clear();
  for (const p of missing) {
    const key = p.join(':');
    const rows = read.get(key) ?? [];
    out.set(key, rows);
    if (keep) kept.pairs.set(key, rows);
  }
  return out;
}

async function sessionEdgeRouters(ctx: Ctx, rows: SessionGrant[]): Promise<Map<string, ApiObject[]>> {
  const store = ctx.core.store;
  const identityClass = await classesOf(store, 'identity', [...new Set(rows.map((r) => r.identity_id))]);
  const serviceClass = await classesOf(store, 'service', [...new Set(rows.map((r) => r.service_id))]);
  const pairOf = (r: SessionGrant): [number, number] | undefined => {
    const ic = identityClass.get(r.identity_id);
    const sc = serviceClass.get(r.service_id);
    return ic === undefined || sc === undefined ? undefined : [ic, sc];
  };
  const pairs = new Map<string, [number, number]>();
  for (const r of rows) {
    const p = pairOf(r);
    if (p) pairs.set(p.join(':'), p);
  }
  const routers = await keptCommonRouters(store, [...pairs.values()]);
  const out = new Map<string, ApiObject[]>();
  for (const r of rows) {
    const p = pairOf(r);
    const list = p ? (routers.get(p.join(':')) ?? []) : [];
    out.set(
      r.id,
      list.map((er) => {
        const v = edgeRouterView(er);
        return { ...v, urls: v.supportedProtocols };
      }),
    );
  }
  return out;
}
