import type { Ctx } from '../context';
import { DEFAULT_AUTH_POLICY_ID } from '../entities/authPolicies';
import { edgeRouterPolicies } from './edgeRouterPolicies';
import { identities } from './identities';
import { applyCreate, applyDelete, applyUpdate, findRow } from '../entities/resource';
import { validationError } from '../errors';
import type { Row } from '../store/db';
import { getRow, rowShape, selectList, type Decoded } from '../store/rows';

const ROUTER = rowShape({ id: 'string', name: 'string', is_tunneler_enabled: 'bool' });

export const systemPolicyName = (routerId: string) => `edge-router-${routerId}-system`;

/**
 * A tunneler-enabled edge router also acts as an identity: as OpenZiti does, it gets a Router identity with its
 * id and name and a system edge router policy (id = router id) linking that identity to the router. Both go when
 * tunneling is turned off or the router is deleted; renaming the router renames the identity. All of these are
 * writes of the system through the identities' and edge router policies' resource declarations, so role classes and
 * the policy index follow in the router write's transaction.
 */
export async function syncTunnelerRouter(ctx: Ctx, routerId: string, before: Row | undefined): Promise<void> {
  const store = ctx.core.store;
  const router = await getRow(store, ROUTER, `SELECT ${selectList(ROUTER)} FROM edge_routers WHERE id = ?`, routerId);
  const was = !!before?.is_tunneler_enabled;
  const is = !!router?.is_tunneler_enabled;
  if (!was && is) await createRouterIdentity(ctx, router!);
  else if (was && !is) await removeRouterIdentity(ctx, routerId);
  else if (is && before && before.name !== router!.name) {
    if (await store.getSql('SELECT 1 FROM identities WHERE name = ? AND id <> ?', router!.name, routerId)) {
      throw validationError(
        'name',
        `an identity named ${String(router!.name)} already exists; a tunneler-enabled router needs its own`,
        router!.name,
      );
    }
    if (await routerIdentity(ctx, routerId)) await applyUpdate(ctx.core.system, identities, routerId, { name: router!.name }, 'patch');
  }
}

/** Before an edge router is deleted: its router identity and system policy go with it. */
export async function deleteTunnelerRouter(ctx: Ctx, router: { id: string; is_tunneler_enabled: unknown }): Promise<void> {
  if (router.is_tunneler_enabled) await removeRouterIdentity(ctx, router.id);
}

async function createRouterIdentity(ctx: Ctx, router: Decoded<typeof ROUTER>): Promise<void> {
  const store = ctx.core.store;
  const id = router.id;
  if (!(await findRow(store, identities, id))) {
    if (await store.getSql('SELECT 1 FROM identities WHERE name = ?', router.name)) {
      throw validationError('name', `an identity named ${String(router.name)} already exists; a tunneler-enabled router needs its own`, router.name);
    }
    await applyCreate(
      ctx.core.system,
      identities,
      { name: router.name, type: 'Router', isAdmin: false, authPolicyId: DEFAULT_AUTH_POLICY_ID },
      { id },
    );
  }
  // a system policy left behind under this id is replaced
  if (await findRow(store, edgeRouterPolicies, id)) await applyDelete(ctx.core.system, edgeRouterPolicies, id);
  await applyCreate(
    ctx.core.system,
    edgeRouterPolicies,
    { name: systemPolicyName(id), semantic: 'AnyOf', identityRoles: [`@${id}`], edgeRouterRoles: [`@${id}`] },
    { id, columns: { is_system: 1 } },
  );
}

async function removeRouterIdentity(ctx: Ctx, routerId: string): Promise<void> {
  const store = ctx.core.store;
  if (await store.getSql('SELECT 1 FROM edge_router_policies WHERE id = ? AND is_system = 1', routerId)) {
    await applyDelete(ctx.core.system, edgeRouterPolicies, routerId);
  }
  if (await routerIdentity(ctx, routerId)) await applyDelete(ctx.core.system, identities, routerId);
}

const routerIdentity = async (ctx: Ctx, id: string) =>
  !!(await ctx.core.store.getSql("SELECT 1 FROM identities WHERE id = ? AND type_id = 'Router'", id));
