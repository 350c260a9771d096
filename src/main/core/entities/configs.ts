import { z } from 'zod';
import type { Ctx } from '../context';
import { referencedEntity, validationError } from '../errors';
import { scalar } from '../query/fields';
import type { Row } from '../store/db';
import { nameSchema, nullableTags } from './common';
import { configWritten } from '../policy/entityHooks';
import type { ResourceDef } from './resource';
import { SVC_PROXY_CONFIG_TYPE_ID } from './builtinConfigTypes';
import { validateShareConfig } from '../shares';

const data = z.record(z.string(), z.unknown());

/** Validates config data against its config type's JSON schema (field errors point into `data`). */
export function validateConfigData(ctx: Ctx, configTypeId: string, value: unknown): void {
  const type = ctx.core.store.getSql<Row>('SELECT id, schema, updated_at FROM config_types WHERE id = ?', configTypeId);
  if (!type) throw validationError('configTypeId', 'config type not found', configTypeId);
  ctx.core.schemas.validate(`${type.id}@${type.updated_at}`, JSON.parse(type.schema as string), value);
}

export const configs: ResourceDef = {
  entity: 'configs',
  table: 'configs',
  permission: 'config',
  columns: {
    name: { column: 'name', codec: 'string' },
    configTypeId: { column: 'config_type_id', codec: 'string' },
    data: { column: 'data', codec: 'json' },
  },
  refs: { configType: { column: 'config_type_id', entity: 'config-types', table: 'config_types' } },
  fields: { name: scalar('string', 't.name'), configTypeId: scalar('string', 't.config_type_id'), type: scalar('string', 't.config_type_id') },
  defaultSort: 't.name ASC',
  schemas: {
    create: z.object({ name: nameSchema, configTypeId: z.string(), data, tags: nullableTags.optional() }),
    update: z.object({ name: nameSchema, data, tags: nullableTags.optional() }),
    patch: z.object({ name: nameSchema.optional(), data: data.optional(), tags: nullableTags.optional() }),
  },
  links: (row) => ({ 'config-type': `config-types/${row.config_type_id}`, services: `configs/${row.id}/services` }),
  beforeWrite(_op, input, existing, ctx) {
    const typeId = (existing?.config_type_id as string | undefined) ?? input.configTypeId;
    if (input.data !== undefined) validateConfigData(ctx, typeId, input.data);
    if (input.data !== undefined && typeId === SVC_PROXY_CONFIG_TYPE_ID) validateShareConfig(ctx, input.data, existing?.id as string | undefined);
  },
  beforeDelete(row, ctx) {
    if (ctx.core.store.getSql('SELECT 1 FROM service_configs WHERE config_id = ? LIMIT 1', row.id)) {
      throw referencedEntity('the config is used by services');
    }
    if (ctx.core.store.getSql('SELECT 1 FROM identity_service_configs WHERE config_id = ? LIMIT 1', row.id)) {
      throw referencedEntity('the config is used by identity service config overrides');
    }
  },
  afterWrite(op, id, _input, _existing, ctx) {
    if (op !== 'create') configWritten(ctx.core, id);
  },
};
