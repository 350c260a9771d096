import type { Core } from '../core';
import { AccessChanges } from './changes';
import { classOf } from './classes';
import { reclassifyEntity } from './policyIndex';

/**
 * What the policy index needs to hear from the resource hooks of identities, services, edge routers and configs.
 * Each runs inside the write's transaction.
 */

const attributesWritten = (op: string, input: Record<string, unknown>) => op === 'create' || input.roleAttributes !== undefined;

export function identityWritten(core: Core, id: string, op: string, input: Record<string, unknown>): void {
  if (!attributesWritten(op, input)) return;
  const changes = new AccessChanges();
  reclassifyEntity(core.store, changes, 'identity', id);
  changes.apply(core);
}

/** A service's class may change, and whoever sees it sees a changed service either way. */
export function serviceWritten(core: Core, id: string, op: string, input: Record<string, unknown>): void {
  const changes = new AccessChanges();
  if (attributesWritten(op, input)) reclassifyEntity(core.store, changes, 'service', id);
  if (op !== 'create') changes.addServiceClassAudience(core.store, [classOf(core.store, 'service', id)]);
  changes.apply(core);
}

/** Before a service goes: the identities that saw it see their list change (its sessions go by foreign key). */
export function serviceDeleting(core: Core, id: string): void {
  const changes = new AccessChanges();
  changes.addServiceClassAudience(core.store, [classOf(core.store, 'service', id)]);
  changes.apply(core);
}

/** (A tunneler-enabled router's identity and system policy follow the router: policy/tunnelerRouters.ts.) */
export function edgeRouterWritten(core: Core, id: string, op: string, input: Record<string, unknown>): void {
  if (!attributesWritten(op, input)) return;
  const changes = new AccessChanges();
  reclassifyEntity(core.store, changes, 'edge-router', id);
  changes.apply(core);
}

/** A config's data changed: services using it and identities overriding with it see changed services. */
export function configWritten(core: Core, configId: string): void {
  const store = core.store;
  const changes = new AccessChanges();
  changes.addServiceClassAudience(
    store,
    store
      .allSql<{ class_id: number }>(
        "SELECT m.class_id FROM service_configs sc JOIN role_class_members m ON m.kind = 'service' AND m.entity_id = sc.service_id WHERE sc.config_id = ?",
        configId,
      )
      .map((r) => r.class_id),
  );
  for (const r of store.allSql<{ identity_id: string }>('SELECT DISTINCT identity_id FROM identity_service_configs WHERE config_id = ?', configId)) {
    changes.identities.add(r.identity_id);
  }
  changes.apply(core);
}
