import { z } from 'zod';
import { referencedEntity } from '../errors';
import { nameSchema, nullableTags } from './common';
import { defineResource } from './define';
import { related } from './resource';

const jsonObject = z.record(z.string(), z.unknown());
const target = z.enum(['service', 'router']);

export const configTypes = defineResource({
  entity: 'config-types',
  table: 'config_types',
  permission: 'config-type',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    // PUT without a schema, or with null (as OpenZiti accepts), leaves the config type without one: see schemas
    schema: { codec: 'json', schema: jsonObject, zero: {} },
    // create without a target (or with null) makes a service config type: see beforeWrite; PUT leaves an omitted one
    target: { codec: 'string', schema: target, nullable: true, zero: null, putOmitted: 'leave' },
  },
  tags: { putOmitted: 'leave' },
  defaultSort: 't.name ASC',
  schemas: {
    update: z.object({
      name: nameSchema,
      schema: jsonObject.nullable().optional(),
      target: target.nullable().optional(),
      tags: nullableTags.optional(),
    }),
    // a PATCH may leave the schema out, but not null it (OpenZiti answers null with a validation error too)
    patch: z.object({
      name: nameSchema.nullable().optional(),
      schema: jsonObject.optional(),
      target: target.nullable().optional(),
      tags: nullableTags.optional(),
    }),
  },
  associations: { configs: related('configs', 't.config_type_id = ?') },
  beforeWrite(op, input, _existing, ctx) {
    if (input.schema) ctx.core.schemas.compile(input.schema);
    if (op === 'create' && input.target == null) input.target = 'service';
  },
  async beforeDelete(row, ctx) {
    if (await ctx.core.store.getSql('SELECT 1 FROM configs WHERE config_type_id = ? LIMIT 1', row.id)) {
      throw referencedEntity('configs of this config type exist');
    }
  },
});
