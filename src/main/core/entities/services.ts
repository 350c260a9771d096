import { z } from 'zod';
import type { Ctx } from '../context';
import { validationError } from '../errors';
import { roleAttributesField } from '../query/roleFields';
import { scalar } from '../query/fields';
import { attributesSchema, nameSchema, nullableTags, patchOf } from './common';
import { serviceDeleting, serviceWritten } from '../policy/entityHooks';
import { decorateServices } from '../policy/serviceView';
import type { ResourceDef } from './resource';

const configsSchema = z.array(z.string()).nullable();
const base = {
  configs: configsSchema.optional(),
  maxIdleTimeMillis: z.number().int().min(0).optional(),
  roleAttributes: attributesSchema.optional(),
  tags: nullableTags.optional(),
  terminatorStrategy: z.string().min(1).optional(),
};

/** Checks config ids exist and that no two share a config type; returns them de-duplicated in order. */
function checkConfigs(ctx: Ctx, ids: string[]): string[] {
  const unique = [...new Set(ids)];
  const seenTypes = new Map<string, string>();
  const rows = ctx.core.store.allSql<{ id: string; config_type_id: string }>(
    'SELECT id, config_type_id FROM configs WHERE id IN (SELECT value FROM json_each(?))',
    JSON.stringify(unique),
  );
  const byId = new Map(rows.map((r) => [r.id, r.config_type_id]));
  unique.forEach((id, i) => {
    const type = byId.get(id);
    if (!type) throw validationError(`configs.${i}`, 'config not found', id);
    if (seenTypes.has(type)) throw validationError(`configs.${i}`, `duplicate config type: ${type} (also used by ${seenTypes.get(type)})`, id);
    seenTypes.set(type, id);
  });
  return unique;
}

export const services: ResourceDef = {
  entity: 'services',
  table: 'services',
  permission: 'service',
  roleKind: 'service',
  columns: {
    name: { column: 'name', codec: 'string' },
    encryptionRequired: { column: 'encryption_required', codec: 'bool' },
    maxIdleTimeMillis: { column: 'max_idle_time_millis', codec: 'int' },
    terminatorStrategy: { column: 'terminator_strategy', codec: 'string' },
    roleAttributes: { column: 'role_attributes', codec: 'json' },
    configs: { column: 'configs', codec: 'json', write: false },
  },
  fields: {
    name: scalar('string', 't.name'),
    encryptionRequired: scalar('boolean', 't.encryption_required'),
    terminatorStrategy: scalar('string', 't.terminator_strategy'),
    maxIdleTimeMillis: scalar('number', 't.max_idle_time_millis'),
    roleAttributes: roleAttributesField('service'),
  },
  defaultSort: 't.name ASC',
  schemas: {
    create: z.object({ name: nameSchema, encryptionRequired: z.boolean(), ...base }),
    update: z.object({
      name: nameSchema,
      encryptionRequired: z.boolean().optional(),
      ...base,
      configs: configsSchema.default([]),
      roleAttributes: attributesSchema.default([]),
      maxIdleTimeMillis: z.number().int().min(0).default(0),
      terminatorStrategy: z.string().min(1).default('smartrouting'),
      tags: nullableTags.default({}),
    }),
    patch: patchOf({ name: nameSchema, encryptionRequired: z.boolean(), ...base }),
  },
  links: (row) => ({
    configs: `services/${row.id}/configs`,
    'service-policies': `services/${row.id}/service-policies`,
    'service-edge-router-policies': `services/${row.id}/service-edge-router-policies`,
    terminators: `services/${row.id}/terminators`,
    identities: `services/${row.id}/identities`,
    'edge-routers': `services/${row.id}/edge-routers`,
  }),
  beforeWrite(op, input, existing, ctx) {
    for (const k of ['name', 'maxIdleTimeMillis', 'terminatorStrategy'] as const) if (input[k] === null) delete input[k];
    if (op !== 'create' && input.encryptionRequired != null && (input.encryptionRequired ? 1 : 0) !== existing!.encryption_required) {
      throw validationError('encryptionRequired', 'is read-only after create', input.encryptionRequired);
    }
    if (op !== 'create') delete input.encryptionRequired;
    if (input.configs === undefined) return;
    const ids = checkConfigs(ctx, input.configs ?? []);
    input.configs = ids;
    return { configs: JSON.stringify(ids) };
  },
  afterWrite(op, id, input, _existing, ctx) {
    serviceWritten(ctx.core, id, op, input);
    if (input.configs === undefined) return;
    const store = ctx.core.store;
    store.runSql('DELETE FROM service_configs WHERE service_id = ?', id);
    for (const configId of input.configs as string[]) {
      store.runSql('INSERT INTO service_configs (service_id, config_id) VALUES (?, ?)', id, configId);
    }
  },
  beforeDelete(row, ctx) {
    serviceDeleting(ctx.core, row.id as string);
  },
  decorate(items, rows, ctx) {
    decorateServices(ctx, items, rows);
  },
};
