import { API_SESSION } from '../auth/index';
import { allRows, getRow, json, rowShape, selectList, type Decoded } from '../store/rows';
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { identities } from './identities';
import { services } from './services';
import { listResource, ref, requireDecoded } from '../entities/resource';
import type { ListParams } from '../query/list';
import type { Store } from '../store/db';
import { classesOf, classFor, NO_CLASS, reach } from './access';
import { policyAdvice } from './advice';
import { evaluateGrant, evaluationInput, policyPostureChecks } from './posture';
import { checkPasses, failureOf } from './postureEvaluation';

/**
 * Why an identity can or cannot use a service, as a chain of links: the service policies that grant Dial and Bind
 * (with their posture checks, evaluated on what the identity's SDK last reported), and for every edge router the
 * two have in common the edge router policy and the service edge router policy that make it common. When access is
 * missing, the smallest change that would grant it. Read from the same policy index as sessions and the REST
 * policy advice (whose response this does not change).
 */

export type Ref = ReturnType<typeof ref>;
type SessionType = 'Dial' | 'Bind';

export interface PostureCheckResult extends Ref {
  typeId: string;
  passes: boolean;
  /** what was expected and what was reported, when it fails */
  failure?: Record<string, unknown>;
}

export interface GrantingPolicy extends Ref {
  type: SessionType;
  semantic: string;
  postureChecks: PostureCheckResult[];
  /** every posture check of this policy passes */
  posturePasses: boolean;
}

export interface CommonRouter extends Ref {
  isOnline: boolean;
  /** edge router policies that let the identity use this router */
  edgeRouterPolicies: Ref[];
  /** service edge router policies that let the service use this router */
  serviceEdgeRouterPolicies: Ref[];
}

/** One write of a fix. */
export interface FixChange {
  resource: FixResource;
  op: 'patch' | 'create';
  id?: string;
  body: Record<string, unknown>;
}
/** The types a fix writes. */
export const FIX_RESOURCES = ['service-policies', 'edge-router-policies', 'service-edge-router-policies', 'identities'] as const;
export type FixResource = (typeof FIX_RESOURCES)[number];

/** A suggested change: its sentence in parts (strings and links), and the writes that make it. */
export interface AccessFix {
  sentence: string;
  parts: Array<string | Ref>;
  /** identities (besides this one) the change would also grant, as far as it can be told; 0 = only this identity */
  alsoGrants: number;
  /** the first write (`changes[0]`) */
  change: FixChange;
  /** every write, applied together (one transaction) */
  changes: FixChange[];
  /** applying it grants the access by policy (false: it mends one link, another is still missing) */
  complete: boolean;
  /** what is still missing after it, when it is not complete */
  leaves?: string;
}

export interface AccessExplanation {
  identity: Ref;
  service: Ref;
  /** the REST policy advice (unchanged) */
  advice: Awaited<ReturnType<typeof policyAdvice>>;
  dial: { allowed: boolean; posturePasses: boolean; policies: GrantingPolicy[] };
  bind: { allowed: boolean; posturePasses: boolean; policies: GrantingPolicy[] };
  routers: { identityRouterCount: number; serviceRouterCount: number; common: CommonRouter[]; moreCommon: number };
  /** what posture was evaluated with */
  postureBasis: 'latest API session' | 'no API session yet';
  /** can the identity dial right now: a Dial grant, passing posture, an online common router */
  canDial: boolean;
  canBind: boolean;
  /** the first thing that is missing for `want`, in words */
  missing?: string;
  /** smallest first; empty when nothing is missing */
  fixes: AccessFix[];
}

const MAX_COMMON = 20;
const MAX_FIXES = 6;

/** The columns of policies a fix edits: each side's roles. */
const SERVICE_POLICY = rowShape({
  id: 'string',
  name: 'string',
  semantic: 'string',
  identity_roles: json<string[]>(),
  service_roles: json<string[]>(),
});
const EDGE_ROUTER_POLICY = rowShape({ id: 'string', name: 'string', identity_roles: json<string[]>() });
const SERVICE_EDGE_ROUTER_POLICY = rowShape({ id: 'string', name: 'string', service_roles: json<string[]>() });
const POSTURE_ROLES = rowShape({ posture_check_roles: json<string[]>('?') });
const ATTRIBUTES = rowShape({ role_attributes: json<string[]>('?') });
type Identity = Decoded<typeof identities.shape>;
type Service = Decoded<typeof services.shape>;
const partsText = (parts: Array<string | Ref>) => parts.map((p) => (typeof p === 'string' ? p : (p.name ?? p.id))).join('');

/** Policies of one table that match both an entity class (one side) and any of some router classes (the other). */
async function policiesJoining(store: Store, table: string, entityClass: number, routerClass: number): Promise<Ref[]> {
  return (
    await store.allSql<{ id: string; name: string }>(
      `SELECT DISTINCT p.id, p.name FROM class_policies a
     JOIN class_policies b ON b.policy_id = a.policy_id AND b.kind = 'edge-router' AND b.class_id = ?
     JOIN ${table} p ON p.id = a.policy_id
     WHERE a.class_id = ? ORDER BY p.name LIMIT 10`,
      routerClass,
      entityClass,
    )
  ).map((p) => ref(table === 'edge_router_policies' ? 'edge-router-policies' : 'service-edge-router-policies', p.id, p.name));
}

/** Identities currently holding an attribute (the most a policy edit adding `#attr` could grant). */
const attrHolders = async (store: Store, attr: string): Promise<number> =>
  (await store.getSql<{ n: number }>("SELECT count(*) AS n FROM role_attributes WHERE entity_type = 'identity' AND attr = ?", attr))!.n;

/** Members of the classes one side of a policy matches. */
const sideMembers = async (store: Store, policyId: string, kind: string): Promise<number> =>
  (await store.getSql<{ n: number }>(
    'SELECT coalesce(sum(c.member_count), 0) AS n FROM class_policies cp JOIN role_classes c ON c.id = cp.class_id WHERE cp.policy_id = ? AND cp.kind = ?',
    policyId,
    kind,
  ))!.n;

function fix(parts: Array<string | Ref>, alsoGrants: number, change: FixChange, complete = true): AccessFix {
  return { sentence: partsText(parts), parts, alsoGrants, change, changes: [change], complete };
}

/** Two fixes as one: both writes, in order, one sentence ("A, and b"). */
function both(a: AccessFix, b: AccessFix): AccessFix {
  const second = b.parts.map((p, i) => (i === 0 && typeof p === 'string' ? p.charAt(0).toLowerCase() + p.slice(1) : p));
  const parts = [...a.parts, ', and ', ...second];
  return {
    sentence: partsText(parts),
    parts,
    alsoGrants: Math.max(a.alsoGrants, b.alsoGrants),
    change: a.change,
    changes: [...a.changes, ...b.changes],
    complete: true,
  };
}

/** Ways to get a Dial (or Bind) service policy to cover the identity for the service. */
async function grantFixes(ctx: Ctx, type: SessionType, identity: Identity, service: Service, serviceClass: number): Promise<AccessFix[]> {
  const store = ctx.core.store;
  const out: Array<AccessFix & { rank: number }> = [];
  const identityRef = ref('identities', identity.id, identity.name);
  const serviceRef = ref('services', service.id, service.name);
  const attrs = identity.role_attributes ?? [];
  // policies of that type that already cover the service: widen their identity side
  const forService = await allRows(
    store,
    SERVICE_POLICY,
    `SELECT DISTINCT ${selectList(SERVICE_POLICY, 'p.')} FROM class_policies b JOIN service_policies p ON p.id = b.policy_id AND p.type = ?
     WHERE b.kind = 'service' AND b.class_id = ? ORDER BY p.name LIMIT 10`,
    type,
    serviceClass,
  );
  for (const p of forService) {
    const policy = ref('service-policies', p.id, p.name);
    const roles = p.identity_roles;
    const policyAttrs = roles.filter((r) => r.startsWith('#') && r !== '#all').map((r) => r.slice(1));
    // AnyOf: one of the identity's own attributes added to the policy
    if (p.semantic === 'AnyOf') {
      for (const a of attrs.filter((x) => !policyAttrs.includes(x))) {
        out.push({
          ...fix(['Add ', `#${a}`, ' to the identity roles of ', policy], Math.max(0, (await attrHolders(store, a)) - 1), {
            resource: 'service-policies',
            op: 'patch',
            id: policy.id,
            body: { identityRoles: [...roles, `#${a}`] },
          }),
          rank: 0,
        });
      }
    }
    out.push({
      ...fix(['Add ', `@${identity.name}`, ' to the identity roles of ', policy], 0, {
        resource: 'service-policies',
        op: 'patch',
        id: policy.id,
        body: { identityRoles: [...roles, `@${identity.id}`] },
      }),
      rank: 1,
    });
    // or give the identity the attributes the policy asks for
    const missing = policyAttrs.filter((a) => !attrs.includes(a));
    const wanted = p.semantic === 'AnyOf' ? missing.slice(0, 1) : missing;
    if (wanted.length) {
      out.push({
        ...fix(
          [
            'Give ',
            identityRef,
            ` the attribute${wanted.length > 1 ? 's' : ''} `,
            wanted.map((a) => `#${a}`).join(', '),
            ' (it then matches ',
            policy,
            ', and whatever else selects those attributes)',
          ],
          0,
          { resource: 'identities', op: 'patch', id: identityRef.id, body: { roleAttributes: [...attrs, ...wanted] } },
        ),
        rank: 2,
      });
    }
  }
  // policies of that type that already cover the identity: widen their service side
  const ic = await classFor(ctx.core, 'identity', identity.id);
  for (const p of await allRows(
    store,
    SERVICE_POLICY,
    `SELECT DISTINCT ${selectList(SERVICE_POLICY, 'p.')} FROM class_policies a JOIN service_policies p ON p.id = a.policy_id AND p.type = ?
     WHERE a.kind = 'identity' AND a.class_id = ? ORDER BY p.name LIMIT 5`,
    type,
    ic,
  )) {
    const policy = ref('service-policies', p.id, p.name);
    const roles = p.service_roles;
    out.push({
      ...fix(
        ['Add ', `@${service.name}`, ' to the service roles of ', policy, ` (every identity it selects may then ${type.toLowerCase()} it)`],
        Math.max(0, (await sideMembers(store, policy.id, 'identity')) - 1),
        { resource: 'service-policies', op: 'patch', id: policy.id, body: { serviceRoles: [...roles, `@${service.id}`] } },
      ),
      rank: 3,
    });
  }
  // a new policy
  out.push({
    ...fix([`Create a ${type} service policy for `, identityRef, ' and ', serviceRef], 0, {
      resource: 'service-policies',
      op: 'create',
      body: {
        name: `${service.name}-${type.toLowerCase()}-${identity.name}`,
        type,
        semantic: 'AnyOf',
        identityRoles: [`@${identity.id}`],
        serviceRoles: [`@${service.id}`],
        postureCheckRoles: [],
      },
    }),
    rank: forService.length ? 4 : -1,
  });
  return out.sort((a, b) => a.alsoGrants - b.alsoGrants || a.rank - b.rank).map(({ rank: _r, ...f }) => f);
}

/** Ways to give the identity and the service an edge router in common. */
async function routerFixes(ctx: Ctx, identity: Identity, service: Service, ic: number, sc: number): Promise<AccessFix[]> {
  const store = ctx.core.store;
  const out: AccessFix[] = [];
  const identityRef = ref('identities', identity.id, identity.name);
  const serviceRef = ref('services', service.id, service.name);
  // routers each side already has (online first)
  const routersOf = (table: string, column: string, cls: number) =>
    store.allSql<{ id: string; name: string }>(
      `SELECT t.id, t.name FROM edge_routers t JOIN role_class_members m ON m.kind = 'edge-router' AND m.entity_id = t.id
     WHERE m.class_id IN (SELECT router_class FROM ${table} WHERE ${column} = ?) ORDER BY t.is_online DESC, t.name LIMIT 3`,
      cls,
    );
  const serviceRouters = await routersOf('service_router_access', 'service_class', sc);
  const identityRouters = await routersOf('identity_router_access', 'identity_class', ic);
  // edge router policies reaching one of the service's routers: add the identity
  for (const p of await allRows(
    store,
    EDGE_ROUTER_POLICY,
    `SELECT DISTINCT ${selectList(EDGE_ROUTER_POLICY, 'p.')} FROM service_router_access s JOIN class_policies r ON r.kind = 'edge-router' AND r.class_id = s.router_class
     JOIN edge_router_policies p ON p.id = r.policy_id WHERE s.service_class = ? AND p.is_system = 0 ORDER BY p.name LIMIT 3`,
    sc,
  )) {
    const policy = ref('edge-router-policies', p.id, p.name);
    out.push(
      fix(['Add ', `@${identity.name}`, ' to the identity roles of edge router policy ', policy], 0, {
        resource: 'edge-router-policies',
        op: 'patch',
        id: policy.id,
        body: { identityRoles: [...p.identity_roles, `@${identity.id}`] },
      }),
    );
  }
  // service edge router policies reaching one of the identity's routers: add the service
  for (const p of await allRows(
    store,
    SERVICE_EDGE_ROUTER_POLICY,
    `SELECT DISTINCT ${selectList(SERVICE_EDGE_ROUTER_POLICY, 'p.')} FROM identity_router_access s JOIN class_policies r ON r.kind = 'edge-router' AND r.class_id = s.router_class
     JOIN service_edge_router_policies p ON p.id = r.policy_id WHERE s.identity_class = ? ORDER BY p.name LIMIT 3`,
    ic,
  )) {
    const policy = ref('service-edge-router-policies', p.id, p.name);
    out.push(
      fix(['Add ', `@${service.name}`, ' to the service roles of service edge router policy ', policy], 0, {
        resource: 'service-edge-router-policies',
        op: 'patch',
        id: policy.id,
        body: { serviceRoles: [...p.service_roles, `@${service.id}`] },
      }),
    );
  }
  // new policies towards a router the other side already uses (complete only when the other side has it)
  const target = serviceRouters[0] ?? identityRouters[0];
  const routerRole = target ? `@${target.id}` : '#all';
  const routerName = target ? target.name : 'every edge router';
  const creates: AccessFix[] = [];
  if (!identityRouters.length || !out.length) {
    creates.push(
      fix(
        ['Create an edge router policy letting ', identityRef, ` use ${routerName}`],
        0,
        {
          resource: 'edge-router-policies',
          op: 'create',
          body: {
            name: `${identity.name}-routers`,
            semantic: 'AnyOf',
            identityRoles: [`@${identity.id}`],
            edgeRouterRoles: [routerRole],
          },
        },
        serviceRouters.length > 0,
      ),
    );
  }
  if (!serviceRouters.length || out.length + creates.length < 2) {
    const forService = identityRouters[0] ?? target;
    creates.push(
      fix(
        ['Create a service edge router policy letting ', serviceRef, ` use ${forService ? forService.name : 'every edge router'}`],
        0,
        {
          resource: 'service-edge-router-policies',
          op: 'create',
          body: {
            name: `${service.name}-routers`,
            semantic: 'AnyOf',
            serviceRoles: [`@${service.id}`],
            edgeRouterRoles: [forService ? `@${forService.id}` : '#all'],
          },
        },
        identityRouters.length > 0,
      ),
    );
  }
  // neither side has a router: only both policies together give them one in common
  const whole = creates.length === 2 && !creates.some((c) => c.complete) ? [both(creates[0]!, creates[1]!)] : [];
  for (const c of creates) if (!c.complete) c.leaves = 'the other side still has no edge router in common';
  return [...whole, ...out, ...creates].sort((a, b) => Number(b.complete) - Number(a.complete));
}

/** The whole chain for one identity and one service; `want` says which access the fixes aim at. */
export async function explainAccess(ctx: Ctx, identityId: string, serviceId: string, want: SessionType = 'Dial'): Promise<AccessExplanation> {
  const caller = ctx.caller;
  const advice = await policyAdvice(ctx, identityId, serviceId);
  for (const group of ['service-policy', 'edge-router-policy', 'service-edge-router-policy', 'router', 'posture-check'] as const) {
    requirePermission(caller, group, 'read');
  }
  const core = ctx.core;
  const store = core.store;
  return store.read(async () => {
    const identity = await requireDecoded(store, identities, identityId);
    const service = await requireDecoded(store, services, serviceId);
    const ic = await classFor(core, 'identity', identityId);
    const sc = await classFor(core, 'service', serviceId);

    // service policies, with their posture checks evaluated on the identity's latest API session
    const session = await getRow(store, API_SESSION, 'SELECT * FROM api_sessions WHERE identity_id = ? ORDER BY created_at DESC LIMIT 1', identityId);
    const input = await evaluationInput(core, identityId, session);
    const policies = ic === NO_CLASS || sc === NO_CLASS ? [] : await policyPostureChecks(store, ic, [sc]);
    const semantics = new Map(
      (
        await store.allSql<{ id: string; semantic: string }>(
          `SELECT id, semantic FROM service_policies WHERE id IN ${store.sql.jsonValues()}`,
          JSON.stringify(policies.map((p) => p.policyId)),
        )
      ).map((r) => [r.id, r.semantic]),
    );
    const granting = (type: SessionType): GrantingPolicy[] =>
      policies
        .filter((p) => p.type === type)
        .map((p) => {
          const checks = p.checks.map((c): PostureCheckResult => {
            const passes = checkPasses(c, input);
            return {
              ...ref('posture-checks', c.id, c.name),
              typeId: c.type_id,
              passes,
              ...(passes ? {} : { failure: failureOf(c, input) }),
            };
          });
          return {
            ...ref('service-policies', p.policyId, p.policyName),
            type,
            semantic: semantics.get(p.policyId) ?? 'AllOf',
            postureChecks: checks,
            posturePasses: checks.every((c) => c.passes),
          };
        });
    const dial = granting('Dial');
    const bind = granting('Bind');
    const dialPosture = evaluateGrant(policies, 'Dial', input).passed;
    const bindPosture = evaluateGrant(policies, 'Bind', input).passed;

    // the common routers, each with the policies that make it common
    const commonIds = advice.commonRouters.slice(0, MAX_COMMON).map((r) => r.id);
    const routerClasses = await classesOf(store, 'edge-router', commonIds);
    const common: CommonRouter[] = [];
    for (const r of advice.commonRouters.slice(0, MAX_COMMON)) {
      const rc = routerClasses.get(r.id) ?? NO_CLASS;
      common.push({
        ...ref('edge-routers', r.id, r.name),
        isOnline: r.isOnline,
        edgeRouterPolicies: await policiesJoining(store, 'edge_router_policies', ic, rc),
        serviceEdgeRouterPolicies: await policiesJoining(store, 'service_edge_router_policies', sc, rc),
      });
    }
    const online = advice.commonRouters.some((r) => r.isOnline);
    const canDial = advice.isDialAllowed && dialPosture && online;
    const canBind = advice.isBindAllowed && bindPosture && online;

    // what is missing for the wanted access, and the smallest changes that would grant it
    const allowed = want === 'Dial' ? advice.isDialAllowed : advice.isBindAllowed;
    const posture = want === 'Dial' ? dialPosture : bindPosture;
    let missing: string | undefined;
    let fixes: AccessFix[] = [];
    /** complete fixes put before the usual ones (they do not take their places) */
    let complete = 0;
    if (!allowed) {
      missing = `No ${want} service policy selects both the identity and the service.`;
      fixes = await grantFixes(ctx, want, identity, service, sc);
      if (!advice.commonRouters.length) {
        // the edge router link is missing too: a grant alone fixes half; complete fixes (grant and router) come first
        missing += ' Nor do they have an edge router in common.';
        const routes = (await routerFixes(ctx, identity, service, ic, sc)).filter((r) => r.complete);
        const whole = routes.length ? fixes.slice(0, 2).map((g) => both(g, routes[0]!)) : [];
        complete = whole.length;
        for (const g of fixes) {
          g.complete = false;
          g.leaves = 'no edge router in common yet';
        }
        fixes = [...whole, ...fixes];
      }
    } else if (!advice.commonRouters.length) {
      missing =
        advice.identityRouterCount === 0
          ? 'No edge router policy gives the identity an edge router.'
          : advice.serviceRouterCount === 0
            ? 'No service edge router policy lets the service use an edge router.'
            : 'The identity and the service have no edge router in common.';
      fixes = await routerFixes(ctx, identity, service, ic, sc);
    } else if (!posture) {
      const failing = (want === 'Dial' ? dial : bind).flatMap((p) => p.postureChecks.filter((c) => !c.passes));
      missing = `The posture checks of every ${want} policy are not all passing (${[...new Set(failing.map((c) => c.name))].join(', ')}).`;
      fixes = [];
      for (const c of failing.slice(0, 1)) {
        const policy = (want === 'Dial' ? dial : bind).find((p) => p.postureChecks.some((x) => x.id === c.id))!;
        const row = await getRow(store, POSTURE_ROLES, 'SELECT posture_check_roles FROM service_policies WHERE id = ?', policy.id);
        const checkAttrs = (await getRow(store, ATTRIBUTES, 'SELECT role_attributes FROM posture_checks WHERE id = ?', c.id))?.role_attributes ?? [];
        const selecting = new Set([`@${c.id}`, '#all', ...checkAttrs.map((a) => `#${a}`)]);
        const remaining = (row?.posture_check_roles ?? []).filter((r) => !selecting.has(r));
        fixes.push(
          fix(['Have the identity pass ', c, `, or remove it from the posture check roles of `, policy], 0, {
            resource: 'service-policies',
            op: 'patch',
            id: policy.id,
            body: { postureCheckRoles: remaining },
          }),
        );
      }
    } else if (!online) {
      missing = 'None of the common edge routers is online.';
    }
    return {
      identity: advice.identity,
      service: advice.service,
      advice,
      dial: { allowed: advice.isDialAllowed, posturePasses: dialPosture, policies: dial },
      bind: { allowed: advice.isBindAllowed, posturePasses: bindPosture, policies: bind },
      routers: {
        identityRouterCount: advice.identityRouterCount,
        serviceRouterCount: advice.serviceRouterCount,
        common,
        moreCommon: Math.max(0, advice.commonRouters.length - common.length),
      },
      postureBasis: session ? 'latest API session' : 'no API session yet',
      canDial,
      canBind,
      missing,
      fixes: fixes.slice(0, MAX_FIXES + complete),
    };
  });
}

/** Identities that may dial (or bind) a service, paged in SQL: the service page's "who may use it". */
export async function serviceUsers(ctx: Ctx, serviceId: string, type: 'dial' | 'bind', params: ListParams) {
  requirePermission(ctx.caller, 'service', 'read');
  const sc = await classFor(ctx.core, 'service', serviceId);
  return listResource(ctx, identities, params, reach.identitiesOfService(sc, type));
}
