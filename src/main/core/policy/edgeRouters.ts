import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Core } from '../core';
import { getRow, type Decoded } from '../store/rows';
import { deleteTunnelerRouter, syncTunnelerRouter } from './tunnelerRouters';
import { tagsSchema } from '../entities/common';
import { defineResource } from '../entities/define';
import { policiesNaming, reach, reachedFrom } from './access';
import { ROUTER_FIELDS, ROUTER_FLAG } from '../entities/routerCommon';

/** Edge routers (management view). Enrollment fields are maintained by the enrollment module. */
export const edgeRouters = defineResource({
  entity: 'edge-routers',
  table: 'edge_routers',
  permission: 'router',
  roleKind: 'edge-router',
  fields: {
    ...ROUTER_FIELDS,
    isTunnelerEnabled: ROUTER_FLAG,
    appData: { codec: 'json', schema: tagsSchema, nullable: true, zero: {} },
    hostname: { codec: 'string' },
    supportedProtocols: { codec: 'json' },
    syncStatus: { codec: 'string' },
    certPem: { codec: 'string' },
  },
  defaultSort: 't.name ASC',
  associations: {
    'edge-router-policies': policiesNaming('edge-router', 'edge-router-policies'),
    'service-edge-router-policies': policiesNaming('edge-router', 'service-edge-router-policies'),
    identities: reachedFrom('edge-router', 'identities', reach.identitiesOfRouter),
    services: reachedFrom('edge-router', 'services', reach.servicesOfRouter),
  },
  // a created router gets its enrollment JWT in the create's transaction (enrollment/onWrite.ts, through the write gate)
  async afterWrite(_op, id, _input, existing, ctx) {
    await syncTunnelerRouter(ctx, id, existing);
  },
  async beforeDelete(row, ctx) {
    await deleteTunnelerRouter(ctx, row);
  },
});

// The edge router Weft runs itself (provisioned by dataPlane/builtinRouter.ts) is an ordinary edge router; which one it
// is, is kept beside its keys.

/** Where a data directory from before kept the router's id (one node per database then). */
const LEGACY_SETTING = 'builtin_router_id';
/** The built-in router's id, beside its keys: each node on one database (PostgreSQL) runs a router of its own. */
export const builtinRouterIdFile = (core: Core) => join(core.config.dataDir, 'router', 'id');

/** The id of Weft's own edge router (also the id of its router identity), when one has been provisioned. */
export async function builtinRouterId(core: Core): Promise<string | undefined> {
  return (await builtinRouterRow(core))?.id;
}

/** The built-in router's row (a data directory from before has its id moved beside the keys). */
export async function builtinRouterRow(core: Core): Promise<Decoded<typeof edgeRouters.shape> | undefined> {
  const file = builtinRouterIdFile(core);
  let id = existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
  if (!id && core.store.dialect === 'sqlite') {
    // a data directory from before: the id moves beside the keys (where a move to PostgreSQL finds it)
    id = (await core.store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', LEGACY_SETTING))?.value;
    if (id && existsSync(dirname(file))) writeFileSync(file, id + '\n', { mode: 0o600 });
  }
  return id ? getRow(core.store, edgeRouters.shape, 'SELECT * FROM edge_routers WHERE id = ?', id) : undefined;
}
