import type { Core } from '../core';
import { AccessChanges } from './changes';
import { classOf } from './classes';

/**
 * What the policy index needs to hear from the resource hooks of services and configs beyond the role-attribute
 * changes the generic write path reports (entities/resource.ts).
 * Each runs inside the write's transaction.
 */

/** Whoever sees a service sees a changed service (its class, if its attributes changed, is the write path's). */
export async function serviceWritten(core: Core, id: string, op: string): Promise<void> {
  if (op === 'create') return;
  const changes = new AccessChanges();
  await changes.addServiceClassAudience(core.store, [await classOf(core.store, 'service', id)]);
  await changes.apply(core);
}

/** Before a service goes: the identities that saw it see their list change (its sessions go by foreign key). */
export async function serviceDeleting(core: Core, id: string): Promise<void> {
  const changes = new AccessChanges();
  await changes.addServiceClassAudience(core.store, [await classOf(core.store, 'service', id)]);
  await changes.apply(core);
}

/** A config's data changed: services using it and identities overriding with it see changed services. */
export async function configWritten(core: Core, configId: string): Promise<void> {
  const store = core.store;
  const changes = new AccessChanges();
  await changes.addServiceClassAudience(
    store,
    (
      await store.allSql<{ class_id: number }>(
        "SELECT m.class_id FROM service_configs sc JOIN role_class_members m ON m.kind = 'service' AND m.entity_id = sc.service_id WHERE sc.config_id = ?",
        configId,
      )
    ).map((r) => r.class_id),
  );
  for (const r of await store.allSql<{ identity_id: string }>(
    'SELECT DISTINCT identity_id FROM identity_service_configs WHERE config_id = ?',
    configId,
  )) {
    changes.identities.add(r.identity_id);
  }
  await changes.apply(core);
}
