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
  ];
  return () => off.forEach((f) => f());
}
