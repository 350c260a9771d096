import type { Store } from '../store/db';
import type { RoleKind } from '../kinds';
import type { PolicyType } from '../kinds';

/**
 * The class-to-class access each policy type grants, counted in contributing policies:
 * service policies link identity classes to service classes (Dial and Bind counted apart), edge router policies
 * identity classes to router classes, service edge router policies service classes to router classes.
 * All SQL names here are trusted constants.
 */
export interface LinkSpec {
  table: string;
  policyType: PolicyType;
  policyTable: string;
  left: { kind: RoleKind; column: string };
  right: { kind: RoleKind; column: string };
  /** count columns and the policy condition (over alias p) that makes a policy count in each */
  counts: Array<{ column: string; when: (policy: Record<string, unknown>) => boolean; sql: string }>;
}

export const LINKS: Record<PolicyType, LinkSpec> = {
  'service-policy': {
    table: 'service_access',
    policyType: 'service-policy',
    policyTable: 'service_policies',
    left: { kind: 'identity', column: 'identity_class' },
    right: { kind: 'service', column: 'service_class' },
    counts: [
      { column: 'dial', when: (p) => p.type === 'Dial', sql: "p.type = 'Dial'" },
      { column: 'bind', when: (p) => p.type === 'Bind', sql: "p.type = 'Bind'" },
    ],
  },
  'edge-router-policy': {
    table: 'identity_router_access',
    policyType: 'edge-router-policy',
    policyTable: 'edge_router_policies',
    left: { kind: 'identity', column: 'identity_class' },
    right: { kind: 'edge-router', column: 'router_class' },
    counts: [{ column: 'n', when: () => true, sql: '1' }],
  },
  'service-edge-router-policy': {
    table: 'service_router_access',
    policyType: 'service-edge-router-policy',
    policyTable: 'service_edge_router_policies',
    left: { kind: 'service', column: 'service_class' },
    right: { kind: 'edge-router', column: 'router_class' },
    counts: [{ column: 'n', when: () => true, sql: '1' }],
  },
};

/**
 * Adds (sign 1) or removes (sign -1) one policy's contribution: every pair of its left and right classes,
 * as currently recorded in class_policies. `policy` is the policy row the contribution was computed from.
 */
export async function applyPolicyLinks(store: Store, spec: LinkSpec, policyId: string, policy: Record<string, unknown>, sign: 1 | -1): Promise<void> {
  const weights = spec.counts.map((c) => (c.when(policy) ? sign : 0));
  if (weights.every((w) => w === 0)) return;
  const { table, left, right, counts } = spec;
  const cols = counts.map((c) => c.column);
  await store.runSql(
    `INSERT INTO ${table} (${left.column}, ${right.column}, ${cols.join(', ')})
     SELECT a.class_id, b.class_id, ${cols.map(() => '?').join(', ')}
     FROM class_policies a JOIN class_policies b ON b.policy_id = a.policy_id AND b.kind = ?
     WHERE a.policy_id = ? AND a.kind = ?
     ON CONFLICT (${left.column}, ${right.column}) DO UPDATE SET ${cols.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', ')}`,
    ...weights,
    right.kind,
    policyId,
    left.kind,
  );
  if (sign < 0) {
    await store.runSql(
      `DELETE FROM ${table} WHERE ${left.column} IN (SELECT class_id FROM class_policies WHERE policy_id = ? AND kind = ?)
         AND ${cols.map((c) => `${c} <= 0`).join(' AND ')}`,
      policyId,
      left.kind,
    );
  }
}

/** Computes every link of a class that has just been created (it has none yet) from its matched policies. */
export async function addClassLinks(store: Store, classId: number, kind: RoleKind): Promise<void> {
  for (const spec of Object.values(LINKS)) {
    const mine = spec.left.kind === kind ? spec.left : spec.right.kind === kind ? spec.right : undefined;
    if (!mine) continue;
    const other = mine === spec.left ? spec.right : spec.left;
    const cols = spec.counts.map((c) => c.column);
    const pair = mine === spec.left ? '?, b.class_id' : 'b.class_id, ?';
    await store.runSql(
      `INSERT INTO ${spec.table} (${spec.left.column}, ${spec.right.column}, ${cols.join(', ')})
       SELECT ${pair}, ${spec.counts.map((c) => `sum(${store.sql.asInt(c.sql)})`).join(', ')}
       FROM class_policies a
       JOIN ${spec.policyTable} p ON p.id = a.policy_id
       JOIN class_policies b ON b.policy_id = a.policy_id AND b.kind = ?
       WHERE a.class_id = ?
       GROUP BY b.class_id`,
      classId,
      other.kind,
      classId,
    );
  }
}
