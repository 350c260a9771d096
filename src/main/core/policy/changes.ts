import type { Core } from '../core';
import type { Store } from '../store/db';

/**
 * What a write changed about identities' services, collected while the write runs and applied at its end:
 * `lastChangeAt` moves for the identities (or whole identity classes) concerned, and their sessions that
 * lost Dial/Bind access are deleted.
 */
export class AccessChanges {
  readonly identityClasses = new Set<number>();
  readonly identities = new Set<string>();
  readonly services = new Set<string>();

  /** Identity classes with access to any of these service classes. */
  async addServiceClassAudience(store: Store, serviceClasses: Array<number | undefined>): Promise<void> {
    const ids = serviceClasses.filter((c): c is number => c !== undefined);
    if (!ids.length) return;
    for (const r of await store.allSql<{ c: number }>(
      `SELECT DISTINCT identity_class AS c FROM service_access WHERE service_class IN ${store.sql.jsonValues('?', 'integer')}`,
      JSON.stringify(ids),
    ))
      this.identityClasses.add(r.c);
  }

  /** Identity classes matched by service policies whose posture-check side matches these posture check classes. */
  async addPostureClassAudience(store: Store, postureClasses: Array<number | undefined>): Promise<void> {
    const ids = postureClasses.filter((c): c is number => c !== undefined);
    if (!ids.length) return;
    for (const r of await store.allSql<{ c: number }>(
      `SELECT DISTINCT a.class_id AS c FROM class_policies pc
       JOIN class_policies a ON a.policy_id = pc.policy_id AND a.kind = 'identity'
       WHERE pc.class_id IN ${store.sql.jsonValues('?', 'integer')}`,
      JSON.stringify(ids),
    ))
      this.identityClasses.add(r.c);
  }

  /** Every identity class (a change that touches everyone's view, e.g. the first posture check). */
  async addEveryone(store: Store): Promise<void> {
    for (const r of await store.allSql<{ id: number }>("SELECT id FROM role_classes WHERE kind = 'identity'")) this.identityClasses.add(r.id);
  }

  async apply(core: Core): Promise<void> {
    if (!this.identityClasses.size && !this.identities.size && !this.services.size) return;
    const store = core.store;
    const now = core.clock.now().toISOString();
    // queued (their results are not needed): on PostgreSQL they go out with the statements after them
    if (this.identityClasses.size) {
      await store.queueSql(
        `INSERT INTO class_service_changes (class_id, changed_at)
         SELECT CAST(value AS BIGINT), ? FROM ${store.sql.jsonEach('?', 'e')} WHERE CAST(value AS BIGINT) IN (SELECT id FROM role_classes) AND true
         ON CONFLICT (class_id) DO UPDATE SET changed_at = excluded.changed_at`,
        now,
        JSON.stringify([...this.identityClasses]),
      );
    }
    if (this.identities.size) {
      await store.queueSql(
        `INSERT INTO identity_service_changes (identity_id, changed_at)
         SELECT value, ? FROM ${store.sql.jsonEach('?', 'e')} WHERE value IN (SELECT id FROM identities) AND true
         ON CONFLICT (identity_id) DO UPDATE SET changed_at = excluded.changed_at`,
        now,
        JSON.stringify([...this.identities]),
      );
    }
    await revokeUnpermittedSessions(store, this);
  }
}

/** A session whose identity no longer has its kind of access to its service (correlated on alias `s`). */
const UNPERMITTED = `NOT EXISTS (
  SELECT 1 FROM role_class_members im
  JOIN role_class_members sm ON sm.kind = 'service' AND sm.entity_id = s.service_id
  JOIN service_access a ON a.identity_class = im.class_id AND a.service_class = sm.class_id
  WHERE im.kind = 'identity' AND im.entity_id = s.identity_id AND (CASE s.type WHEN 'Dial' THEN a.dial ELSE a.bind END) > 0)`;

/**
 * Deletes the sessions in scope that lost their access. Each statement walks sessions (by index where the scope
 * names identities or services), never the much larger class memberships.
 */
async function revokeUnpermittedSessions(store: Store, scope: AccessChanges): Promise<void> {
  if (!(await store.getSql('SELECT 1 FROM sessions LIMIT 1'))) return;
  const del = async (where: string, values: Iterable<unknown>) => {
    const list = [...values];
    if (list.length) await store.queueSql(`DELETE FROM sessions AS s WHERE ${where} AND ${UNPERMITTED}`, JSON.stringify(list));
  };
  await del(`s.identity_id IN ${store.sql.jsonValues()}`, scope.identities);
  await del(`s.service_id IN ${store.sql.jsonValues()}`, scope.services);
  await del(
    `(SELECT class_id FROM role_class_members WHERE kind = 'identity' AND entity_id = s.identity_id) IN ${store.sql.jsonValues('?', 'integer')}`,
    scope.identityClasses,
  );
}

/** `lastChangeAt` of the service list an API session sees: it starts at the session's creation. */
export async function lastServiceChange(store: Store, session: { identity_id: string; created_at: string }): Promise<string> {
  const row = await store.getSql<{ i: string | null; c: string | null }>(
    `SELECT (SELECT changed_at FROM identity_service_changes WHERE identity_id = ?) AS i,
            (SELECT ch.changed_at FROM role_class_members m JOIN class_service_changes ch ON ch.class_id = m.class_id
             WHERE m.kind = 'identity' AND m.entity_id = ?) AS c`,
    session.identity_id,
    session.identity_id,
  );
  return [session.created_at, row?.i, row?.c]
    .filter((v): v is string => !!v)
    .sort()
    .at(-1)!;
}
