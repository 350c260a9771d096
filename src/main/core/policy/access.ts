import type { Ctx } from '../context';
import type { Core } from '../core';
import { listRows, listSql, type Association, type AssociationQuery, type ListExtra, type ResourceDef } from '../entities/resource';
import { validationError } from '../errors';
import type { ListParams } from '../query/list';
import type { Row, Store } from '../store/db';
import { ROLE_KINDS, type RoleKind } from '../kinds';
import { ensureClass } from './policyIndex';

/** Class id used when an entity has none (matches nothing). */
export const NO_CLASS = -1;

export const classFor = async (core: Core, kind: RoleKind, id: string): Promise<number> => (await ensureClass(core, kind, id)) ?? NO_CLASS;

export type PolicyTypeFilter = 'dial' | 'bind' | undefined;
const typeCondition = (t: PolicyTypeFilter) => (t === 'dial' ? ' AND a.dial > 0' : t === 'bind' ? ' AND a.bind > 0' : '');

/**
 * SQL restrictions (over alias t of the listed entity's table) answering "who may reach what" from the class links.
 * Every one is an indexed lookup by class: never an evaluation of policies.
 */
/** Members of the classes on one side of an access table, for a class on its other side. */
const across =
  (table: string, listed: string, given: string) =>
  (classId: number, type?: PolicyTypeFilter): ListExtra => ({
    where: `t.id IN (SELECT m.entity_id FROM ${table} a JOIN role_class_members m ON m.class_id = a.${listed}
                   WHERE a.${given} = ?${typeCondition(type)})`,
    params: [classId],
  });

export const reach = {
  servicesOfIdentity: across('service_access', 'service_class', 'identity_class'),
  identitiesOfService: across('service_access', 'identity_class', 'service_class'),
  routersOfIdentity: across('identity_router_access', 'router_class', 'identity_class'),
  identitiesOfRouter: across('identity_router_access', 'identity_class', 'router_class'),
  routersOfService: across('service_router_access', 'router_class', 'service_class'),
  servicesOfRouter: across('service_router_access', 'service_class', 'router_class'),
  /** edge routers an identity may use for a service: reachable by both the identity and the service */
  commonRouters: (identityClass: number, serviceClass: number): ListExtra => ({
    where: `t.id IN (SELECT m.entity_id FROM role_class_members m WHERE m.kind = 'edge-router' AND m.class_id IN (
              SELECT router_class FROM identity_router_access WHERE identity_class = ?
              INTERSECT SELECT router_class FROM service_router_access WHERE service_class = ?))`,
    params: [identityClass, serviceClass],
  }),
  /** policies (t = a policy table) matching an entity's class on any side */
  policiesOfClass: (classId: number): ListExtra => ({
    where: 't.id IN (SELECT policy_id FROM class_policies WHERE class_id = ?)',
    params: [classId],
  }),
  /** entities of a kind (t = its table) selected by one side of a policy */
  membersOfPolicy: (policyId: string, kind: RoleKind): ListExtra => ({
    where: `t.id IN (SELECT m.entity_id FROM class_policies cp JOIN role_class_members m ON m.class_id = cp.class_id
                     WHERE cp.policy_id = ? AND cp.kind = ?)`,
    params: [policyId, kind],
  }),
};

/** The `policyType` of an association listing (dial or bind, any case); undefined when absent. */
export function policyTypeOf(query: AssociationQuery): PolicyTypeFilter {
  const given = query.policyType;
  const v = Array.isArray(given) ? given[given.length - 1] : given;
  if (v === undefined || v === '') return undefined;
  const t = v.toLowerCase();
  if (t !== 'dial' && t !== 'bind') throw validationError('policyType', "must be 'dial' or 'bind'", v);
  return t;
}

/** An association of a role-kind entity listing what its class reaches (`policyType`: the listing takes that option). */
export const reachedFrom = (
  kind: RoleKind,
  child: string,
  select: (classId: number, type?: PolicyTypeFilter) => ListExtra,
  opts: { policyType?: boolean; view?: Association['view'] } = {},
): Association => ({
  child,
  where: async (ctx, id, query) => select(await classFor(ctx.core, kind, id), opts.policyType ? policyTypeOf(query) : undefined),
  view: opts.view,
});

/** The policies of one type naming an entity of `kind` (through its class). */
export const policiesNaming = (kind: RoleKind, policies: string): Association => reachedFrom(kind, policies, reach.policiesOfClass);

/** The entities of `kind` one side of a policy selects: `/<policies>/:id/<kind's entity>`. */
export const sideMembers = (kind: RoleKind): [string, Association] => [
  ROLE_KINDS[kind].resource,
  { child: ROLE_KINDS[kind].resource, where: (_ctx, id) => reach.membersOfPolicy(id, kind) },
];

export interface Grant {
  dial: boolean;
  bind: boolean;
}

/** Dial/Bind grants of an identity class for service classes. */
export async function grantsFor(store: Store, identityClass: number, serviceClasses: number[]): Promise<Map<number, Grant>> {
  const out = new Map<number, Grant>();
  if (!serviceClasses.length) return out;
  for (const r of await store.allSql<{ service_class: number; dial: number; bind: number }>(
    `SELECT service_class, dial, bind FROM service_access WHERE identity_class = ? AND service_class IN ${store.sql.jsonValues('?', 'integer')}`,
    identityClass,
    JSON.stringify(serviceClasses),
  ))
    out.set(r.service_class, { dial: r.dial > 0, bind: r.bind > 0 });
  return out;
}

/** OpenZiti's permission list: Bind before Dial; `Invalid` when neither (some SDKs expect a non-empty list). */
export function permissionsOf(grant: Grant | undefined): string[] {
  const out = [...(grant?.bind ? ['Bind'] : []), ...(grant?.dial ? ['Dial'] : [])];
  return out.length ? out : ['Invalid'];
}

/** Classes of a page of entities of one kind (entity id -> class id). */
export async function classesOf(store: Store, kind: RoleKind, ids: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!ids.length) return out;
  for (const r of await store.allSql<{ entity_id: string; class_id: number }>(
    `SELECT entity_id, class_id FROM role_class_members WHERE kind = ? AND entity_id IN ${store.sql.jsonValues()}`,
    kind,
    JSON.stringify(ids),
  ))
    out.set(r.entity_id, r.class_id);
  return out;
}

/** Number of distinct entities reachable through a class's links (classes are disjoint, so member counts add up). */
export async function reachCount(
  store: Store,
  table: 'identity_router_access' | 'service_router_access',
  column: string,
  classId: number,
): Promise<number> {
  return (await store.getSql<{ n: number }>(
    `SELECT coalesce(sum(c.member_count), 0) AS n FROM ${table} a JOIN role_classes c ON c.id = a.router_class WHERE a.${column} = ?`,
    classId,
  ))!.n;
}

/**
 * The services an identity class reaches, paged in SQL. Without a filter the total is the sum of the reached
 * classes' member counts, and when the identity reaches a good share of all services the page is found by walking
 * services in name order (stopping at the page) rather than collecting and sorting every reachable service.
 */
export async function listReachableServices(ctx: Ctx, def: ResourceDef, identityClass: number, params: ListParams) {
  const store = ctx.core.store;
  if (params.filter || params.roleFilter?.length) return listRows(ctx, def, params, reach.servicesOfIdentity(identityClass));
  const classes = await store.allSql<{ c: number; n: number }>(
    `SELECT a.service_class AS c, r.member_count AS n FROM service_access a JOIN role_classes r ON r.id = a.service_class
     WHERE a.identity_class = ?`,
    identityClass,
  );
  const total = classes.reduce((sum, r) => sum + r.n, 0);
  const everything = (await store.getSql<{ n: number }>("SELECT coalesce(sum(member_count), 0) AS n FROM role_classes WHERE kind = 'service'"))!.n;
  const where =
    total * 5 >= everything
      ? `(SELECT class_id FROM role_class_members WHERE kind = 'service' AND entity_id = t.id) IN ${store.sql.jsonValues('?', 'integer')}`
      : `t.id IN (SELECT entity_id FROM role_class_members WHERE class_id IN ${store.sql.jsonValues('?', 'integer')})`;
  const q = await listSql(def, params, { where, params: [JSON.stringify(classes.map((r) => r.c))] }, store);
  const rows = await store.allSql<Row>(q.pageSql, ...q.args, q.limit, q.offset);
  return { rows, meta: { pagination: { limit: q.limit, offset: q.offset, totalCount: total }, filterableFields: q.filterableFields } };
}
