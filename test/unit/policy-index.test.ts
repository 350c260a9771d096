import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Core } from '../../src/main/core/core';
import { syncRoleAttributes } from '../../src/main/core/entities/roleAttributes';
import { classOf } from '../../src/main/core/policy/classes';
import { reindexPolicy, roleAttributesChanged, type PolicyTypeSpec } from '../../src/main/core/policy/policyIndex';
import { EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY, SERVICE_POLICY } from '../../src/main/core/policy/policySpecs';
import type { Row } from '../../src/main/core/store/db';
import { SqliteStore as Store } from '../../src/main/core/store/sqlite';

/**
 * The policy index is maintained incrementally (class matches, class links with counts, @id re-classing).
 * This test drives it through a long random sequence of policy and attribute changes and, after each step,
 * compares what it answers with a naive evaluation of every policy against every entity.
 */

let dir: string;
let store: Store;
let core: Core;
const now = '2030-01-01T00:00:00.000Z';

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ATTRS = ['a', 'b', 'c', 'd'];
type Kind = 'identity' | 'service' | 'edge-router';
const TABLE: Record<Kind, string> = { identity: 'identities', service: 'services', 'edge-router': 'edge_routers' };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'weft-policy-index-'));
  store = new Store(join(dir, 'weft.db'));
  store.migrate();
  store.runSql("INSERT INTO identity_types (id, name, created_at, updated_at) VALUES ('User', 'User', ?, ?)", now, now);
  store.runSql(
    "INSERT INTO auth_policies (id, name, primary_json, secondary_json, created_at, updated_at) VALUES ('default', 'Default', '{}', '{}', ?, ?)",
    now,
    now,
  );
  core = { store, clock: { now: () => new Date(now) } } as unknown as Core;
});
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function insertEntity(kind: Kind, id: string, attrs: string[]): void {
  store.tx(() => {
    if (kind === 'identity') {
      store.runSql(
        "INSERT INTO identities (id, name, type_id, auth_policy_id, role_attributes, created_at, updated_at) VALUES (?, ?, 'User', 'default', ?, ?, ?)",
        id,
        id,
        JSON.stringify(attrs),
        now,
        now,
      );
    } else {
      store.runSql(
        `INSERT INTO ${TABLE[kind]} (id, name, role_attributes, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
        id,
        id,
        JSON.stringify(attrs),
        now,
        now,
      );
    }
    syncRoleAttributes(store, kind, id, attrs);
    roleAttributesChanged(core, kind, id);
  });
}

function setAttrs(kind: Kind, id: string, attrs: string[]): void {
  store.tx(() => {
    store.runSql(`UPDATE ${TABLE[kind]} SET role_attributes = ? WHERE id = ?`, JSON.stringify(attrs), id);
    syncRoleAttributes(store, kind, id, attrs);
    roleAttributesChanged(core, kind, id);
  });
}

function writePolicy(spec: PolicyTypeSpec, id: string, values: Record<string, unknown> | undefined): void {
  store.tx(() => {
    const before = store.getSql<Row>(`SELECT * FROM ${spec.table} WHERE id = ?`, id);
    if (!values) {
      reindexPolicy(core, spec, id, before, undefined);
      store.runSql(`DELETE FROM ${spec.table} WHERE id = ?`, id);
      return;
    }
    const cols = Object.keys(values);
    if (before) {
      store.runSql(`UPDATE ${spec.table} SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, ...Object.values(values), id);
    } else {
      store.runSql(
        `INSERT INTO ${spec.table} (id, ${cols.join(', ')}, created_at, updated_at) VALUES (?, ${cols.map(() => '?').join(', ')}, ?, ?)`,
        id,
        ...Object.values(values),
        now,
        now,
      );
    }
    reindexPolicy(core, spec, id, before, store.getSql<Row>(`SELECT * FROM ${spec.table} WHERE id = ?`, id));
  });
}

// ---- the naive model -------------------------------------------------------------------------------

function attrsOf(kind: Kind, id: string): string[] {
  return JSON.parse(store.getSql<{ r: string }>(`SELECT role_attributes AS r FROM ${TABLE[kind]} WHERE id = ?`, id)!.r);
}

function matches(roles: string[], semantic: string, id: string, attrs: string[]): boolean {
  if (roles.includes('#all')) return true;
  if (roles.includes(`@${id}`)) return true;
  const wanted = roles.filter((r) => r.startsWith('#')).map((r) => r.slice(1));
  if (!wanted.length) return false;
  return semantic === 'AnyOf' ? wanted.some((a) => attrs.includes(a)) : wanted.every((a) => attrs.includes(a));
}

function naiveMembers(spec: PolicyTypeSpec, policy: Row, kind: Kind, ids: string[]): string[] {
  const side = spec.sides.find((s) => s.kind === kind)!;
  const roles = JSON.parse(policy[side.column] as string) as string[];
  return ids.filter((id) => matches(roles, policy.semantic as string, id, attrsOf(kind, id)));
}

function all(table: string): Row[] {
  return store.allSql<Row>(`SELECT * FROM ${table} ORDER BY id`);
}

function check(): void {
  const ids = (kind: Kind) => all(TABLE[kind]).map((r) => r.id as string);
  const identityIds = ids('identity');
  const serviceIds = ids('service');
  const routerIds = ids('edge-router');
  const expectedAccess = new Map<string, { dial: boolean; bind: boolean }>();
  for (const p of all('service_policies')) {
    for (const i of naiveMembers(SERVICE_POLICY, p, 'identity', identityIds)) {
      for (const s of naiveMembers(SERVICE_POLICY, p, 'service', serviceIds)) {
        const g = expectedAccess.get(`${i}|${s}`) ?? { dial: false, bind: false };
        if (p.type === 'Dial') g.dial = true;
        else g.bind = true;
        expectedAccess.set(`${i}|${s}`, g);
      }
    }
  }
  const actualAccess = new Map<string, { dial: boolean; bind: boolean }>();
  for (const r of store.allSql<{ i: string; s: string; dial: number; bind: number }>(
    `SELECT im.entity_id AS i, sm.entity_id AS s, a.dial, a.bind FROM service_access a
     JOIN role_class_members im ON im.class_id = a.identity_class JOIN role_class_members sm ON sm.class_id = a.service_class`,
  )) {
    expect(r.dial >= 0 && r.bind >= 0 && r.dial + r.bind > 0).toBe(true);
    actualAccess.set(`${r.i}|${r.s}`, { dial: r.dial > 0, bind: r.bind > 0 });
  }
  expect(Object.fromEntries([...actualAccess].sort())).toEqual(Object.fromEntries([...expectedAccess].sort()));

  const pairs = (spec: PolicyTypeSpec, left: Kind, leftIds: string[], rightIds: string[]) => {
    const out = new Set<string>();
    for (const p of all(spec.table)) {
      for (const l of naiveMembers(spec, p, left, leftIds)) for (const r of naiveMembers(spec, p, 'edge-router', rightIds)) out.add(`${l}|${r}`);
    }
    return [...out].sort();
  };
  const linked = (table: string, leftColumn: string) =>
    store
      .allSql<{ k: string }>(
        `SELECT DISTINCT lm.entity_id || '|' || rm.entity_id AS k FROM ${table} a
     JOIN role_class_members lm ON lm.class_id = a.${leftColumn} JOIN role_class_members rm ON rm.class_id = a.router_class ORDER BY k`,
      )
      .map((r) => r.k);
  expect(linked('identity_router_access', 'identity_class')).toEqual(pairs(EDGE_ROUTER_POLICY, 'identity', identityIds, routerIds));
  expect(linked('service_router_access', 'service_class')).toEqual(pairs(SERVICE_EDGE_ROUTER_POLICY, 'service', serviceIds, routerIds));

  // policy members as listed (class matches) agree with the naive evaluation
  for (const spec of [SERVICE_POLICY, EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY]) {
    for (const p of all(spec.table)) {
      for (const side of spec.sides) {
        if (side.kind === 'posture-check') continue;
        const kind = side.kind as Kind;
        const listed = store
          .allSql<{ id: string }>(
            `SELECT m.entity_id AS id FROM class_policies cp JOIN role_class_members m ON m.class_id = cp.class_id
           WHERE cp.policy_id = ? AND cp.kind = ? ORDER BY m.entity_id`,
            p.id,
            kind,
          )
          .map((r) => r.id);
        expect(listed, `${p.id} ${kind}`).toEqual(naiveMembers(spec, p, kind, ids(kind)).sort());
      }
    }
  }
  // every entity has a class, every class has members
  for (const kind of ['identity', 'service', 'edge-router'] as Kind[]) for (const id of ids(kind)) expect(classOf(store, kind, id)).toBeDefined();
  expect(store.getSql<{ n: number }>('SELECT count(*) AS n FROM role_classes WHERE member_count <= 0')!.n).toBe(0);
}

describe('policy index', () => {
  it('stays equal to a naive evaluation through random policy and attribute changes', () => {
    const rand = rng(20240611);
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
    const someAttrs = () => ATTRS.filter(() => rand() < 0.35);
    const entities: Record<Kind, string[]> = { identity: [], service: [], 'edge-router': [] };
    let n = 0;
    const newEntity = (kind: Kind) => {
      const id = `${kind[0]}${n++}`;
      insertEntity(kind, id, someAttrs());
      entities[kind].push(id);
    };
    for (let i = 0; i < 12; i++) newEntity('identity');
    for (let i = 0; i < 8; i++) newEntity('service');
    for (let i = 0; i < 5; i++) newEntity('edge-router');
    const roles = (kind: Kind) => {
      const r = rand();
      if (r < 0.1) return ['#all'];
      const out = someAttrs().map((a) => `#${a}`);
      if (rand() < 0.4 && entities[kind].length) out.push(`@${pick(entities[kind])}`);
      return [...new Set(out)].sort();
    };
    const policies: Array<{ spec: PolicyTypeSpec; id: string }> = [];
    const policyValues = (spec: PolicyTypeSpec): Record<string, unknown> => {
      const v: Record<string, unknown> = { name: `p${n++}`, semantic: rand() < 0.5 ? 'AllOf' : 'AnyOf' };
      for (const side of spec.sides) v[side.column] = JSON.stringify(side.kind === 'posture-check' ? [] : roles(side.kind as Kind));
      if (spec === SERVICE_POLICY) v.type = rand() < 0.5 ? 'Dial' : 'Bind';
      return v;
    };
    check();
    for (let step = 0; step < 250; step++) {
      const r = rand();
      if (r < 0.3 || policies.length < 3) {
        const spec = pick([SERVICE_POLICY, SERVICE_POLICY, EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY]);
        const id = `pol${n++}`;
        writePolicy(spec, id, policyValues(spec));
        policies.push({ spec, id });
      } else if (r < 0.5) {
        const p = pick(policies);
        const v = policyValues(p.spec);
        delete v.name;
        writePolicy(p.spec, p.id, v);
      } else if (r < 0.58) {
        const p = policies.splice(Math.floor(rand() * policies.length), 1)[0]!;
        writePolicy(p.spec, p.id, undefined);
      } else if (r < 0.85) {
        const kind = pick<Kind>(['identity', 'service', 'edge-router']);
        setAttrs(kind, pick(entities[kind]), someAttrs());
      } else if (r < 0.93) {
        newEntity(pick<Kind>(['identity', 'service', 'edge-router']));
      } else {
        const kind = pick<Kind>(['identity', 'service', 'edge-router']);
        if (entities[kind].length > 2) {
          const id = entities[kind].splice(Math.floor(rand() * entities[kind].length), 1)[0]!;
          store.runSql(`DELETE FROM ${TABLE[kind]} WHERE id = ?`, id);
        }
      }
      check();
    }
  });
});
