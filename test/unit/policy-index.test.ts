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

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'weft-policy-index-'));
  store = new SqliteStore(join(dir, 'weft.db'));
  await store.migrate();
  await seedBaseRows(store);
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

// ---- the naive model -------------------------------------------------------------------------------

async function attrsOf(store: Store, kind: Kind, id: string): Promise<string[]> {
  return JSON.parse((await store.getSql<{ r: string }>(`SELECT role_attributes AS r FROM ${TABLE[kind]} WHERE id = ?`, id))!.r);
}

function matches(roles: string[], semantic: string, id: string, attrs: string[]): boolean {
  if (roles.includes('#all')) return true;
  if (roles.includes(`@${id}`)) return true;
  const wanted = roles.filter((r) => r.startsWith('#')).map((r) => r.slice(1));
  if (!wanted.length) return false;
  return semantic === 'AnyOf' ? wanted.some((a) => attrs.includes(a)) : wanted.every((a) => attrs.includes(a));
}

/** Compares what the policy index answers in `store` with a naive evaluation of every policy against every entity. */
async function check(store: Store): Promise<void> {
  const naiveMembers = async (spec: PolicyTypeSpec, policy: Row, kind: Kind, ids: string[]): Promise<string[]> => {
    const side = spec.sides.find((s) => s.kind === kind)!;
    const roles = JSON.parse(policy[side.column] as string) as string[];
    const out: string[] = [];
    for (const id of ids) if (matches(roles, policy.semantic as string, id, await attrsOf(store, kind, id))) out.push(id);
    return out;
  };
  const all = (table: string): Promise<Row[]> => store.allSql<Row>(`SELECT * FROM ${table} ORDER BY id`);
  const ids = async (kind: Kind) => (await all(TABLE[kind])).map((r) => r.id as string);
  const identityIds = await ids('identity');
  const serviceIds = await ids('service');
  const routerIds = await ids('edge-router');
  const expectedAccess = new Map<string, { dial: boolean; bind: boolean }>();
  for (const p of await all('service_policies')) {
    for (const i of await naiveMembers(SERVICE_POLICY, p, 'identity', identityIds)) {
      for (const s of await naiveMembers(SERVICE_POLICY, p, 'service', serviceIds)) {
        const g = expectedAccess.get(`${i}|${s}`) ?? { dial: false, bind: false };
        if (p.type === 'Dial') g.dial = true;
        else g.bind = true;
        expectedAccess.set(`${i}|${s}`, g);
      }
    }
  }
  const actualAccess = new Map<string, { dial: boolean; bind: boolean }>();
  for (const r of await store.allSql<{ i: string; s: string; dial: number; bind: number }>(
    `SELECT im.entity_id AS i, sm.entity_id AS s, a.dial, a.bind FROM service_access a
     JOIN role_class_members im ON im.class_id = a.identity_class JOIN role_class_members sm ON sm.class_id = a.service_class`,
  )) {
    expect(r.dial >= 0 && r.bind >= 0 && r.dial + r.bind > 0).toBe(true);
    actualAccess.set(`${r.i}|${r.s}`, { dial: r.dial > 0, bind: r.bind > 0 });
  }
  expect(Object.fromEntries([...actualAccess].sort())).toEqual(Object.fromEntries([...expectedAccess].sort()));

  const pairs = async (spec: PolicyTypeSpec, left: Kind, leftIds: string[], rightIds: string[]) => {
    const out = new Set<string>();
    for (const p of await all(spec.table)) {
      for (const l of await naiveMembers(spec, p, left, leftIds))
        for (const r of await naiveMembers(spec, p, 'edge-router', rightIds)) out.add(`${l}|${r}`);
    }
    return [...out].sort();
  };
  const linked = async (table: string, leftColumn: string) =>
    (
      await store.allSql<{ k: string }>(
        `SELECT DISTINCT lm.entity_id || '|' || rm.entity_id AS k FROM ${table} a
     JOIN role_class_members lm ON lm.class_id = a.${leftColumn} JOIN role_class_members rm ON rm.class_id = a.router_class ORDER BY k`,
      )
    ).map((r) => r.k);
  expect(await linked('identity_router_access', 'identity_class')).toEqual(await pairs(EDGE_ROUTER_POLICY, 'identity', identityIds, routerIds));
  expect(await linked('service_router_access', 'service_class')).toEqual(await pairs(SERVICE_EDGE_ROUTER_POLICY, 'service', serviceIds, routerIds));

  // policy members as listed (class matches) agree with the naive evaluation
  for (const spec of [SERVICE_POLICY, EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY]) {
    for (const p of await all(spec.table)) {
      for (const side of spec.sides) {
        if (side.kind === 'posture-check') continue;
        const kind = side.kind as Kind;
        const listed = (
          await store.allSql<{ id: string }>(
            `SELECT m.entity_id AS id FROM class_policies cp JOIN role_class_members m ON m.class_id = cp.class_id
           WHERE cp.policy_id = ? AND cp.kind = ? ORDER BY m.entity_id`,
            p.id,
            kind,
          )
        ).map((r) => r.id);
        expect(listed, `${p.id} ${kind}`).toEqual((await naiveMembers(spec, p, kind, await ids(kind))).sort());
      }
    }
  }
  // every entity has a class, every class has members
  for (const kind of ['identity', 'service', 'edge-router'] as Kind[])
    for (const id of await ids(kind)) expect(await classOf(store, kind, id)).toBeDefined();
  expect((await store.getSql<{ n: number }>('SELECT count(*) AS n FROM role_classes WHERE member_count <= 0'))!.n).toBe(0);
}

describe('policy index', () => {
  it('stays equal to a naive evaluation through random policy and attribute changes', async () => {
    await randomChanges(new PolicyWriter(store), { seed: 20240611, steps: 250, prefix: '', afterStep: () => check(store) });
  });

  it('stays equal to a naive evaluation while two nodes write to one PostgreSQL database at once', async () => {
    const server = await startPostgres();
    const shared = new PostgresStore(await server.createDatabase());
    try {
      await shared.migrate();
      await seedBaseRows(shared);
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
      expect((await shared.getSql<{ n: number }>('SELECT count(*) AS n FROM service_policies'))!.n).toBeGreaterThan(0);
      await check(shared);
    } finally {
      await shared.close();
      await server.stop();
    }
  });
});
