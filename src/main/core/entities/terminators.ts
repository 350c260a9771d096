import { z } from 'zod';
import { validationError } from '../errors';
import { scalar } from '../query/fields';
import { costSchema, nullableTags, patchOf, precedenceSchema } from './common';
import { namesById, ref, type ResourceDef } from './resource';

const required = {
  service: z.string().min(1),
  router: z.string().min(1),
  address: z.string().min(1),
  binding: z.string().min(1),
};
const optional = {
  cost: costSchema.optional(),
  precedence: precedenceSchema.optional(),
  identity: z.string().optional(),
  identitySecret: z.base64().optional(),
  tags: nullableTags.optional(),
};

/**
 * Terminators: where a service's traffic leaves the network (a binding and address at an edge or transit router).
 * Deleted with their service (foreign key) or router (triggers in migration 003).
 */
export const terminators: ResourceDef = {
  entity: 'terminators',
  table: 'terminators',
  permission: 'terminator',
  columns: {
    serviceId: { column: 'service_id', codec: 'string', write: false },
    routerId: { column: 'router_id', codec: 'string', write: false },
    binding: { column: 'binding', codec: 'string' },
    address: { column: 'address', codec: 'string' },
    identity: { column: 'identity', codec: 'string' },
    cost: { column: 'cost', codec: 'int' },
    precedence: { column: 'precedence', codec: 'string' },
  },
  refs: { service: { column: 'service_id', entity: 'services', table: 'services' } },
  fields: {
    service: scalar('string', 't.service_id'),
    serviceId: scalar('string', 't.service_id'),
    router: scalar('string', 't.router_id'),
    routerId: scalar('string', 't.router_id'),
    binding: scalar('string', 't.binding'),
    address: scalar('string', 't.address'),
    identity: scalar('string', 't.identity'),
    cost: scalar('number', 't.cost'),
    precedence: scalar('string', 't.precedence'),
  },
  defaultSort: 't.created_at ASC, t.id ASC',
  schemas: {
    create: z.object({ ...required, ...optional }),
    update: z.object({ ...required, ...optional }),
    patch: patchOf({ ...required, cost: costSchema, precedence: precedenceSchema, identity: z.string(), tags: nullableTags }),
  },
  links: (row) => ({ service: `services/${row.service_id}` }),
  beforeWrite(op, input, _existing, ctx) {
    const store = ctx.core.store;
    if (op === 'patch') for (const k of Object.keys(required).concat('cost', 'precedence', 'identity')) if (input[k] === null) delete input[k];
    if (input.tags === null) input.tags = {};
    const extra: Record<string, unknown> = {};
    if (input.service !== undefined) {
      if (!store.getSql('SELECT 1 FROM services WHERE id = ?', input.service)) throw validationError('service', 'service not found', input.service);
      extra.service_id = input.service;
    }
    if (input.router !== undefined) {
      if (!store.getSql('SELECT 1 FROM edge_routers WHERE id = ? UNION ALL SELECT 1 FROM routers WHERE id = ?', input.router, input.router)) {
        throw validationError('router', 'router not found', input.router);
      }
      extra.router_id = input.router;
    }
    if (input.identitySecret !== undefined) extra.identity_secret = input.identitySecret;
    if (op === 'update') {
      input.cost ??= 0;
      input.precedence ??= 'default';
      input.identity ??= '';
    }
    return extra;
  },
  decorate(items, rows, ctx) {
    const ids = [...new Set(rows.map((r) => r.router_id as string))];
    const edge = namesById(ctx.core.store, 'edge_routers', ids);
    const transit = namesById(
      ctx.core.store,
      'routers',
      ids.filter((id) => !edge.has(id)),
    );
    items.forEach((item, i) => {
      const id = rows[i]!.router_id as string;
      item.router = edge.has(id) ? ref('edge-routers', id, edge.get(id)) : ref('transit-routers', id, transit.get(id));
      item.dynamicCost = item.cost;
    });
  },
};
