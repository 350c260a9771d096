import {
  deleteFabricCircuit,
  getFabricCircuit,
  getFabricLink,
  getFabricRouter,
  listFabricCircuits,
  listFabricLinks,
  listFabricRouters,
  type FabricLive,
} from '../../core/dataPlane/index';
import { entryOf } from '../../core/registry';
import type { ApiName, RouteDef } from '../registry';
import { listParams, resourceRoutes } from './resources';

const fabric: ApiName[] = ['fabric'];

/**
 * OpenZiti's fabric management API (/fabric/v1), read-mostly: routers, links, circuits (list, get, delete: the
 * circuit ends), and the terminators and services of the edge API presented again (list, get).
 */
export function fabricRoutes(live: FabricLive | undefined): RouteDef[] {
  const route = (method: RouteDef['method'], path: string, summary: string, handler: RouteDef['handler']): RouteDef => ({
    apis: fabric,
    method,
    path,
    auth: 'session',
    summary,
    handler,
  });
  return [
    route('GET', '/routers', 'List routers (edge and transit)', (req) => listFabricRouters(req.ctx, live, listParams(req))),
    route('GET', '/routers/:id', 'Get one router', async (req) => ({ data: await getFabricRouter(req.ctx, live, req.params.id!) })),
    route('GET', '/links', 'List links between routers', (req) => listFabricLinks(req.ctx, live, listParams(req))),
    route('GET', '/links/:id', 'Get one link', async (req) => ({ data: await getFabricLink(req.ctx, live, req.params.id!) })),
    route('GET', '/circuits', 'List circuits', (req) => listFabricCircuits(req.ctx, live, listParams(req))),
    route('GET', '/circuits/:id', 'Get one circuit', async (req) => ({ data: await getFabricCircuit(req.ctx, live, req.params.id!) })),
    route('DELETE', '/circuits/:id', 'End a circuit', (req) => (deleteFabricCircuit(req.ctx, live, req.params.id!), {})),
    ...resourceRoutes(entryOf('terminators').def, { apis: fabric, only: ['list', 'get'] }),
    ...resourceRoutes(entryOf('services').def, { apis: fabric, only: ['list', 'get'] }),
  ];
}
