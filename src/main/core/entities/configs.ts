import { z } from 'zod';
import type { Ctx } from '../context';
import { referencedEntity, validationError } from '../errors';
import { scalar } from '../query/fields';
import { getRow, json, rowShape } from '../store/rows';
import { nameSchema, nullableTags } from './common';
import { defineResource } from './define';
import { related } from './resource';

const data = z.record(z.string(), z.unknown());

const TYPE_SCHEMA = rowShape({ id: 'string', schema: json<object>(), updated_at: 'datetime' });

/** Validates config data against its config type's JSON schema (field errors point into `data`). */
export async function validateConfigData(ctx: Ctx, configTypeId: string, value: unknown): Promise<void> {
  const type = await getRow(ctx.core.store, TYPE_SCHEMA, 'SELECT id, schema, updated_at FROM config_types WHERE id = ?', configTypeId);
  if (!type) throw validationError('configTypeId', 'config type not found', configTypeId);
  ctx.core.schemas.validate(`${type.id}@${type.updated_at}`, type.schema, value);
}

export const configs = defineResource({
  entity: 'configs',
  table: 'configs',
  permission: 'config',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    configTypeId: { codec: 'string', schema: z.string(), required: true, createOnly: true, filter: true },
    data: { codec: 'json', schema: data, required: true },
  },
  tags: { putOmitted: 'leave' },
  filters: { type: scalar('string', 't.config_type_id') },
  refs: { configType: { column: 'config_type_id', entity: 'config-types', table: 'config_types' } },
  // OpenZiti names the reference `type` (`type.name = "intercept.v1"`)
  filterRefs: { type: { column: 'config_type_id', entity: 'config-types' } },
  defaultSort: 't.name ASC',
  schemas: {
    // a PATCH may leave name and data out, but not null them
    patch: z.object({ name: nameSchema.optional(), data: data.optional(), tags: nullableTags.optional() }),
  },
  associations: { services: related('services', 't.id IN (SELECT service_id FROM service_configs WHERE config_id = ?)') },
  links: (row) => ({ 'config-type': `config-types/${row.config_type_id}` }),
  // with the write, through the write gate (core/modules.ts): a share's config (svc.proxy.v1) is checked as a share
  // (shares/config.ts), and the services using a changed config and the identities overriding with it see it change
  // (policy/onWrite.ts)
  async beforeWrite(_op, input, existing, ctx) {
    const typeId = (existing?.config_type_id ?? input.configTypeId)!;
    if (input.data != null) await validateConfigData(ctx, typeId, input.data);
  },
  async beforeDelete(row, ctx) {
    if (await ctx.core.store.getSql('SELECT 1 FROM service_configs WHERE config_id = ? LIMIT 1', row.id)) {
      throw referencedEntity('the config is used by services');
    }
    if (await ctx.core.store.getSql('SELECT 1 FROM identity_service_configs WHERE config_id = ? LIMIT 1', row.id)) {
      throw referencedEntity('the config is used by identity service config overrides');
    }
  },
});
