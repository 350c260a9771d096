import type { Store } from '../store/db';
import { ROLE_KINDS, type RoleKind } from '../kinds';
import { addClassLinks } from './links';

/**
 * Role classes. Entities of a kind with the same role attributes, named by `@id` in the same policies, are matched
 * by exactly the same policies; they share a class, and policy matches and access are kept per class. An entity is
 * (re)classified whenever its attributes or the policies naming it change; emptied classes delete themselves
 * (triggers in migration 003).
 */

export async function classOf(store: Store, kind: RoleKind, entityId: string): Promise<number | undefined> {
  return (await store.getSql<{ class_id: number }>('SELECT class_id FROM role_class_members WHERE kind = ? AND entity_id = ?', kind, entityId))
    ?.class_id;
}

export interface Reclassified {
  from?: number;
  to: number;
}

/**
 * Moves an entity into the class of its current attributes and `@id` references; creates the class if new. `known`:
 * its class as the caller read it in the same transaction (not read again).
 */
export async function classify(store: Store, kind: RoleKind, entityId: string, known?: { from: number | undefined }): Promise<Reclassified> {
  // read together (one round trip on PostgreSQL)
  const [attrRows, refRows, from] = await Promise.all([
    store.allSql<{ attr: string }>('SELECT attr FROM role_attributes WHERE entity_type = ? AND entity_id = ? ORDER BY attr', kind, entityId),
    store.allSql<{ policy_id: string }>(
      "SELECT policy_id FROM policy_side_roles WHERE kind = ? AND role_type = 'id' AND value = ? ORDER BY policy_id",
      kind,
      entityId,
    ),
    known ? known.from : classOf(store, kind, entityId),
  ]);
  const attrs = attrRows.map((r) => r.attr);
  const refs = refRows.map((r) => r.policy_id);
  const key = JSON.stringify([attrs, refs]);
  const to =
    (await store.getSql<{ id: number }>('SELECT id FROM role_classes WHERE kind = ? AND key = ?', kind, key))?.id ??
    (await createClass(store, kind, key, attrs, refs));
  // queued: what follows reads them in order, on PostgreSQL in the same round trip
  if (from === undefined) {
    await store.queueSql('INSERT INTO role_class_members (kind, entity_id, class_id) VALUES (?, ?, ?)', kind, entityId, to);
  } else if (from !== to) {
    await store.queueSql('UPDATE role_class_members SET class_id = ? WHERE kind = ? AND entity_id = ?', to, kind, entityId);
  }
  return { from, to };
}

/** A new class: its attributes, references, the policy sides that match it and the access links that follow. */
async function createClass(store: Store, kind: RoleKind, key: string, attrs: string[], refs: string[]): Promise<number> {
  const id = (await store.getSql<{ id: number }>('INSERT INTO role_classes (kind, key) VALUES (?, ?) RETURNING id', kind, key))!.id;
  const values = store.sql.jsonEach('?', 'e');
  await store.runSql(`INSERT INTO role_class_attrs (class_id, attr) SELECT ?, value FROM ${values}`, id, JSON.stringify(attrs));
  await store.runSql(`INSERT INTO role_class_refs (class_id, policy_id) SELECT ?, value FROM ${values}`, id, JSON.stringify(refs));
  await store.runSql(
    `WITH hits(policy_id, n) AS (
       SELECT policy_id, count(*) FROM policy_side_roles
       WHERE kind = ? AND role_type = 'attr' AND value IN ${store.sql.jsonValues()} GROUP BY policy_id)
     INSERT INTO class_policies (policy_id, kind, class_id)
     SELECT s.policy_id, s.kind, ? FROM policy_sides s LEFT JOIN hits h ON h.policy_id = s.policy_id
     WHERE s.kind = ? AND (s.is_all = 1 OR s.policy_id IN ${store.sql.jsonValues()}
       OR (h.n > 0 AND (s.semantic = 'AnyOf' OR h.n = s.attr_count)))`,
    kind,
    JSON.stringify(attrs),
    id,
    kind,
    JSON.stringify(refs),
  );
  await addClassLinks(store, id, kind);
  return id;
}

/** Records which classes of `kind` a policy side matches (its previous matches must have been removed). */
export async function matchPolicySide(
  store: Store,
  policyId: string,
  kind: RoleKind,
  side: { all: boolean; attrs: string[]; semantic: 'AllOf' | 'AnyOf' },
): Promise<void> {
  const attrs = [...new Set(side.attrs)];
  await store.runSql(
    `INSERT INTO class_policies (policy_id, kind, class_id)
     SELECT ?, ?, c.id FROM role_classes c WHERE c.kind = ? AND (
       ? = 1
       OR c.id IN (SELECT class_id FROM role_class_refs WHERE policy_id = ?)
       OR c.id IN (SELECT class_id FROM role_class_attrs WHERE attr IN ${store.sql.jsonValues()} GROUP BY class_id HAVING count(*) >= ?))`,
    policyId,
    kind,
    kind,
    side.all,
    policyId,
    JSON.stringify(attrs),
    attrs.length === 0 ? Number.MAX_SAFE_INTEGER : side.semantic === 'AnyOf' ? 1 : attrs.length,
  );
}

/**
 * Start-up repair: every row of a kind with role attributes gets its role class (rows of a database written by an
 * older release, or straight into the tables). Weft's own writes classify in their transaction.
 */
export async function classifyAllUnclassified(store: Store): Promise<void> {
  for (const kind of Object.keys(ROLE_KINDS) as RoleKind[]) await classifyUnclassified(store, kind, ROLE_KINDS[kind].table);
}

/** Classes each member of `kind` that is not classified yet (rows written around the resource hooks). */
export async function classifyUnclassified(store: Store, kind: RoleKind, table: string, batch = 1000): Promise<number> {
  let done = 0;
  for (;;) {
    const ids = await store.allSql<{ id: string }>(
      `SELECT t.id FROM ${table} t WHERE NOT EXISTS (SELECT 1 FROM role_class_members m WHERE m.kind = ? AND m.entity_id = t.id) LIMIT ?`,
      kind,
      batch,
    );
    if (!ids.length) return done;
    await store.tx(async () => {
      for (const { id } of ids) await classify(store, kind, id);
    });
    done += ids.length;
  }
}
