import { z } from 'zod';
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { notFound } from '../errors';
import type { Store } from '../store/db';
import { parseInput } from '../validation';
import { ROLE_KINDS } from '../kinds';
import { ensureClass } from './policyIndex';

/**
 * The network as a graph: identities | services | edge routers, joined by the policies that connect them (service
 * policies: identity–service with Dial/Bind; edge router policies: identity–router; service edge router policies:
 * service–router). Computed from the policy index, per role class: entities with the same role attributes form a
 * class, so a network of thousands of identities is a few dozen classes. Classes are grouped by their attribute
 * set; a group is one node with a count until it is expanded (then its members, up to a limit, are nodes). Only
 * the classes in view are read — never whole entity tables.
 */

/** The role kinds the graph shows (posture checks are no node of it). */
export type GraphKind = 'identity' | 'service' | 'edge-router';
const GRAPH_KINDS: GraphKind[] = ['identity', 'service', 'edge-router'];

/** Below this many entities of a kind in view, every group of the kind is shown expanded. */
export const SHOW_ALL_BELOW = 30;
/** Members listed per expanded group. */
export const MAX_MEMBERS = 60;
/** Groups per kind; the rest are folded into one "other attributes" group. */
export const MAX_GROUPS = 60;
/** Entities a name filter pins per kind. */
export const MAX_PINNED = 50;
export const MAX_EDGES = 5000;
const MAX_EDGE_POLICIES = 6;

export const networkQuerySchema = z.object({
  /** classes carrying this role attribute, and what they connect to */
  attribute: z.string().trim().max(200).optional(),
  /** entities whose name contains this text, and what they connect to */
  name: z.string().trim().max(200).optional(),
  /** one identity's reach: its services, its routers and the routers of those services */
  identityId: z.string().max(200).optional(),
  /** group keys to show expanded */
  expand: z.array(z.string().max(4000)).max(200).default([]),
});
export type NetworkQuery = z.input<typeof networkQuerySchema>;

export interface GraphNode {
  key: string;
  kind: GraphKind;
  type: 'entity' | 'group';
  /** entity id (entity nodes) */
  id?: string;
  name: string;
  attributes: string[];
  /** the role classes the node stands for (live state is mapped onto nodes by class) */
  classes: number[];
  /** group nodes: entities in the group; expanded groups list up to MAX_MEMBERS of them */
  count?: number;
  expanded?: boolean;
  /** member nodes: the group they belong to */
  group?: string;
  /** entity named by the filter */
  pinned?: boolean;
  /** edge routers: online (entity) or how many are online (group) */
  online?: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  kind: 'service-policy' | 'edge-router-policy' | 'service-edge-router-policy';
  dial: boolean;
  bind: boolean;
  policies: Array<{ id: string; name: string; entity: string }>;
  policyCount: number;
}

export interface NetworkGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  totals: Record<GraphKind, number>;
  /** set when the view was cut to stay drawable */
  truncated?: string;
  filter: { attribute?: string; name?: string; identity?: { id: string; name: string } };
}

interface ClassRow {
  id: number;
  kind: GraphKind;
  key: string;
  member_count: number;
}

interface Group {
  key: string;
  kind: GraphKind;
  attrs: string[];
  classes: ClassRow[];
  members: number;
}

const js = (v: unknown) => JSON.stringify(v);
const attrsOf = (c: ClassRow): string[] => (JSON.parse(c.key) as [string[], string[]])[0];
export const groupKey = (kind: GraphKind, attrs: string[]) => `${kind}|${js(attrs)}`;
const otherKey = (kind: GraphKind) => `${kind}|*`;
const entityKey = (kind: GraphKind, id: string) => `${kind}:${id}`;
const groupName = (attrs: string[]) => (attrs.length ? attrs.map((a) => `#${a}`).join(' ') : 'no attributes');

async function loadClasses(store: Store, ids: Iterable<number>): Promise<ClassRow[]> {
  const list = [...new Set(ids)];
  if (!list.length) return [];
  return store.allSql<ClassRow>(
    `SELECT id, kind, key, member_count FROM role_classes WHERE id IN ${store.sql.jsonValues('?', 'integer')} AND kind IN ('identity', 'service', 'edge-router')`,
    js(list),
  );
}

/** Classes on the far side of the access tables from a set of classes of one kind. */
async function neighbours(store: Store, kind: GraphKind, classes: number[], hops: GraphKind[]): Promise<number[]> {
  if (!classes.length) return [];
  const ids = js(classes);
  const q = async (sql: string) => (await store.allSql<{ c: number }>(sql, ids)).map((r) => r.c);
  const out: number[] = [];
  const want = (k: GraphKind) => hops.includes(k);
  if (kind === 'identity') {
    if (want('service'))
      out.push(
        ...(await q(`SELECT DISTINCT service_class AS c FROM service_access WHERE identity_class IN ${store.sql.jsonValues('?', 'integer')}`)),
      );
    if (want('edge-router'))
      out.push(
        ...(await q(`SELECT DISTINCT router_class AS c FROM identity_router_access WHERE identity_class IN ${store.sql.jsonValues('?', 'integer')}`)),
      );
  } else if (kind === 'service') {
    if (want('identity'))
      out.push(
        ...(await q(`SELECT DISTINCT identity_class AS c FROM service_access WHERE service_class IN ${store.sql.jsonValues('?', 'integer')}`)),
      );
    if (want('edge-router'))
      out.push(
        ...(await q(`SELECT DISTINCT router_class AS c FROM service_router_access WHERE service_class IN ${store.sql.jsonValues('?', 'integer')}`)),
      );
  } else {
    if (want('identity'))
      out.push(
        ...(await q(`SELECT DISTINCT identity_class AS c FROM identity_router_access WHERE router_class IN ${store.sql.jsonValues('?', 'integer')}`)),
      );
    if (want('service'))
      out.push(
        ...(await q(`SELECT DISTINCT service_class AS c FROM service_router_access WHERE router_class IN ${store.sql.jsonValues('?', 'integer')}`)),
      );
  }
  return out;
}

interface Pinned {
  kind: GraphKind;
  id: string;
  name: string;
  classId: number;
}

export async function networkGraph(ctx: Ctx, body: unknown): Promise<NetworkGraph> {
  const q = parseInput(networkQuerySchema, body);
  const caller = ctx.caller;
  for (const g of ['identity', 'service', 'router', 'service-policy', 'edge-router-policy', 'service-edge-router-policy'] as const) {
    requirePermission(caller, g, 'read');
  }
  const core = ctx.core;
  const store = core.store;
  if (q.identityId) await ensureClass(core, 'identity', q.identityId);
  return store.read(async () => {
    const filter: NetworkGraph['filter'] = {};
    const pinned: Pinned[] = [];
    let classes: ClassRow[];
    const filtered = !!(q.attribute || q.name || q.identityId);
    if (!filtered) {
      classes = await store.allSql<ClassRow>(
        "SELECT id, kind, key, member_count FROM role_classes WHERE kind IN ('identity', 'service', 'edge-router')",
      );
    } else {
      const seeds = new Map<GraphKind, Set<number>>(GRAPH_KINDS.map((k) => [k, new Set<number>()]));
      const seedClasses: number[] = [];
      if (q.attribute) {
        const attr = q.attribute.replace(/^#/, '');
        filter.attribute = attr;
        for (const r of await store.allSql<ClassRow>(
          `SELECT c.id, c.kind, c.key, c.member_count FROM role_class_attrs x JOIN role_classes c ON c.id = x.class_id
           WHERE x.attr = ? AND c.kind IN ('identity', 'service', 'edge-router')`,
          attr,
        )) {
          seeds.get(r.kind)!.add(r.id);
          seedClasses.push(r.id);
        }
      }
      if (q.name) {
        filter.name = q.name;
        const like = `%${q.name.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        for (const kind of GRAPH_KINDS) {
          for (const r of await store.allSql<{ id: string; name: string; class_id: number }>(
            `SELECT t.id, t.name, m.class_id FROM ${ROLE_KINDS[kind].table} t JOIN role_class_members m ON m.kind = ? AND m.entity_id = t.id
             WHERE ${store.sql.like('t.name', '?', '\\')} ORDER BY t.name LIMIT ?`,
            kind,
            like,
            MAX_PINNED,
          )) {
            pinned.push({ kind, id: r.id, name: r.name, classId: r.class_id });
            seeds.get(kind)!.add(r.class_id);
          }
        }
      }
      if (q.identityId) {
        const row = await store.getSql<{ id: string; name: string; class_id: number }>(
          "SELECT t.id, t.name, m.class_id FROM identities t JOIN role_class_members m ON m.kind = 'identity' AND m.entity_id = t.id WHERE t.id = ?",
          q.identityId,
        );
        if (!row) throw notFound('identity');
        filter.identity = { id: row.id, name: row.name };
        pinned.push({ kind: 'identity', id: row.id, name: row.name, classId: row.class_id });
        seeds.get('identity')!.add(row.class_id);
      }
      // attribute seeds are shown whole; entities named by a name or identity filter are shown alone; both bring
      // the classes they connect to
      const found = new Set<number>(seedClasses);
      for (const kind of GRAPH_KINDS) {
        for (const c of await neighbours(
          store,
          kind,
          [...seeds.get(kind)!],
          GRAPH_KINDS.filter((k) => k !== kind),
        ))
          found.add(c);
      }
      if (q.identityId) {
        // the routers of the services the identity reaches: which of them it can use shows at a glance
        const reached = await neighbours(store, 'identity', [...seeds.get('identity')!], ['service']);
        for (const c of await neighbours(store, 'service', reached, ['edge-router'])) found.add(c);
      }
      classes = await loadClasses(store, found);
    }

    // groups per kind: classes with the same attributes
    const groups = new Map<string, Group>();
    for (const c of classes) {
      const attrs = attrsOf(c);
      const key = groupKey(c.kind, attrs);
      const g = groups.get(key) ?? { key, kind: c.kind, attrs, classes: [], members: 0 };
      g.classes.push(c);
      g.members += c.member_count;
      groups.set(key, g);
    }
    let truncated: string | undefined;
    const byKind = new Map<GraphKind, Group[]>(
      GRAPH_KINDS.map((k) => [
        k,
        [...groups.values()].filter((g) => g.kind === k).sort((a, b) => b.members - a.members || a.key.localeCompare(b.key)),
      ]),
    );
    for (const kind of GRAPH_KINDS) {
      const list = byKind.get(kind)!;
      if (list.length <= MAX_GROUPS) continue;
      const rest = list.splice(MAX_GROUPS - 1);
      list.push({ key: otherKey(kind), kind, attrs: [], classes: rest.flatMap((g) => g.classes), members: rest.reduce((n, g) => n + g.members, 0) });
      truncated = `More than ${MAX_GROUPS} attribute groups: the smallest are folded into "other attributes".`;
    }

    const expand = new Set(q.expand);
    const nodes: GraphNode[] = [];
    const classNodes = new Map<number, string[]>();
    const addClassNode = (classId: number, key: string) => {
      const list = classNodes.get(classId) ?? [];
      if (!list.includes(key)) list.push(key);
      classNodes.set(classId, list);
    };
    const shownEntities = new Set<string>();
    const routerOnline = async (ids: string[]) =>
      new Map(
        (
          await store.allSql<{ id: string; o: number }>(`SELECT id, is_online AS o FROM edge_routers WHERE id IN ${store.sql.jsonValues()}`, js(ids))
        ).map((r) => [r.id, r.o]),
      );

    for (const p of pinned) {
      const key = entityKey(p.kind, p.id);
      if (shownEntities.has(key)) continue;
      shownEntities.add(key);
      const cls = (await loadClasses(store, [p.classId]))[0];
      nodes.push({
        key,
        kind: p.kind,
        type: 'entity',
        id: p.id,
        name: p.name,
        attributes: cls ? attrsOf(cls) : [],
        classes: [p.classId],
        pinned: true,
      });
      addClassNode(p.classId, key);
    }
    for (const kind of GRAPH_KINDS) {
      const list = byKind.get(kind)!;
      const total = list.reduce((n, g) => n + g.members, 0);
      for (const g of list) {
        const classIds = g.classes.map((c) => c.id);
        const open = total <= SHOW_ALL_BELOW || expand.has(g.key);
        const name = g.key === otherKey(kind) ? 'other attributes' : groupName(g.attrs);
        if (!open) {
          const node: GraphNode = {
            key: g.key,
            kind,
            type: 'group',
            name,
            attributes: g.attrs,
            classes: classIds,
            count: g.members,
            expanded: false,
          };
          if (kind === 'edge-router') {
            node.online = (await store.getSql<{ n: number }>(
              `SELECT count(*) AS n FROM role_class_members m JOIN edge_routers t ON t.id = m.entity_id
               WHERE m.kind = 'edge-router' AND m.class_id IN ${store.sql.jsonValues('?', 'integer')} AND t.is_online = 1`,
              js(classIds),
            ))!.n;
          }
          nodes.push(node);
          for (const c of classIds) addClassNode(c, g.key);
          continue;
        }
        const members = await store.allSql<{ id: string; name: string; class_id: number }>(
          `SELECT t.id, t.name, m.class_id FROM role_class_members m JOIN ${ROLE_KINDS[kind].table} t ON t.id = m.entity_id
           WHERE m.kind = ? AND m.class_id IN ${store.sql.jsonValues('?', 'integer')} ORDER BY t.name, t.id LIMIT ?`,
          kind,
          js(classIds),
          MAX_MEMBERS + 1,
        );
        const listed = members.slice(0, MAX_MEMBERS);
        // the group header stays (to collapse it again) unless every group of the kind is shown open
        if (total > SHOW_ALL_BELOW) {
          nodes.push({ key: g.key, kind, type: 'group', name, attributes: g.attrs, classes: classIds, count: g.members, expanded: true });
        }
        if (members.length > MAX_MEMBERS) truncated = `Expanded groups show their first ${MAX_MEMBERS} members: filter by name to find the others.`;
        const online = kind === 'edge-router' ? await routerOnline(listed.map((m) => m.id)) : undefined;
        for (const m of listed) {
          const key = entityKey(kind, m.id);
          addClassNode(m.class_id, key);
          if (shownEntities.has(key)) continue;
          shownEntities.add(key);
          const cls = g.classes.find((c) => c.id === m.class_id)!;
          nodes.push({
            key,
            kind,
            type: 'entity',
            id: m.id,
            name: m.name,
            attributes: attrsOf(cls),
            classes: [m.class_id],
            ...(total > SHOW_ALL_BELOW ? { group: g.key } : {}),
            ...(online ? { online: online.get(m.id) ?? 0 } : {}),
          });
        }
      }
    }
    const pinnedRouters = nodes.filter((n) => n.kind === 'edge-router' && n.type === 'entity' && n.online === undefined);
    if (pinnedRouters.length) {
      const online = await routerOnline(pinnedRouters.map((n) => n.id!));
      for (const n of pinnedRouters) n.online = online.get(n.id!) ?? 0;
    }

    // edges: every policy joins the nodes of the classes it matches on each of its sides
    const viewClasses = [...classNodes.keys()];
    const matches = viewClasses.length
      ? await store.allSql<{ policy_id: string; kind: GraphKind; class_id: number }>(
          `SELECT policy_id, kind, class_id FROM class_policies WHERE class_id IN ${store.sql.jsonValues('?', 'integer')} AND kind <> 'posture-check'`,
          js(viewClasses),
        )
      : [];
    const byPolicy = new Map<string, Map<GraphKind, number[]>>();
    for (const m of matches) {
      const sides = byPolicy.get(m.policy_id) ?? new Map<GraphKind, number[]>();
      const list = sides.get(m.kind) ?? [];
      list.push(m.class_id);
      sides.set(m.kind, list);
      byPolicy.set(m.policy_id, sides);
    }
    const policyIds = js([...byPolicy.keys()]);
    const meta = new Map<string, { name: string; kind: GraphEdge['kind']; type?: string }>();
    for (const [table, kind] of [
      ['service_policies', 'service-policy'],
      ['edge_router_policies', 'edge-router-policy'],
      ['service_edge_router_policies', 'service-edge-router-policy'],
    ] as const) {
      const typed = table === 'service_policies' ? ', type' : ", '' AS type";
      for (const p of await store.allSql<{ id: string; name: string; type: string }>(
        `SELECT id, name${typed} FROM ${table} WHERE id IN ${store.sql.jsonValues()}`,
        policyIds,
      )) {
        meta.set(p.id, { name: p.name, kind, type: p.type });
      }
    }
    const SIDES: Record<GraphEdge['kind'], [GraphKind, GraphKind]> = {
      'service-policy': ['identity', 'service'],
      'edge-router-policy': ['identity', 'edge-router'],
      'service-edge-router-policy': ['service', 'edge-router'],
    };
    const POLICY_PATHS: Record<GraphEdge['kind'], string> = {
      'service-policy': 'service-policies',
      'edge-router-policy': 'edge-router-policies',
      'service-edge-router-policy': 'service-edge-router-policies',
    };
    const edges = new Map<string, GraphEdge & { ids: Set<string> }>();
    outer: for (const [policyId, sides] of byPolicy) {
      const m = meta.get(policyId);
      if (!m) continue;
      const [a, b] = SIDES[m.kind];
      const left = [...new Set((sides.get(a) ?? []).flatMap((c) => classNodes.get(c) ?? []))];
      const right = [...new Set((sides.get(b) ?? []).flatMap((c) => classNodes.get(c) ?? []))];
      for (const from of left) {
        for (const to of right) {
          const key = `${from}>${to}`;
          let e = edges.get(key);
          if (!e) {
            if (edges.size >= MAX_EDGES) {
              truncated = `More than ${MAX_EDGES} connections: filter or collapse groups to see them all.`;
              break outer;
            }
            e = { from, to, kind: m.kind, dial: false, bind: false, policies: [], policyCount: 0, ids: new Set() };
            edges.set(key, e);
          }
          if (e.ids.has(policyId)) continue;
          e.ids.add(policyId);
          e.policyCount++;
          if (m.type === 'Dial') e.dial = true;
          if (m.type === 'Bind') e.bind = true;
          if (e.policies.length < MAX_EDGE_POLICIES) e.policies.push({ id: policyId, name: m.name, entity: POLICY_PATHS[m.kind] });
        }
      }
    }
    const totals = {} as Record<GraphKind, number>;
    for (const k of GRAPH_KINDS) totals[k] = (await store.getSql<{ n: number }>(`SELECT count(*) AS n FROM ${ROLE_KINDS[k].table}`))!.n;
    return {
      nodes,
      edges: [...edges.values()].map(({ ids: _ids, ...e }) => e),
      totals,
      ...(truncated ? { truncated } : {}),
      filter,
    };
  });
}
