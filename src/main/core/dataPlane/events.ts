import type { Core } from '../core';

/** What a router must react to, told after the write that caused it has committed. */
export interface DataPlaneEvents {
  /** Dial/Bind sessions that no longer exist: their circuits and terminators end */
  sessionsEnded(ids: string[]): void;
  /** API sessions that ended (logout, expiry, identity disabled or deleted): their connections close */
  apiSessionsEnded(ids: string[]): void;
  /** terminators deleted (by an admin, or with their service or router) */
  terminatorsDeleted(ids: string[]): void;
  /** edge routers changed or deleted (disabled, renamed, tunneling turned off) */
  routersChanged(ids: string[]): void;
  /** services, configs or access changed: what a tunneler-enabled router hosts may differ */
  hostingMayHaveChanged(): void;
  /** changes may have gone untold (another node's, while the store's change feed was down): check what is kept */
  changesMissed(): void;
}

/** Subscribes a router to the data-plane events; returns the unsubscribe function. */
export function watchDataPlane(core: Core, on: DataPlaneEvents): () => void {
  const store = core.store;
  const off = [
    store.watch('sessions', 'delete', (ids) => on.sessionsEnded(ids)),
    store.watch('api_sessions', 'delete', (ids) => on.apiSessionsEnded(ids)),
    store.watch('terminators', 'delete', (ids) => on.terminatorsDeleted(ids)),
    store.watch('edge_routers', 'update', (ids) => on.routersChanged(ids)),
    store.watch('edge_routers', 'delete', (ids) => on.routersChanged(ids)),
    store.watchTables(['services', 'configs', 'service_configs', 'identity_service_configs', 'service_access', 'role_class_members'], () =>
      on.hostingMayHaveChanged(),
    ),
    store.watchGaps(() => on.changesMissed()),
  ];
  return () => off.forEach((f) => f());
}

/**
 * Subscribes the control channel to edge router changes (updated or deleted rows, told after commit) and to missed
 * changes (`changed()` without ids: check every connected router); returns the unsubscribe function.
 */
export function watchEdgeRouters(core: Core, changed: (ids?: string[]) => void): () => void {
  const store = core.store;
  const off = [
    store.watch('edge_routers', 'update', (ids) => changed(ids)),
    store.watch('edge_routers', 'delete', (ids) => changed(ids)),
    store.watchGaps(() => changed()),
  ];
  return () => off.forEach((f) => f());
}

/** Which of `ids` have no row in `table` any more (sessions, terminators a router still holds). */
export async function missingRows(core: Core, table: 'sessions' | 'terminators', ids: readonly string[]): Promise<Set<string>> {
  const found = await core.store.allSql<{ id: string }>(`SELECT id FROM ${table} WHERE id IN ${core.store.sql.jsonValues()}`, JSON.stringify(ids));
  const gone = new Set(ids);
  for (const r of found) gone.delete(r.id);
  return gone;
}
