import type { Core } from '../core';
import { isDisabled } from '../auth/index';
import { allRows, rowShape } from '../store/rows';
import { authorizeApiSession, authorizeServiceSession, checkSessionPosture, DataPlaneRefusal, type ChannelCaller, type SessionGrant } from './access';
import {
  addRouterTerminator,
  decodePeerData,
  encodePeerData,
  removeRouterTerminator,
  updateRouterTerminator,
  type RouterTerminator,
  type TerminatorBind,
} from './terminators';

/**
 * What a stock router asks for an SDK (a Bind's terminator, a Dial's circuit) names the SDK by its API session token,
 * the fingerprints of the certificates it presented and its Dial/Bind session token. The controller checks all of it
 * itself, as for its own router's SDKs: the router's word on who is calling is never taken.
 */
export interface RouterSdkRequest {
  apiSessionToken: string;
  sessionToken: string;
  fingerprints: readonly string[];
}

/**
 * The SDK's API session and certificate, its session of the given type, posture, and that its identity and the
 * service may use this router (edge router and service edge router policies, as OpenZiti's
 * verifyIdentityEdgeRouterAccess / the path's router). Throws DataPlaneRefusal with the reason.
 */
export async function authorizeRouterRequest(
  core: Core,
  routerId: string,
  req: RouterSdkRequest,
  type: 'Dial' | 'Bind',
): Promise<{ caller: ChannelCaller; grant: SessionGrant }> {
  const caller = await authorizeApiSession(core, req.apiSessionToken, req.fingerprints);
  const grant = await authorizeServiceSession(core, caller, req.sessionToken, type);
  await checkSessionPosture(core, caller, grant);
  await checkRouterAccess(core, routerId, caller.identityId, grant);
  return { caller, grant };
}

/** That an identity and a service may use a router (edge router and service edge router policies). */
async function checkRouterAccess(core: Core, routerId: string, identityId: string, service: { serviceId: string; serviceName: string }) {
  const allowed = await core.store.getSql(
    `SELECT 1 FROM role_class_members r
     JOIN identity_router_access ia ON ia.router_class = r.class_id
     JOIN role_class_members i ON i.class_id = ia.identity_class AND i.kind = 'identity' AND i.entity_id = ?
     JOIN service_router_access sa ON sa.router_class = r.class_id
     JOIN role_class_members s ON s.class_id = sa.service_class AND s.kind = 'service' AND s.entity_id = ?
     WHERE r.kind = 'edge-router' AND r.entity_id = ? LIMIT 1`,
    identityId,
    service.serviceId,
    routerId,
  );
  if (!allowed) throw new DataPlaneRefusal(`the identity may not use this edge router for service ${service.serviceName}`);
}

const TUNNEL_SERVICE = rowShape({ id: 'string', name: 'string', encryption_required: 'bool' });
const ROUTER_IDENTITY = rowShape({ name: 'string', disabled: 'bool', disabled_until: 'string?' });

/**
 * A tunneler-enabled stock router hosting or dialing a service itself (its tunnel binding): the router's own identity
 * (same id, created with the router) must exist and be enabled, hold a Bind or Dial policy for the service, and the
 * identity and service may use this router — as OpenZiti's verifyEdgeRouterServiceBindAccess / tunnel circuit checks.
 * The service is named by id (terminators) or name (circuits).
 */
export async function authorizeRouterTunnel(
  core: Core,
  routerId: string,
  service: { id: string } | { name: string },
  type: 'Dial' | 'Bind',
): Promise<{ caller: ChannelCaller; grant: SessionGrant }> {
  const byId = 'id' in service;
  const [row] = await allRows(
    core.store,
    TUNNEL_SERVICE,
    `SELECT id, name, encryption_required FROM services WHERE ${byId ? 'id' : 'name'} = ?`,
    byId ? service.id : service.name,
  );
  if (!row) throw new DataPlaneRefusal(`service ${byId ? service.id : service.name} not found`);
  const [identity] = await allRows(
    core.store,
    ROUTER_IDENTITY,
    `SELECT name, disabled, disabled_until FROM identities WHERE id = ? AND type_id = 'Router'`,
    routerId,
  );
  if (!identity) throw new DataPlaneRefusal('the router is not tunneler-enabled');
  if (isDisabled(identity, core.clock.now())) throw new DataPlaneRefusal("the router's identity is disabled");
  const allowed = await core.store.getSql(
    `SELECT 1 FROM role_class_members i
     JOIN service_access a ON a.identity_class = i.class_id AND a.${type === 'Bind' ? 'bind' : 'dial'} > 0
     JOIN role_class_members s ON s.class_id = a.service_class AND s.kind = 'service' AND s.entity_id = ?
     WHERE i.kind = 'identity' AND i.entity_id = ? LIMIT 1`,
    row.id,
    routerId,
  );
  if (!allowed) throw new DataPlaneRefusal(`the router's identity has no ${type} policy for service ${row.name}`);
  const grant: SessionGrant = { sessionId: '', serviceId: row.id, serviceName: row.name, encryptionRequired: row.encryption_required };
  await checkRouterAccess(core, routerId, routerId, grant);
  // the router's own identity, no API session (OpenZiti's tunnel requests carry none in the data model's mode)
  return { caller: { identityId: routerId, identityName: identity.name, apiSessionId: '', apiSessionToken: '' }, grant };
}

/** A terminator a circuit can end at, as the controller picks among them. */
export interface TerminatorChoice {
  id: string;
  routerId: string;
  binding: string;
  address: string;
  identity: string;
  /** the hosting identity ('' when unknown) */
  hostId: string;
  cost: number;
  precedence: 'default' | 'required' | 'failed';
  /** what the host bound with for its dialers (its public key), a stock router's SDK terminator's */
  peerData: Map<number, Buffer>;
}

const TERMINATOR = rowShape({
  id: 'string',
  router_id: 'string',
  binding: 'string',
  address: 'string',
  identity: 'string',
  host_id: 'string?',
  cost: 'int',
  precedence: 'string',
  peer_data: 'string',
});
/** OpenZiti's terminator precedences, best first: what circuits pick by before cost. */
export const PRECEDENCE_RANK = { required: 0, default: 1, failed: 2 } as const;

/**
 * The terminators of a service a circuit may end at, best first: those of the given instance when one is asked
 * for, required before default before failed (OpenZiti's precedences), cheaper first, ties in random order
 * (spreading circuits as OpenZiti's smartrouting does among equals).
 */
export async function terminatorChoices(core: Core, serviceId: string, instance: string): Promise<TerminatorChoice[]> {
  const rows = await allRows(
    core.store,
    TERMINATOR,
    `SELECT id, router_id, binding, address, identity, host_id, cost, precedence, peer_data FROM terminators
      WHERE service_id = ?${instance ? ' AND identity = ?' : ''}`,
    ...(instance ? [serviceId, instance] : [serviceId]),
  );
  const keyed = rows.map((r) => ({
    choice: {
      id: r.id,
      routerId: r.router_id,
      binding: r.binding,
      address: r.address,
      identity: r.identity,
      hostId: r.host_id ?? '',
      cost: r.cost,
      precedence: (r.precedence in PRECEDENCE_RANK ? r.precedence : 'default') as TerminatorChoice['precedence'],
      peerData: decodePeerData(r.peer_data),
    },
    tie: Math.random(),
  }));
  keyed.sort((a, b) => PRECEDENCE_RANK[a.choice.precedence] - PRECEDENCE_RANK[b.choice.precedence] || a.choice.cost - b.choice.cost || a.tie - b.tie);
  return keyed.map((k) => k.choice);
}

/**
 * A stock router's edge listeners, from its ClientHello (protocol -> advertised URL): what sessions and the edge
 * router list offer SDKs (`supportedProtocols`, `hostname`), as OpenZiti's controller records them.
 */
export async function recordRouterListeners(core: Core, routerId: string, hostname: string, protocols: Record<string, string>): Promise<void> {
  await core.store.runSql(
    `UPDATE edge_routers SET hostname = ?, supported_protocols = ?, sync_status = 'SYNC_DONE', updated_at = ? WHERE id = ?`,
    hostname,
    JSON.stringify(protocols),
    core.clock.now().toISOString(),
    routerId,
  );
}

/**
 * A Bind's terminator on a stock router, its id the router's terminator address (as OpenZiti's): created, or its
 * cost and precedence updated when the router asks again for the same one (a re-established bind). One transaction:
 * an id of another router or service is refused.
 */
export async function putRouterTerminator(
  core: Core,
  routerId: string,
  serviceId: string,
  t: {
    id: string;
    instance: string;
    hostId: string;
    cost: number;
    precedence: RouterTerminator['precedence'];
    binding?: 'edge' | 'tunnel';
    bind?: TerminatorBind;
  },
): Promise<void> {
  await core.store.tx(async () => {
    const existing = await core.store.getSql<{ router_id: string; service_id: string }>(
      'SELECT router_id, service_id FROM terminators WHERE id = ?',
      t.id,
    );
    if (existing && (existing.router_id !== routerId || existing.service_id !== serviceId)) {
      throw new DataPlaneRefusal('a terminator with this id exists for another router or service');
    }
    if (existing) {
      await updateRouterTerminator(core, t.id, { cost: t.cost, precedence: t.precedence });
      // bound again (the SDK's new Bind session): what its dialers get now
      if (t.bind)
        await core.store.runSql(
          'UPDATE terminators SET session_id = ?, peer_data = ? WHERE id = ?',
          t.bind.sessionId,
          encodePeerData(t.bind.peerData),
          t.id,
        );
    } else {
      await addRouterTerminator(core, {
        id: t.id,
        serviceId,
        routerId,
        binding: t.binding ?? 'edge',
        address: t.id,
        identity: t.instance,
        hostId: t.hostId,
        cost: t.cost,
        precedence: t.precedence,
        bind: t.bind,
      });
    }
  });
}

/**
 * Changes a router asks of its own terminators (removal, cost, precedence), in one transaction. `strict`: a terminator
 * that is not there or is another router's refuses the whole request (OpenZiti's verifyTerminator); otherwise such
 * ids are skipped (a batch of removals, some already gone).
 */
export async function changeRouterTerminators(
  core: Core,
  routerId: string,
  ids: readonly string[],
  change: 'remove' | { cost?: number; precedence?: RouterTerminator['precedence'] },
  strict: boolean,
): Promise<void> {
  await core.store.tx(async () => {
    for (const id of ids) {
      const row = await core.store.getSql<{ router_id: string }>('SELECT router_id FROM terminators WHERE id = ?', id);
      if (!row || row.router_id !== routerId) {
        if (!strict) continue;
        throw new DataPlaneRefusal(
          row ? `request for terminator ${id} on router ${row.router_id} came from router ${routerId}` : 'invalid terminator: not found',
        );
      }
      if (change === 'remove') await removeRouterTerminator(core, id);
      else await updateRouterTerminator(core, id, change);
    }
  });
}

/** The tunnel terminators of the given routers (their tunneler-enabled hosting), for a check of their access. */
export async function tunnelTerminatorsOf(core: Core, routerIds: string[]): Promise<Array<{ id: string; routerId: string; serviceId: string }>> {
  if (routerIds.length === 0) return [];
  const rows = await core.store.allSql<{ id: string; router_id: string; service_id: string }>(
    `SELECT id, router_id, service_id FROM terminators WHERE binding = 'tunnel' AND router_id IN ${core.store.sql.jsonValues()}`,
    JSON.stringify(routerIds),
  );
  return rows.map((r) => ({ id: r.id, routerId: r.router_id, serviceId: r.service_id }));
}
