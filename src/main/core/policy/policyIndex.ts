import type { Core } from '../core';
import type { Row, Store } from '../store/db';
import { AccessChanges } from './changes';
import { metersOf } from '../meters';
import { classify, classOf, matchPolicySide } from './classes';
import { ROLE_KINDS, type PolicyType, type RoleKind } from '../kinds';
import { applyPolicyLinks, LINKS } from './links';
import { parseRoles, type ParsedRoles } from '../query/roles';
import { decodeRow, json, rowShape } from '../store/rows';

/** A side of a policy type: the API field, its column (JSON array of roles) and the kind it selects. */
export interface PolicySide {
  field: string;
  column: keyof typeof POLICY_ROLES;
  kind: RoleKind;
}

export interface PolicyTypeSpec {
  type: PolicyType;
  table: string;
  sides: PolicySide[];
}

/** The role columns of the policy tables (each has two or three of them). */
const POLICY_ROLES = rowShape({
  identity_roles: json<string[]>('?'),
  service_roles: json<string[]>('?'),
  edge_router_roles: json<string[]>('?'),
  posture_check_roles: json<string[]>('?'),
});

function sidesOf(spec: PolicyTypeSpec, row: Row): Array<{ kind: RoleKind; roles: ParsedRoles; semantic: 'AllOf' | 'AnyOf' }> {
  const roles = decodeRow(POLICY_ROLES, row);
  return spec.sides.map((s) => ({
    kind: s.kind,
    roles: parseRoles(roles[s.column] ?? [], s.field),
    semantic: row.semantic === 'AnyOf' ? 'AnyOf' : 'AllOf',
  }));
}

/**
 * Brings the policy index in step with a policy write: `before` is the stored row before the write (absent on
 * create), `after` the row after it (absent on delete). Only what the policy touches is recomputed: its own class
 * matches, its contribution to the class links, and the classes of entities it starts or stops naming by `@id`.
 */
export function reindexPolicy(core: Core, spec: PolicyTypeSpec, id: string, before: Row | undefined, after: Row | undefined): Promise<void> {
  return metersOf(core).indexing('policies', () => reindex(core, spec, id, before, after));
}

async function reindex(core: Core, spec: PolicyTypeSpec, id: string, before: Row | undefined, after: Row | undefined): Promise<void> {
  const store = core.store;
  const link = LINKS[spec.type];
  const changes = new AccessChanges();
  const grantsServices = spec.type === 'service-policy';
  if (before) {
    if (grantsServices) await collectIdentityClasses(store, id, changes);
    await applyPolicyLinks(store, link, id, before, -1);
    await store.runSql('DELETE FROM class_policies WHERE policy_id = ?', id);
    await store.runSql('DELETE FROM policy_sides WHERE policy_id = ?', id);
    await store.runSql('DELETE FROM policy_side_roles WHERE policy_id = ?', id);
  }
  const oldSides = before ? sidesOf(spec, before) : [];
  const newSides = after ? sidesOf(spec, after) : [];
  for (const side of newSides) {
    const insert = (roleType: 'attr' | 'id', values: string[]) =>
      store.runSql(
        `INSERT INTO policy_side_roles (kind, role_type, value, policy_id) SELECT ?, ?, value, ? FROM ${store.sql.jsonEach('?', 'e')}
         WHERE true ON CONFLICT DO NOTHING`,
        side.kind,
        roleType,
        id,
        JSON.stringify(values),
      );
    await insert('attr', side.roles.attrs);
    await insert('id', side.roles.ids);
  }
  // entities this policy starts or stops naming by @id change class; the policy's own matches do not exist yet,
  // so the classes created here do not count it (it is added to every class below, once)
  for (const kind of new Set(spec.sides.map((s) => s.kind))) {
    const ids = (sides: typeof oldSides) => new Set(sides.filter((s) => s.kind === kind).flatMap((s) => s.roles.ids));
    const was = ids(oldSides);
    const is = ids(newSides);
    const changed = [...was].filter((x) => !is.has(x)).concat([...is].filter((x) => !was.has(x)));
    for (const entityId of changed) await reclassifyEntity(store, changes, kind, entityId);
  }
  for (const side of newSides) {
    await store.runSql(
      'INSERT INTO policy_sides (policy_id, kind, policy_type, semantic, is_all, attr_count) VALUES (?, ?, ?, ?, ?, ?)',
      id,
      side.kind,
      spec.type,
      side.semantic,
      side.roles.all,
      new Set(side.roles.attrs).size,
    );
    await matchPolicySide(store, id, side.kind, { all: side.roles.all, attrs: side.roles.attrs, semantic: side.semantic });
  }
  if (after) {
    await applyPolicyLinks(store, link, id, after, 1);
    if (grantsServices) await collectIdentityClasses(store, id, changes);
  }
  await changes.apply(core);
}

async function collectIdentityClasses(store: Store, policyId: string, changes: AccessChanges): Promise<void> {
  for (const r of await store.allSql<{ class_id: number }>(
    "SELECT class_id FROM class_policies WHERE policy_id = ? AND kind = 'identity'",
    policyId,
  )) {
    changes.identityClasses.add(r.class_id);
  }
}

/**
 * Re-classes one entity (its role attributes or the policies naming it changed) and records the consequences:
 * an identity's own view changes; a service's audience before and after changes; a posture check changes the
 * posture queries of the identities its policies reach.
 */
export async function reclassifyEntity(store: Store, changes: AccessChanges, kind: RoleKind, entityId: string): Promise<void> {
  const [exists, before] = await Promise.all([
    store.getSql(`SELECT 1 FROM ${ROLE_KINDS[kind].table} WHERE id = ?`, entityId),
    classOf(store, kind, entityId),
  ]);
  if (!exists) return;
  const audienceBefore = new AccessChanges();
  if (kind === 'service') await audienceBefore.addServiceClassAudience(store, [before]);
  if (kind === 'posture-check') await audienceBefore.addPostureClassAudience(store, [before]);
  const { from, to } = await classify(store, kind, entityId, { from: before });
  if (from === to) return;
  // a new identity, router or posture check changes nobody else's view (and has no sessions yet)
  if (from === undefined && kind !== 'service') return;
  for (const c of audienceBefore.identityClasses) changes.identityClasses.add(c);
  if (kind === 'identity') changes.identities.add(entityId);
  if (kind === 'service') {
    await changes.addServiceClassAudience(store, [to]);
    changes.services.add(entityId);
  }
  if (kind === 'posture-check') await changes.addPostureClassAudience(store, [to]);
}

/** An entity's role attributes were written (create or update): re-class it and apply what follows. */
export function roleAttributesChanged(core: Core, kind: RoleKind, entityId: string): Promise<void> {
  return metersOf(core).indexing('entities', async () => {
    const changes = new AccessChanges();
    await reclassifyEntity(core.store, changes, kind, entityId);
    await changes.apply(core);
  });
}

/** The class of an entity, classifying it first if it was written around the resource hooks. */
export async function ensureClass(core: Core, kind: RoleKind, entityId: string): Promise<number | undefined> {
  const known = await classOf(core.store, kind, entityId);
  if (known !== undefined) return known;
  const exists = async () => !!(await core.store.getSql(`SELECT 1 FROM ${ROLE_KINDS[kind].table} WHERE id = ?`, entityId));
  if (!(await exists())) return undefined;
  // and again with the write: an entity deleted meanwhile gets no class membership (nothing would remove it)
  return core.store.tx(async () => {
    if (!(await exists())) return undefined;
    return (await classOf(core.store, kind, entityId)) ?? (await classify(core.store, kind, entityId)).to;
  });
}
