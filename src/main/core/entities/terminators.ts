import { z } from 'zod';
import { validationError } from '../errors';
import { costSchema, patchOf, precedenceSchema, tagsSchema } from './common';
import { defineResource } from './define';
import { namesById, ref } from './resource';

const nonEmpty = z.string().min(1);

/**
 * Terminators: where a service's traffic leaves the network (a binding and address at an edge or transit router).
 * Deleted with their service (foreign key) or router (triggers in migration 003).
 */
export const terminators = defineResource({
  entity: 'terminators',
  table: 'terminators',
  permission: 'terminator',
  fields: {
    // written as `service` and `router` (checked in beforeWrite), shown as their ids and refs
    service: { codec: 'string', column: 'service_id', schema: nonEmpty, required: true, shown: false, filter: true },
    serviceId: { codec: 'string', filter: true },
    router: { codec: 'string', column: 'router_id', schema: nonEmpty, required: true, shown: false, filter: true },
    routerId: { codec: 'string', filter: true },
    address: { codec: 'string', schema: nonEmpty, required: true, filter: true },
    binding: { codec: 'string', schema: nonEmpty, required: true, filter: true },
    cost: { codec: 'int', schema: costSchema, zero: 0, filter: true },
    precedence: { codec: 'string', schema: precedenceSchema, zero: 'default', filter: true },
    identity: { codec: 'string', schema: z.string(), zero: '', filter: true },
    // the hosting identity, as its router reported it ('' for terminators created through the API)
    hostId: { codec: 'string', filter: true },
    // never shown
    identitySecret: { codec: 'string', schema: z.base64(), shown: false },
  },
  tags: { putOmitted: 'leave' },
  refs: { service: { column: 'service_id', entity: 'services', table: 'services' } },
  // `router.name`: an edge router or a transit router (the ref is shown by decorate)
  filterRefs: { router: { column: 'router_id', entity: ['edge-routers', 'routers'] } },
  defaultSort: 't.created_at ASC, t.id ASC',
  schemas: {
    // a PATCH does not carry the identity secret
    patch: patchOf({
      service: nonEmpty,
      router: nonEmpty,
      address: nonEmpty,
      binding: nonEmpty,
      cost: costSchema,
      precedence: precedenceSchema,
      identity: z.string(),
      tags: tagsSchema,
    }),
  },
  links: (row) => ({ service: `services/${row.service_id}` }),
  async beforeWrite(_op, input, _existing, ctx) {
    const store = ctx.core.store;
    if (input.service !== undefined && !(await store.getSql('SELECT 1 FROM services WHERE id = ?', input.service))) {
      throw validationError('service', 'service not found', input.service);
    }
    if (
      input.router !== undefined &&
      !(await store.getSql('SELECT 1 FROM edge_routers WHERE id = ? UNION ALL SELECT 1 FROM routers WHERE id = ?', input.router, input.router))
    ) {
      throw validationError('router', 'router not found', input.router);
    }
  },
  async decorate(items, rows, ctx) {
    const ids = [...new Set(rows.map((r) => r.router_id!))];
    const edge = await namesById(ctx.core.store, 'edge_routers', ids);
    const transit = await namesById(
      ctx.core.store,
      'routers',
      ids.filter((id) => !edge.has(id)),
    );
    items.forEach((item, i) => {
      const id = rows[i]!.router_id!;
      item.router = edge.has(id) ? ref('edge-routers', id, edge.get(id)) : ref('transit-routers', id, transit.get(id));
      item.dynamicCost = item.cost;
      // OpenZiti's fabric name for the instance id
      item.instanceId = item.identity;
    });
  },
});
