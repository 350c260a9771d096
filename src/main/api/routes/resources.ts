import { resourceOps, type ResourceDef, type ListParams, type ResourceOp as Op } from '../../core/registry';
import { queryList, queryString, type ApiName, type ApiRequest, type RouteDef } from '../registry';

export function listParams(req: ApiRequest): ListParams {
  return {
    limit: queryString(req.query.limit),
    offset: queryString(req.query.offset),
    filter: queryString(req.query.filter),
    roleFilter: queryList(req.query.roleFilter),
    roleSemantic: queryString(req.query.roleSemantic),
  };
}

export const created = (id: string, entity: string) => ({
  status: 201,
  data: { id, _links: { self: { href: `./${entity}/${id}` } } },
});

/** The CRUD routes of a declared resource: one generic mechanism for every resource type. */
export function resourceRoutes(
  def: ResourceDef,
  opts: {
    apis?: ApiName[];
    only?: Op[];
    /** list and get replies may be reused (RouteDef.cacheable): the def presents only what the database holds */
    cacheable?: boolean;
  } = {},
): RouteDef[] {
  const apis = opts.apis ?? ['management'];
  const ops = resourceOps(def);
  const base = `/${def.entity}`;
  const all: Array<[Op, RouteDef]> = [
    [
      'list',
      {
        apis,
        method: 'GET',
        path: base,
        auth: 'session',
        summary: `List ${def.entity}`,
        cacheable: opts.cacheable,
        handler: (req) => ops.list(req.ctx, listParams(req)),
      },
    ],
    [
      'create',
      {
        apis,
        method: 'POST',
        path: base,
        auth: 'session',
        summary: `Create ${def.entity}`,
        body: def.schemas.create,
        handler: async (req) => created(await ops.create(req.ctx, req.body), def.entity),
      },
    ],
    [
      'get',
      {
        apis,
        method: 'GET',
        path: `${base}/:id`,
        auth: 'session',
        summary: `Get one of ${def.entity}`,
        cacheable: opts.cacheable,
        handler: async (req) => ({ data: await ops.get(req.ctx, req.params.id!) }),
      },
    ],
    [
      'update',
      {
        apis,
        method: 'PUT',
        path: `${base}/:id`,
        auth: 'session',
        summary: `Update (replace) one of ${def.entity}`,
        body: def.schemas.update,
        handler: async (req) => (await ops.update(req.ctx, req.params.id!, req.body, 'update'), {}),
      },
    ],
    [
      'patch',
      {
        apis,
        method: 'PATCH',
        path: `${base}/:id`,
        auth: 'session',
        summary: `Patch one of ${def.entity}`,
        body: def.schemas.patch,
        handler: async (req) => (await ops.update(req.ctx, req.params.id!, req.body, 'patch'), {}),
      },
    ],
    [
      'delete',
      {
        apis,
        method: 'DELETE',
        path: `${base}/:id`,
        auth: 'session',
        summary: `Delete one of ${def.entity}`,
        handler: async (req) => (await ops.delete(req.ctx, req.params.id!), {}),
      },
    ],
  ];
  const wanted =
    opts.only ??
    ([
      'list',
      'get',
      ...(def.schemas.create ? ['create'] : []),
      ...(def.schemas.update ? ['update'] : []),
      ...(def.schemas.patch ? ['patch'] : []),
      'delete',
    ] as Op[]);
  return all.filter(([op]) => wanted.includes(op)).map(([, r]) => r);
}
