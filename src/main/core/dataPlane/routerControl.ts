import type { Core } from '../core';
import { fingerprintSha1, isCurrentlyValid, toPem } from '../pki/index';
import { builtinRouterId } from '../policy/index';
import { controllerId } from '../ops/index';
import { getRow, rowShape, selectList } from '../store/rows';
import { DataPlaneRefusal } from './access';

/** A stock router on the control channel, as its edge router record names it. */
export interface ControlRouter {
  id: string;
  name: string;
  /** the SHA-1 fingerprint of the leaf certificate it presented (its enrolled client certificate) */
  fingerprint: string;
}

/** What the control channel checks of a router's record. */
const CONTROL = rowShape({ name: 'string', fingerprint: 'string?', disabled: 'bool' });
const controlRow = (core: Core, id: string) => getRow(core.store, CONTROL, `SELECT ${selectList(CONTROL)} FROM edge_routers WHERE id = ?`, id);

/**
 * A control channel's hello (OpenZiti's controller does the same in handler_ctrl/connect.go): the hello's body names
 * the router, which must be a known edge router, fully enrolled, enabled, and the TLS client certificate's leaf (not the
 * chain behind it) must be the certificate it enrolled with (its fingerprint) and valid now. Weft's own built-in router
 * runs in process and never dials in.
 */
export async function authorizeRouterControl(core: Core, routerId: string, leafDer: Buffer | undefined): Promise<ControlRouter> {
  if (!routerId) throw new DataPlaneRefusal('the hello names no router');
  if (!leafDer || leafDer.length === 0) throw new DataPlaneRefusal('a client certificate is required');
  const row = await controlRow(core, routerId);
  if (!row) throw new DataPlaneRefusal(`unknown/unenrolled router, routerId: ${routerId}`);
  if (!row.fingerprint) throw new DataPlaneRefusal(`router enrollment incomplete, routerId: ${routerId}`);
  const fingerprint = fingerprintSha1(leafDer);
  if (fingerprint !== row.fingerprint) throw new DataPlaneRefusal(`incorrect fingerprint/unenrolled router, routerId: ${routerId}`);
  if (!isCurrentlyValid(toPem(leafDer, 'CERTIFICATE'), core.clock.now())) throw new DataPlaneRefusal('the client certificate is not valid now');
  if (row.disabled) throw new DataPlaneRefusal(`router disabled, routerId: ${routerId}`);
  if ((await builtinRouterId(core)) === routerId) throw new DataPlaneRefusal('the built-in router runs inside Weft');
  return { id: routerId, name: row.name, fingerprint };
}

/** Whether a connected router may stay: its record is still there, enabled, with the certificate it connected with. */
export async function routerControlStillValid(core: Core, router: ControlRouter): Promise<boolean> {
  const row = await controlRow(core, router.id);
  return !!row && !row.disabled && row.fingerprint === router.fingerprint;
}

/**
 * A stock router's control channel to this node came up (online) or went: its edge router record's `isOnline`, as the
 * built-in router's is kept, true while it is connected to any node (edge_router_nodes).
 */
export async function setControlRouterOnline(core: Core, id: string, online: boolean): Promise<void> {
  const store = core.store;
  const now = core.clock.now().toISOString();
  const node = await controllerId(core);
  await store.tx(async () => {
    if (online) {
      await store.runSql('INSERT INTO edge_router_nodes (router_id, node_id, connected_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', id, node, now);
      await store.runSql('UPDATE edge_routers SET is_online = 1, updated_at = ? WHERE id = ? AND is_online = 0', now, id);
      return;
    }
    await store.runSql('DELETE FROM edge_router_nodes WHERE router_id = ? AND node_id = ?', id, node);
    await store.runSql(
      `UPDATE edge_routers SET is_online = 0, updated_at = ? WHERE id = ? AND is_online = 1
         AND NOT EXISTS (SELECT 1 FROM edge_router_nodes WHERE router_id = ?)`,
      now,
      id,
      id,
    );
  });
}

/**
 * The routers connected to this node now, as the database should record them: a node cut off from the database for
 * long was taken for dead by the others (its connections forgotten, routers connected to it alone marked offline);
 * once it can write again, what is missing is recorded again.
 */
export async function reassertControlRouters(core: Core, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const rows = await core.store.allSql<{ router_id: string }>('SELECT router_id FROM edge_router_nodes WHERE node_id = ?', await controllerId(core));
  const recorded = new Set(rows.map((r) => r.router_id));
  for (const id of ids) if (!recorded.has(id)) await setControlRouterOnline(core, id, true);
}

/**
 * A router accepting a link asks whether the dialing router is who it says (OpenZiti's VerifyRouter): one of the
 * fingerprints of the certificates it presented must be the one the named router enrolled with.
 */
export async function verifyRouterFingerprints(core: Core, routerId: string, fingerprints: string[]): Promise<void> {
  const row = await controlRow(core, routerId);
  if (!row) throw new DataPlaneRefusal(`no router with id ${routerId}`);
  if (!row.fingerprint) throw new DataPlaneRefusal(`invalid router ${routerId}, not yet enrolled`);
  if (!fingerprints.includes(row.fingerprint)) throw new DataPlaneRefusal(`could not verify fingerprint for router ${routerId}`);
}
