import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { classOf } from '../../src/main/core/policy/classes';
import type { PolicyTypeSpec } from '../../src/main/core/policy/policyIndex';
import { EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY, SERVICE_POLICY } from '../../src/main/core/policy/policySpecs';
import type { Row, Store } from '../../src/main/core/store/db';
import { PostgresStore } from '../../src/main/core/store/postgres';
import { SqliteStore } from '../../src/main/core/store/sqlite';
import { PolicyWriter, randomChanges, seedBaseRows, TABLE, type Kind } from '../support/policyModel';
import { startPostgres } from '../support/postgres';

/**
 * The policy index is maintained incrementally (class matches, class links with counts, @id re-classing).
 * This test drives it through a long random sequence of policy and attribute changes and, after each step,
 * compares what it answers with a naive evaluation of every policy against every entity.
 */

let dir: string;
let store: Store;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'weft-policy-index-'));
  store = new SqliteStore(join(dir, 'weft.db'));
  store.migrate();
  seedBaseRows(store);
});
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

// ---- the naive model -------------------------------------------------------------------------------

function attrsOf(store: Store, kind: Kind, id: string): string[] {
  return JSON.parse(store.getSql<{ r: string }>(`SELECT role_attributes AS r FROM ${TABLE[kind]} WHERE id = ?`, id)!.r);
}

function matches(roles: string[], semantic: string, id: string, attrs: string[]): boolean {
  if (roles.includes('#all')) return true;
  if (roles.includes(`@${id}`)) return true;
  const wanted = roles.filter((r) => r.startsWith('#')).map((r) => r.slice(1));
  if (!wanted.length) return false;
  return semantic === 'AnyOf' ? wanted.some((a) => attrs.includes(a)) : wanted.every((a) => attrs.includes(a));
}

/** Compares what the policy index answers in `store` with a naive evaluation of every policy against every entity. */
function check(store: Store): void {
  const naiveMembers = (spec: PolicyTypeSpec, policy: Row, kind: Kind, ids: string[]): string[] => {
    const side = spec.sides.find((s) => s.kind === kind)!;
    const roles = JSON.parse(policy[side.column] as string) as string[];
    return ids.filter((id) => matches(roles, policy.semantic as string, id, attrsOf(store, kind, id)));
  };
  const all = (table: string): Row[] => store.allSql<Row>(`SELECT * FROM ${table} ORDER BY id`);
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
    randomChanges(new PolicyWriter(store), { seed: 20240611, steps: 250, prefix: '', afterStep: () => check(store) });
  });

  it('stays equal to a naive evaluation while two nodes write to one PostgreSQL database at once', async () => {
    const server = await startPostgres();
    const shared = new PostgresStore(await server.createDatabase());
    try {
      shared.migrate();
      seedBaseRows(shared);
      // two processes, each with its own connection, writing random changes at the same time; attributes are shared
      const writer = (seed: number, prefix: string) =>
        new Promise<number | null>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            ['--import', 'tsx', join(import.meta.dirname, '..', 'support', 'policyWriterMain.ts'), shared.url, String(seed), '150', prefix],
            {
              stdio: ['ignore', 'ignore', 'inherit'],
            },
          );
          child.once('error', reject);
          child.once('exit', resolve);
        });
      expect(await Promise.all([writer(7, 'x'), writer(11, 'y')])).toEqual([0, 0]);
      expect(shared.getSql<{ n: number }>('SELECT count(*) AS n FROM service_policies')!.n).toBeGreaterThan(0);
      check(shared);
    } finally {
      shared.close();
      await server.stop();
    }
  });
});
