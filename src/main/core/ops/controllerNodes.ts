import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { perCore, type Core } from '../core';
import { newId } from '../ids';
import { fingerprintSha1 } from '../pki/index';
import { setting } from '../store/settings';

/** How often a controller node says it is alive, and how long a silent one stays online for the others. */
export const HEARTBEAT_MS = 5_000;
export const OFFLINE_AFTER_MS = 3 * HEARTBEAT_MS;

export interface ControllerNode {
  name: string;
  apiAddresses: Record<string, Array<{ url: string; version: string }>>;
}

const ID_FILE = 'controller.id';

/**
 * This node's id in /controllers: kept in its data directory, so nodes sharing one database (PostgreSQL) each have
 * their own row. A data directory from before took the id the database held (one node then).
 */
export const controllerId = perCore((core) => {
  const file = join(core.config.dataDir, ID_FILE);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const id = core.store.dialect === 'sqlite' ? setting(core.store, 'controller_id', () => newId()) : newId();
  writeFileSync(file, id + '\n', { mode: 0o600 });
  return id;
});

/** Upserts this node's row, online. */
export function registerController(core: Core, node: ControllerNode): void {
  const id = controllerId(core);
  const now = core.clock.now().toISOString();
  core.store.runSql(
    `INSERT INTO controllers (id, name, ctrl_address, cert_pem, fingerprint, api_addresses, is_online, is_preferred_leader, last_joined_at, created_at, updated_at)
     VALUES (?, ?, NULL, ?, ?, ?, 1, ?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET name = excluded.name, cert_pem = excluded.cert_pem, fingerprint = excluded.fingerprint,
       api_addresses = excluded.api_addresses, is_online = 1, last_joined_at = excluded.last_joined_at, updated_at = excluded.updated_at`,
    id,
    node.name,
    core.pki.server.certPem,
    fingerprintSha1(core.pki.server.certPem),
    JSON.stringify(node.apiAddresses),
    // the first node of a network is its preferred leader (Weft has no leader; OpenZiti's clients show the flag)
    core.store.getSql('SELECT 1 AS x FROM controllers WHERE is_preferred_leader = 1 AND id <> ?', id) ? 0 : 1,
    now,
    now,
    now,
  );
}

/**
 * The heartbeat: this node's row is refreshed (a write no cached reply depends on), and nodes silent for longer than
 * OFFLINE_AFTER_MS (killed, or cut off from the database) are marked offline, with the edge routers they ran.
 */
export function controllerHeartbeat(core: Core): void {
  const store = core.store;
  const now = core.clock.now();
  const id = controllerId(core);
  store.touchSql('UPDATE controllers SET is_online = 1, updated_at = ? WHERE id = ?', now.toISOString(), id);
  const silentSince = new Date(now.getTime() - OFFLINE_AFTER_MS).toISOString();
  const silent = 'is_online = 1 AND id <> ? AND updated_at < ?';
  // a read first: the writes (which end every node's cached replies) only when a node did go silent
  if (!store.getSql(`SELECT 1 AS x FROM controllers WHERE ${silent} LIMIT 1`, id, silentSince)) return;
  store.tx(() => {
    store.runSql(
      `UPDATE edge_routers SET is_online = 0, updated_at = ? WHERE is_online = 1
         AND id IN (SELECT router_id FROM controllers WHERE ${silent} AND router_id IS NOT NULL)`,
      now.toISOString(),
      id,
      silentSince,
    );
    store.runSql(`UPDATE controllers SET is_online = 0 WHERE ${silent}`, id, silentSince);
  });
}

/** A node that stops says so. */
export function controllerStopped(core: Core): void {
  core.store.runSql('UPDATE controllers SET is_online = 0 WHERE id = ?', controllerId(core));
}
