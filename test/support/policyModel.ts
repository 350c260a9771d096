// Random policy and role-attribute changes written the way the core writes them, for the policy-index tests
// (test/unit/policy-index.test.ts), in the test process or in a child process (policyWriterMain.ts).
import type { Core } from '../../src/main/core/core';
import { syncRoleAttributes } from '../../src/main/core/entities/roleAttributes';
import { reindexPolicy, roleAttributesChanged, type PolicyTypeSpec } from '../../src/main/core/policy/policyIndex';
import { EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY, SERVICE_POLICY } from '../../src/main/core/policy/policySpecs';
import type { Row, Store } from '../../src/main/core/store/db';

export const NOW = '2030-01-01T00:00:00.000Z';
export const ATTRS = ['a', 'b', 'c', 'd'];
export type Kind = 'identity' | 'service' | 'edge-router';
export const TABLE: Record<Kind, string> = { identity: 'identities', service: 'services', 'edge-router': 'edge_routers' };

/** A small deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The rows every entity needs (an identity type, the default auth policy), once per database. */
export async function seedBaseRows(store: Store): Promise<void> {
  await store.runSql("INSERT INTO identity_types (id, name, created_at, updated_at) VALUES ('User', 'User', ?, ?)", NOW, NOW);
  await store.runSql(
    "INSERT INTO auth_policies (id, name, primary_json, secondary_json, created_at, updated_at) VALUES ('default', 'Default', '{}', '{}', ?, ?)",
    NOW,
    NOW,
  );
}

/** Entity and policy writes through the policy index, each in its own write transaction, as the core does them. */
export class PolicyWriter {
  private readonly core: Core;

  constructor(readonly store: Store) {
    this.core = { store, clock: { now: () => new Date(NOW) } } as unknown as Core;
  }

  async insertEntity(kind: Kind, id: string, attrs: string[]): Promise<void> {
    const { store } = this;
    await store.tx(async () => {
      if (kind === 'identity') {
        await store.runSql(
          "INSERT INTO identities (id, name, type_id, auth_policy_id, role_attributes, created_at, updated_at) VALUES (?, ?, 'User', 'default', ?, ?, ?)",
          id,
          id,
          JSON.stringify(attrs),
          NOW,
          NOW,
        );
      } else {
        await store.runSql(
          `INSERT INTO ${TABLE[kind]} (id, name, role_attributes, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
          id,
          id,
          JSON.stringify(attrs),
          NOW,
          NOW,
        );
      }
      await syncRoleAttributes(store, kind, id, attrs);
      await roleAttributesChanged(this.core, kind, id);
    });
  }

  async setAttrs(kind: Kind, id: string, attrs: string[]): Promise<void> {
    const { store } = this;
    await store.tx(async () => {
      await store.runSql(`UPDATE ${TABLE[kind]} SET role_attributes = ? WHERE id = ?`, JSON.stringify(attrs), id);
      await syncRoleAttributes(store, kind, id, attrs);
      await roleAttributesChanged(this.core, kind, id);
    });
  }

  async deleteEntity(kind: Kind, id: string): Promise<void> {
    await this.store.runSql(`DELETE FROM ${TABLE[kind]} WHERE id = ?`, id);
  }

  async writePolicy(spec: PolicyTypeSpec, id: string, values: Record<string, unknown> | undefined): Promise<void> {
    const { store } = this;
    await store.tx(async () => {
      const before = await store.getSql<Row>(`SELECT * FROM ${spec.table} WHERE id = ?`, id);
      if (!values) {
        await reindexPolicy(this.core, spec, id, before, undefined);
        await store.runSql(`DELETE FROM ${spec.table} WHERE id = ?`, id);
        return;
      }
      const cols = Object.keys(values);
      if (before) {
        await store.runSql(`UPDATE ${spec.table} SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, ...Object.values(values), id);
      } else {
        await store.runSql(
          `INSERT INTO ${spec.table} (id, ${cols.join(', ')}, created_at, updated_at) VALUES (?, ${cols.map(() => '?').join(', ')}, ?, ?)`,
          id,
          ...Object.values(values),
          NOW,
          NOW,
        );
      }
      await reindexPolicy(this.core, spec, id, before, await store.getSql<Row>(`SELECT * FROM ${spec.table} WHERE id = ?`, id));
    });
  }
}

/**
 * A random sequence of `steps` changes from `seed`: entities (ids prefixed with `prefix`, so two writers never
 * collide), policies naming attributes (shared by every writer) and this writer's own entities, updates, deletions.
 * `afterStep` runs after the start and after each step.
 */
export async function randomChanges(
  writer: PolicyWriter,
  opts: { seed: number; steps: number; prefix: string; afterStep?: () => void | Promise<void> },
): Promise<void> {
  const rand = rng(opts.seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const someAttrs = () => ATTRS.filter(() => rand() < 0.35);
  const entities: Record<Kind, string[]> = { identity: [], service: [], 'edge-router': [] };
  let n = 0;
  const newEntity = async (kind: Kind) => {
    const id = `${opts.prefix}${kind[0]}${n++}`;
    await writer.insertEntity(kind, id, someAttrs());
    entities[kind].push(id);
  };
  for (let i = 0; i < 12; i++) await newEntity('identity');
  for (let i = 0; i < 8; i++) await newEntity('service');
  for (let i = 0; i < 5; i++) await newEntity('edge-router');
  const roles = (kind: Kind) => {
    const r = rand();
    if (r < 0.1) return ['#all'];
    const out = someAttrs().map((a) => `#${a}`);
    if (rand() < 0.4 && entities[kind].length) out.push(`@${pick(entities[kind])}`);
    return [...new Set(out)].sort();
  };
  const policies: Array<{ spec: PolicyTypeSpec; id: string }> = [];
  const policyValues = (spec: PolicyTypeSpec): Record<string, unknown> => {
    const v: Record<string, unknown> = { name: `${opts.prefix}p${n++}`, semantic: rand() < 0.5 ? 'AllOf' : 'AnyOf' };
    for (const side of spec.sides) v[side.column] = JSON.stringify(side.kind === 'posture-check' ? [] : roles(side.kind as Kind));
    if (spec === SERVICE_POLICY) v.type = rand() < 0.5 ? 'Dial' : 'Bind';
    return v;
  };
  await opts.afterStep?.();
  for (let step = 0; step < opts.steps; step++) {
    const r = rand();
    if (r < 0.3 || policies.length < 3) {
      const spec = pick([SERVICE_POLICY, SERVICE_POLICY, EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY]);
      const id = `${opts.prefix}pol${n++}`;
      await writer.writePolicy(spec, id, policyValues(spec));
      policies.push({ spec, id });
    } else if (r < 0.5) {
      const p = pick(policies);
      const v = policyValues(p.spec);
      delete v.name;
      await writer.writePolicy(p.spec, p.id, v);
    } else if (r < 0.58) {
      const p = policies.splice(Math.floor(rand() * policies.length), 1)[0]!;
      await writer.writePolicy(p.spec, p.id, undefined);
    } else if (r < 0.85) {
      const kind = pick<Kind>(['identity', 'service', 'edge-router']);
      await writer.setAttrs(kind, pick(entities[kind]), someAttrs());
    } else if (r < 0.93) {
      await newEntity(pick<Kind>(['identity', 'service', 'edge-router']));
    } else {
      const kind = pick<Kind>(['identity', 'service', 'edge-router']);
      if (entities[kind].length > 2) await writer.deleteEntity(kind, entities[kind].splice(Math.floor(rand() * entities[kind].length), 1)[0]!);
    }
    await opts.afterStep?.();
  }
}
