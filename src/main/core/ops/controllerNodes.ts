import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Core } from '../core';
import { knownNodeId, rememberNodeId } from '../eventRows';
import { newId } from '../ids';
import { fingerprintSha1 } from '../pki/index';
import { setting } from '../store/settings';

/** How often a controller node says it is alive, and how long a silent one stays online for the others. */
export const HEARTBEAT_MS = 5_000;
export const OFFLINE_AFTER_MS = 3 * HEARTBEAT_MS;

export interface ControllerNode {
  name: string;
  apiAddresses: Record<string, Array<{ url: string; version: string }>>;
  /** the control channel's advertised address (tls:host:port) routers dial; none without a control channel */
  ctrlAddress?: string;
}

const ID_FILE = 'controller.id';

/**
 * This node's id in /controllers: kept in its data directory, so nodes sharing one database (PostgreSQL) each have
 * their own row. A data directory from before took the id the database held (one node then).
 */
export async function controllerId(core: Core): Promise<string> {
  const known = knownNodeId(core);
  if (known !== undefined) return known;
  const file = join(core.config.dataDir, ID_FILE);
  let id: string;
  if (existsSync(file)) id = readFileSync(file, 'utf8').trim();
  else {
    id = core.store.dialect === 'sqlite' ? await setting(core.store, 'controller_id', () => newId()) : newId();
    // a call that came meanwhile may have written it already (SQLite: the same id, from the settings table)
    const made = knownNodeId(core);
    if (made !== undefined) return made;
    writeFileSync(file, id + '\n', { mode: 0o600 });
  }
  rememberNodeId(core, id);
  return id;
}

/** Upserts this node's row, online. */
export async function registerController(core: Core, node: ControllerNode): Promise<void> {
  const id = await controllerId(core);
  const now = core.clock.now().toISOString();
  // the first node of a network is its preferred leader (Weft has no leader; OpenZiti's clients show the flag):
  // decided by the upsert itself, so two nodes starting at once do not both take it
  await core.store.runSql(
    `INSERT INTO controllers (id, name, ctrl_address, cert_pem, fingerprint, api_addresses, is_online, is_preferred_leader, last_joined_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 1,
       (SELECT CASE WHEN EXISTS (SELECT 1 FROM controllers WHERE is_preferred_leader = 1 AND id <> ?) THEN 0 ELSE 1 END), ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET name = excluded.name, ctrl_address = excluded.ctrl_address, cert_pem = excluded.cert_pem, fingerprint = excluded.fingerprint,
       api_addresses = excluded.api_addresses, is_online = 1, last_joined_at = excluded.last_joined_at, updated_at = excluded.updated_at`,
    id,
    node.name,
    node.ctrlAddress ?? null,
    core.pki.server.certPem,
    fingerprintSha1(core.pki.server.certPem),
    JSON.stringify(node.apiAddresses),
    id,
    now,
    now,
    now,
  );
}

/** This node's row names its current server certificate (after a renewal: routers and peers see the new one). */
export async function updateControllerCertificate(core: Core): Promise<void> {
  const fingerprint = fingerprintSha1(core.pki.server.certPem);
  const id = await controllerId(core);
  // a read first: the write (which ends every node's cached replies) only when the row is behind
  if (!(await core.store.getSql('SELECT 1 AS x FROM controllers WHERE id = ? AND fingerprint <> ?', id, fingerprint))) return;
  await core.store.runSql(
    'UPDATE controllers SET cert_pem = ?, fingerprint = ?, updated_at = ? WHERE id = ?',
    core.pki.server.certPem,
    fingerprint,
    core.clock.now().toISOString(),
    id,
  );
}

/**
 * The heartbeat: this node's row is refreshed (a write no cached reply depends on), and nodes silent for longer than
 * OFFLINE_AFTER_MS (killed, or cut off from the database) are marked offline, with the edge routers they ran and the
 * stock routers connected to them alone.
 */
export async function controllerHeartbeat(core: Core): Promise<void> {
  const store = core.store;
  const now = core.clock.now();
  const id = await controllerId(core);
  await store.touchSql('UPDATE controllers SET is_online = 1, updated_at = ? WHERE id = ?', now.toISOString(), id);
  const silentSince = new Date(now.getTime() - OFFLINE_AFTER_MS).toISOString();
  const silent = 'is_online = 1 AND id <> ? AND updated_at < ?';
  // a read first: the writes (which end every node's cached replies) only when a node did go silent
  if (!(await store.getSql(`SELECT 1 AS x FROM controllers WHERE ${silent} LIMIT 1`, id, silentSince))) return;
  await store.tx(async () => {
    await store.runSql(
      `UPDATE edge_routers SET is_online = 0, updated_at = ? WHERE is_online = 1
         AND id IN (SELECT router_id FROM controllers WHERE ${silent} AND router_id IS NOT NULL)`,
      now.toISOString(),
      id,
      silentSince,
    );
    // the stock routers connected to it alone
    await controlNodesGone(core, `(SELECT id FROM controllers WHERE ${silent})`, [id, silentSince]);
    await store.runSql(`UPDATE controllers SET is_online = 0 WHERE ${silent}`, id, silentSince);
  });
}

/**
 * Nodes gone (`nodes`: a subquery naming them, with its parameters): the stock routers connected to no other node go
 * offline and lose their SDKs' terminators (as when a router's channel closes: they bind again), and the nodes'
 * connections are forgotten. In the caller's transaction.
 */
export async function controlNodesGone(core: Core, nodes: string, params: unknown[]): Promise<void> {
  const store = core.store;
  const orphans = await store.allSql<{ router_id: string }>(
    `SELECT DISTINCT router_id FROM edge_router_nodes WHERE node_id IN ${nodes}
       AND router_id NOT IN (SELECT router_id FROM edge_router_nodes WHERE node_id NOT IN ${nodes})`,
    ...params,
    ...params,
  );
  await store.runSql(`DELETE FROM edge_router_nodes WHERE node_id IN ${nodes}`, ...params);
  if (orphans.length === 0) return;
  const ids = JSON.stringify(orphans.map((o) => o.router_id));
  const now = core.clock.now().toISOString();
  await store.runSql(`UPDATE edge_routers SET is_online = 0, updated_at = ? WHERE is_online = 1 AND id IN ${store.sql.jsonValues()}`, now, ids);
  await store.runSql(`DELETE FROM terminators WHERE binding IN ('edge', 'tunnel') AND router_id IN ${store.sql.jsonValues()}`, ids);
}

/** A node that stops says so. */
export async function controllerStopped(core: Core): Promise<void> {
  await core.store.runSql('UPDATE controllers SET is_online = 0 WHERE id = ?', await controllerId(core));
}

/** This node's row names the API at another origin (an advertised address changed): same paths, new scheme://host:port. */
export async function updateControllerApiOrigin(core: Core, origin: string): Promise<void> {
  const id = await controllerId(core);
  const row = await core.store.getSql<{ a: string | null }>('SELECT api_addresses AS a FROM controllers WHERE id = ?', id);
  if (!row?.a) return;
  const addresses = JSON.parse(row.a) as ControllerNode['apiAddresses'];
  const moved = Object.fromEntries(
    Object.entries(addresses).map(([api, list]) => [api, list.map((a) => ({ ...a, url: origin + new URL(a.url).pathname.replace(/\/$/, '') }))]),
  );
  await core.store.runSql(
    'UPDATE controllers SET api_addresses = ?, updated_at = ? WHERE id = ?',
    JSON.stringify(moved),
    core.clock.now().toISOString(),
    id,
  );
}
