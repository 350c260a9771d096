import { applyCreate, applyDelete, applyUpdate } from '../entities/resource';
import { terminators } from '../entities/terminators';
import type { Core } from '../core';
import { allRows, json, rowShape } from '../store/rows';

/** Bindings of terminators a Weft router makes: an SDK's Bind (`edge`) and the router's own hosting (`tunnel`). */
export const ROUTER_BINDINGS = ['edge', 'tunnel'] as const;
export type RouterBinding = (typeof ROUTER_BINDINGS)[number];

export interface RouterTerminator {
  /** the id a stock router chose (OpenZiti's terminator id is the router's terminator address); new one otherwise */
  id?: string;
  serviceId: string;
  routerId: string;
  binding: RouterBinding;
  address: string;
  /** the instance id an SDK bound with (header 1006), '' for none */
  identity: string;
  cost: number;
  precedence: 'default' | 'required' | 'failed';
  /** the hosting identity: the SDK that bound, or the router for services it hosts itself */
  hostId?: string;
  /** a stock router's SDK terminator: the Bind session it goes with, and the host's peer data dialers get */
  bind?: TerminatorBind;
}

export interface TerminatorBind {
  sessionId: string;
  peerData: Map<number, Buffer>;
}

/** Peer data as stored (header number -> base64). */
export function encodePeerData(m: Map<number, Buffer>): string {
  return JSON.stringify(Object.fromEntries([...m].map(([k, v]) => [k, v.toString('base64')])));
}

export function decodePeerData(json: string): Map<number, Buffer> {
  const o = JSON.parse(json || '{}') as Record<string, string>;
  return new Map(Object.entries(o).map(([k, v]) => [Number(k), Buffer.from(v, 'base64')]));
}

/**
 * Terminators a router reports go through the same write path as the Management API's (validation, links),
 * as the system. Returns the new terminator's id.
 */
export async function addRouterTerminator(core: Core, t: RouterTerminator): Promise<string> {
  return applyCreate(
    core.system,
    terminators,
    {
      service: t.serviceId,
      router: t.routerId,
      binding: t.binding,
      address: t.address,
      identity: t.identity,
      cost: t.cost,
      precedence: t.precedence,
    },
    {
      ...(t.id ? { id: t.id } : {}),
      columns: { host_id: t.hostId ?? '', ...(t.bind && { session_id: t.bind.sessionId, peer_data: encodePeerData(t.bind.peerData) }) },
    },
  );
}

export async function updateRouterTerminator(
  core: Core,
  id: string,
  change: { cost?: number; precedence?: RouterTerminator['precedence'] },
): Promise<void> {
  // the check and the write in one transaction: a deletion (its service's, an admin's) cannot come in between
  await core.store.tx(async () => {
    if (await core.store.getSql('SELECT 1 FROM terminators WHERE id = ?', id)) await applyUpdate(core.system, terminators, id, change, 'patch');
  });
}

/** Removes a terminator if it still exists (it may have gone with its service or been deleted by an admin). */
export async function removeRouterTerminator(core: Core, id: string): Promise<void> {
  await core.store.tx(async () => {
    if (await core.store.getSql('SELECT 1 FROM terminators WHERE id = ?', id)) await applyDelete(core.system, terminators, id);
  });
}

/** Drops what a router left behind (a stop without clean-up): its edge and tunnel terminators. */
export async function clearRouterTerminators(core: Core, routerId: string): Promise<void> {
  await core.store.runSql(`DELETE FROM terminators WHERE router_id = ? AND binding IN ('edge', 'tunnel')`, routerId);
}

/** The SDK terminators bound with these sessions (ended: the terminators go with them, whichever node took the Bind). */
export async function removeTerminatorsOfSessions(core: Core, sessionIds: readonly string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  const rows = await core.store.allSql<{ id: string }>(
    `SELECT id FROM terminators WHERE session_id IN ${core.store.sql.jsonValues()}`,
    JSON.stringify(sessionIds),
  );
  for (const r of rows) await removeRouterTerminator(core, r.id);
}

/** SDK terminators whose Bind session is gone (its end may have gone untold, e.g. another node's while the change feed was down). */
export async function removeTerminatorsWithoutSession(core: Core): Promise<void> {
  const rows = await core.store.allSql<{ id: string }>(
    'SELECT id FROM terminators t WHERE session_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = t.session_id)',
  );
  for (const r of rows) await removeRouterTerminator(core, r.id);
}

/** A service the router hosts itself: its identity may Bind it and it has a host.v1 config. */
export interface RouterHostedService {
  serviceId: string;
  serviceName: string;
  host: HostV1;
}

/** The fields of host.v1 the router acts on. */
export interface HostV1 {
  protocol?: string;
  address?: string;
  port?: number;
  forwardProtocol?: boolean;
  forwardAddress?: boolean;
  forwardPort?: boolean;
  allowedProtocols?: string[];
  allowedAddresses?: string[];
  allowedPortRanges?: Array<{ low: number; high: number }>;
  listenOptions?: { cost?: number; precedence?: string; identity?: string };
}

const HOSTED = rowShape({ id: 'string', name: 'string', host: json<HostV1>('?') });

/**
 * Services a tunneler-enabled router hosts: those its router identity (same id as the router) may Bind that carry
 * a host.v1 config (the identity's own override of that config first).
 */
export async function routerHostedServices(core: Core, routerId: string): Promise<RouterHostedService[]> {
  const rows = await allRows(
    core.store,
    HOSTED,
    `WITH bindable AS (
       SELECT m.entity_id AS service_id FROM role_class_members i
       JOIN service_access a ON a.identity_class = i.class_id AND a.bind > 0
       JOIN role_class_members m ON m.class_id = a.service_class
       WHERE i.kind = 'identity' AND i.entity_id = ?)
     SELECT s.id, s.name, coalesce(
       (SELECT c.data FROM identity_service_configs x JOIN configs c ON c.id = x.config_id JOIN config_types ct ON ct.id = c.config_type_id
        WHERE x.identity_id = ? AND x.service_id = s.id AND ct.name = 'host.v1'),
       (SELECT c.data FROM service_configs x JOIN configs c ON c.id = x.config_id JOIN config_types ct ON ct.id = c.config_type_id
        WHERE x.service_id = s.id AND ct.name = 'host.v1')) AS host
     FROM services s WHERE s.id IN (SELECT service_id FROM bindable)`,
    routerId,
    routerId,
  );
  return rows.flatMap((r) => (r.host ? [{ serviceId: r.id, serviceName: r.name, host: r.host }] : []));
}
