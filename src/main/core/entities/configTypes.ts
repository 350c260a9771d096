import { z } from 'zod';
import { referencedEntity } from '../errors';
import { scalar } from '../query/fields';
import { nameSchema, nullableTags, patchOf } from './common';
import type { ResourceDef } from './resource';

const jsonObject = z.record(z.string(), z.unknown());
const target = z.enum(['service', 'router']).nullable();
const body = { name: nameSchema, schema: jsonObject.optional(), target: target.optional(), tags: nullableTags.optional() };

export const configTypes: ResourceDef = {
  entity: 'config-types',
  table: 'config_types',
  permission: 'config-type',
  columns: {
    name: { column: 'name', codec: 'string' },
    schema: { column: 'schema', codec: 'json' },
    target: { column: 'target', codec: 'string' },
  },
  fields: { name: scalar('string', 't.name') },
  defaultSort: 't.name ASC',
  schemas: {
    create: z.object(body),
    // PUT without a schema, or with null (as OpenZiti accepts), leaves the config type without one
    update: z.object({ ...body, schema: jsonObject.nullish().transform((v) => v ?? {}) }),
    // a PATCH may leave the schema out, but not null it (OpenZiti answers null with a validation error too)
    patch: patchOf({ name: nameSchema, target, tags: nullableTags }).extend({ schema: jsonObject.optional() }),
  },
  links: (row) => ({ configs: `config-types/${row.id}/configs` }),
  beforeWrite(op, input, _existing, ctx) {
    if (input.schema) ctx.core.schemas.compile(input.schema);
    if (op === 'create' && input.target == null) input.target = 'service';
    if (op === 'patch' && input.name === null) delete input.name;
  },
  beforeDelete(row, ctx) {
    if (ctx.core.store.getSql('SELECT 1 FROM configs WHERE config_type_id = ? LIMIT 1', row.id)) {
      throw referencedEntity('configs of this config type exist');
    }
  },
};
