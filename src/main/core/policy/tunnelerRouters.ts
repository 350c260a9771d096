import type { Ctx } from '../context';
import { DEFAULT_AUTH_POLICY_ID } from '../entities/authPolicies';
import { validationError } from '../errors';
import type { Row } from '../store/db';
import { AccessChanges } from './changes';
import { reclassifyEntity, reindexPolicy } from './policyIndex';
import { EDGE_ROUTER_POLICY as ERP } from './policySpecs';

export const systemPolicyName = (routerId: string) => `edge-router-${routerId}-system`;

/**
 * A tunneler-enabled edge router also acts as an identity: as OpenZiti does, it gets a Router identity with its
 * id and name and a system edge router policy (id = router id) linking that identity to the router. Both go when
 * tunneling is turned off or the router is deleted; renaming the router renames the identity.
 */
export function syncTunnelerRouter(ctx: Ctx, routerId: string, before: Row | undefined): void {
  const store = ctx.core.store;
  const router = store.getSql<Row>('SELECT id, name, is_tunneler_enabled FROM edge_routers WHERE id = ?', routerId);
  const was = !!before?.is_tunneler_enabled;
  const is = !!router?.is_tunneler_enabled;
  if (!was && is) createRouterIdentity(ctx, router!);
  else if (was && !is) removeRouterIdentity(ctx, routerId);
  else if (is && before && before.name !== router!.name) {
    if (store.getSql("SELECT 1 FROM identities WHERE name = ? AND id <> ?", router!.name, routerId)) {
      throw validationError('name', `an identity named ${String(router!.name)} already exists; a tunneler-enabled router needs its own`, router!.name);
    }
    store.runSql("UPDATE identities SET name = ?, updated_at = ? WHERE id = ? AND type_id = 'Router'", router!.name, ctx.core.clock.now().toISOString(), routerId);
  }
}

/** Before an edge router is deleted: its router identity and system policy go with it. */
export function deleteTunnelerRouter(ctx: Ctx, router: Row): void {
  if (router.is_tunneler_enabled) removeRouterIdentity(ctx, router.id as string);
}

function createRouterIdentity(ctx: Ctx, router: Row): void {
  const store = ctx.core.store;
  const now = ctx.core.clock.now().toISOString();
  const id = router.id as string;
  if (!store.getSql('SELECT 1 FROM identities WHERE id = ?', id)) {
    if (store.getSql('SELECT 1 FROM identities WHERE name = ?', router.name)) {
      throw validationError('name', `an identity named ${String(router.name)} already exists; a tunneler-enabled router needs its own`, router.name);
    }
    store.runSql(
      `INSERT INTO identities (id, name, type_id, is_admin, is_default_admin, auth_policy_id, created_at, updated_at)
       VALUES (?, ?, 'Router', 0, 0, ?, ?, ?)`,
      id, router.name, DEFAULT_AUTH_POLICY_ID, now, now,
    );
    const changes = new AccessChanges();
    reclassifyEntity(store, changes, 'identity', id);
    changes.apply(ctx.core);
  }
  store.runSql('DELETE FROM edge_router_policies WHERE id = ?', id);
  store.runSql(
    `INSERT INTO edge_router_policies (id, name, semantic, identity_roles, edge_router_roles, is_system, created_at, updated_at)
     VALUES (?, ?, 'AnyOf', ?, ?, 1, ?, ?)`,
    id, systemPolicyName(id), JSON.stringify([`@${id}`]), JSON.stringify([`@${id}`]), now, now,
  );
  reindexPolicy(ctx.core, ERP, id, undefined, store.getSql<Row>('SELECT * FROM edge_router_policies WHERE id = ?', id));
}

function removeRouterIdentity(ctx: Ctx, routerId: string): void {
  const store = ctx.core.store;
  const policy = store.getSql<Row>('SELECT * FROM edge_router_policies WHERE id = ? AND is_system = 1', routerId);
  if (policy) {
    reindexPolicy(ctx.core, ERP, routerId, policy, undefined);
    store.runSql('DELETE FROM edge_router_policies WHERE id = ?', routerId);
  }
  store.runSql("DELETE FROM identities WHERE id = ? AND type_id = 'Router'", routerId);
}
