/**
 * OpenZiti's reference models (tests/model_sdk_performance_test.go) as plain data: the entities with their names and
 * role attributes and the policies with their roles, so the same model can be seeded into Weft (through the core)
 * and into the OpenZiti controller (through its Management API).
 */

export interface ModelSpec {
  name: string;
  services: number;
  identities: number;
  routers: number;
  servicePolicies: number;
  edgeRouterPolicies: number;
  serviceEdgeRouterPolicies: number;
}

export const SMALL: ModelSpec = {
  name: 'small',
  services: 20,
  identities: 100,
  routers: 10,
  servicePolicies: 10,
  edgeRouterPolicies: 10,
  serviceEdgeRouterPolicies: 10,
};
export const LARGE: ModelSpec = {
  name: 'large',
  services: 2000,
  identities: 100_000,
  routers: 500,
  servicePolicies: 250,
  edgeRouterPolicies: 250,
  serviceEdgeRouterPolicies: 100,
};
export const MANY: ModelSpec = {
  name: 'many-services',
  services: 10_000,
  identities: 16_000,
  routers: 100,
  servicePolicies: 100,
  edgeRouterPolicies: 100,
  serviceEdgeRouterPolicies: 100,
};

export const scaled = (m: ModelSpec, f: number, name: string): ModelSpec => ({
  name,
  services: Math.round(m.services * f),
  identities: Math.round(m.identities * f),
  routers: Math.max(2, Math.round(m.routers * f)),
  servicePolicies: Math.max(3, Math.round(m.servicePolicies * f)),
  edgeRouterPolicies: Math.max(3, Math.round(m.edgeRouterPolicies * f)),
  serviceEdgeRouterPolicies: Math.max(3, Math.round(m.serviceEdgeRouterPolicies * f)),
});

export const describeModel = (m: ModelSpec) =>
  `${m.services} services, ${m.identities} identities, ${m.routers} edge routers, ${m.servicePolicies}/${m.edgeRouterPolicies}/${m.serviceEdgeRouterPolicies} policies`;

/** A small deterministic PRNG (mulberry32), so every run samples the same identity. */
export function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * OpenZiti's attribute assignment: 8 attributes given to 1/2, 1/2, 1/3, 1/4, 1/5, 1/8, 1/10 and 1/10 of the
 * entities by striding; entity 0 gets none.
 */
export function roleAttributes(count: number, prefix: string): { perEntity: string[][]; set: string[] } {
  const perEntity: string[][] = Array.from({ length: count }, () => []);
  if (count < 2) return { perEntity, set: [] };
  const counts = [2, 2, 3, 4, 5, 8, 10, 10].map((d) => Math.floor(count / d));
  const set = [`${prefix}0`];
  let offset = 2;
  let index = 0;
  while (counts.length) {
    perEntity[1 + index]!.push(set.at(-1)!);
    counts[0]!--;
    while (counts.length && counts[0]! <= 0) {
      counts.shift();
      if (counts.length && counts[0]! > 0) {
        if (counts.length < 4) offset++;
        set.push(`${prefix}${set.length}`);
      }
    }
    index = (index + offset) % (count - 1);
  }
  return { perEntity, set };
}

/** The first n attribute subsets in OpenZiti's depth-first order, repeated when there are fewer. */
export function firstNPermutations(n: number, values: string[]): string[][] {
  const out: string[][] = [];
  const walk = (base: string[], rest: string[]): boolean => {
    for (let i = 0; i < rest.length; i++) {
      const next = [...base, rest[i]!];
      out.push(next);
      if (out.length >= n || !walk(next, rest.slice(i + 1))) return false;
    }
    return true;
  };
  walk([], values);
  for (let i = 0; out.length < n && out.length; i++) out.push(out[i]!);
  return out;
}

export type EntityKind = 'service' | 'identity' | 'router';
/** `#attr`, `#all`, or a reference to entity `index` of a kind (`@<its id>` once seeded) */
export type Role = string | { kind: EntityKind; index: number };

export interface PolicyPlan {
  name: string;
  /** service policies: identityRoles/serviceRoles; edge router policies: identityRoles/edgeRouterRoles; ... */
  roles: Record<string, Role[]>;
}

export interface ModelPlan {
  spec: ModelSpec;
  services: Array<{ name: string; roleAttributes: string[] }>;
  identities: Array<{ name: string; roleAttributes: string[] }>;
  routers: Array<{ name: string; roleAttributes: string[] }>;
  /** all Dial, AnyOf */
  servicePolicies: PolicyPlan[];
  edgeRouterPolicies: PolicyPlan[];
  serviceEdgeRouterPolicies: PolicyPlan[];
  /** the identity whose view is measured */
  sample: number;
  /** policy (index) whose identityRoles is #all: adding a service to it shows the service to everyone */
  allIdentitiesPolicy: number;
  /** policy (index) giving identity 0 every service */
  identityZeroPolicy: number;
  sampleAttribute: string;
}

const pad = (i: number) => String(i).padStart(6, '0');

/** The model as data, following OpenZiti's performance test. */
export function planModel(spec: ModelSpec): ModelPlan {
  const svcAttrs = roleAttributes(spec.services, 'sattr-');
  const idAttrs = roleAttributes(spec.identities, 'iattr-');
  const erAttrs = roleAttributes(spec.routers, 'rattr-');
  const entities = (n: number, prefix: string, attrs: string[][]) =>
    Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${pad(i)}`, roleAttributes: attrs[i]! }));
  const zero = (kind: EntityKind): Role => ({ kind, index: 0 });
  const roles = (attrs: string[][], i: number, kind: EntityKind): Role[] => [...attrs[i]!.map((a) => `#${a}`), zero(kind)];

  const servicePolicies: PolicyPlan[] = [
    { name: 'sp-0', roles: { identityRoles: [zero('identity')], serviceRoles: ['#all'] } },
    { name: 'sp-1', roles: { identityRoles: ['#all'], serviceRoles: [zero('service')] } },
  ];
  const sRoles = firstNPermutations(spec.servicePolicies, svcAttrs.set);
  const iRoles = firstNPermutations(spec.servicePolicies, idAttrs.set);
  for (let i = 2; i < spec.servicePolicies; i++) {
    servicePolicies.push({ name: `sp-${i}`, roles: { identityRoles: roles(iRoles, i, 'identity'), serviceRoles: roles(sRoles, i, 'service') } });
  }
  const edgeRouterPolicies: PolicyPlan[] = [
    { name: 'erp-0', roles: { identityRoles: [zero('identity')], edgeRouterRoles: ['#all'] } },
    { name: 'erp-1', roles: { identityRoles: ['#all'], edgeRouterRoles: [zero('router')] } },
  ];
  const eRoles = firstNPermutations(spec.edgeRouterPolicies, erAttrs.set);
  const iRoles2 = firstNPermutations(spec.edgeRouterPolicies, idAttrs.set);
  for (let i = 2; i < spec.edgeRouterPolicies; i++) {
    edgeRouterPolicies.push({
      name: `erp-${i}`,
      roles: { identityRoles: roles(iRoles2, i, 'identity'), edgeRouterRoles: roles(eRoles, i, 'router') },
    });
  }
  const serviceEdgeRouterPolicies: PolicyPlan[] = [
    { name: 'serp-0', roles: { serviceRoles: ['#all'], edgeRouterRoles: [zero('router')] } },
    { name: 'serp-1', roles: { serviceRoles: [zero('service')], edgeRouterRoles: ['#all'] } },
  ];
  const sRoles2 = firstNPermutations(spec.serviceEdgeRouterPolicies, svcAttrs.set);
  const eRoles2 = firstNPermutations(spec.serviceEdgeRouterPolicies, erAttrs.set);
  for (let i = 2; i < spec.serviceEdgeRouterPolicies; i++) {
    serviceEdgeRouterPolicies.push({
      name: `serp-${i}`,
      roles: { serviceRoles: roles(sRoles2, i, 'service'), edgeRouterRoles: roles(eRoles2, i, 'router') },
    });
  }
  const random = rng(spec.identities);
  const sample = 1 + Math.floor(random() * (spec.identities - 1));
  return {
    spec,
    services: entities(spec.services, 'svc', svcAttrs.perEntity),
    identities: entities(spec.identities, 'id', idAttrs.perEntity),
    routers: entities(spec.routers, 'er', erAttrs.perEntity),
    servicePolicies,
    edgeRouterPolicies,
    serviceEdgeRouterPolicies,
    sample,
    allIdentitiesPolicy: 1,
    identityZeroPolicy: 0,
    sampleAttribute: idAttrs.perEntity[sample]![0] ?? idAttrs.set[0]!,
  };
}

/** Roles with references resolved to `@<id>`. */
export function resolveRoles(roles: Record<string, Role[]>, ids: Record<EntityKind, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(roles).map(([k, rs]) => [k, rs.map((r) => (typeof r === 'string' ? r : `@${ids[r.kind][r.index]!}`))]));
}
