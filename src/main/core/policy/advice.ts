import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { identities } from './identities';
import { ref, requireDecoded } from '../entities/resource';
import { services } from './services';
import { classFor, grantsFor, reach, reachCount } from './access';

/**
 * GET /identities/{id}/policy-advice/{serviceId}: whether the identity may dial/bind the service, how many edge
 * routers each side reaches, and the routers they share with their online state. Read from the same class links
 * that session creation uses, so the advice and the outcome agree.
 */
export async function policyAdvice(ctx: Ctx, identityId: string, serviceId: string) {
  requirePermission(ctx.caller, 'identity', 'read');
  requirePermission(ctx.caller, 'service', 'read');
  const store = ctx.core.store;
  const identity = await requireDecoded(store, identities, identityId);
  const service = await requireDecoded(store, services, serviceId);
  const ic = await classFor(ctx.core, 'identity', identityId);
  const sc = await classFor(ctx.core, 'service', serviceId);
  const grant = (await grantsFor(store, ic, [sc])).get(sc);
  const common = reach.commonRouters(ic, sc);
  const routers = await store.allSql<{ id: string; name: string; is_online: number }>(
    `SELECT t.id, t.name, t.is_online FROM edge_routers t WHERE ${common.where} ORDER BY t.name, t.id`,
    ...common.params!,
  );
  return {
    commonRouters: routers.map((r) => ({ ...ref('edge-routers', r.id, r.name), isOnline: !!r.is_online })),
    identity: ref('identities', identityId, identity.name),
    identityId,
    identityRouterCount: await reachCount(store, 'identity_router_access', 'identity_class', ic),
    isBindAllowed: !!grant?.bind,
    isDialAllowed: !!grant?.dial,
    service: ref('services', serviceId, service.name),
    serviceId,
    serviceRouterCount: await reachCount(store, 'service_router_access', 'service_class', sc),
  };
}
