import { z } from 'zod';
import type { Ctx } from '../context';
import { validationError } from '../errors';
import { nameSchema } from '../entities/common';
import { defineResource } from '../entities/define';
import { related } from '../entities/resource';
import { policiesNaming, reach, reachedFrom } from './access';
import { serviceDeleting, serviceWritten } from './entityHooks';
import { decorateServices } from './serviceView';

/** Checks config ids exist and that no two share a config type; returns them de-duplicated in order. */
async function checkConfigs(ctx: Ctx, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const seenTypes = new Map<string, string>();
  const rows = await ctx.core.store.allSql<{ id: string; config_type_id: string }>(
    `SELECT id, config_type_id FROM configs WHERE id IN ${ctx.core.store.sql.jsonValues()}`,
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

export const services = defineResource({
  entity: 'services',
  table: 'services',
  permission: 'service',
  roleKind: 'service',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    // given at create; later writes may repeat it but not change it (beforeWrite)
    encryptionRequired: { codec: 'bool', schema: z.boolean(), required: 'create', filter: true },
    maxIdleTimeMillis: { codec: 'int', schema: z.number().int().min(0), zero: 0, filter: true },
    terminatorStrategy: { codec: 'string', schema: z.string().min(1), zero: 'smartrouting', filter: true },
    configs: { codec: 'json', schema: z.array(z.string()), nullable: true, zero: [] },
  },
  defaultSort: 't.name ASC',
  associations: {
    configs: related('configs', 't.id IN (SELECT config_id FROM service_configs WHERE service_id = ?)'),
    'service-policies': policiesNaming('service', 'service-policies'),
    'service-edge-router-policies': policiesNaming('service', 'service-edge-router-policies'),
    terminators: related('terminators', 't.service_id = ?'),
    identities: reachedFrom('service', 'identities', reach.identitiesOfService, { policyType: true }),
    'edge-routers': reachedFrom('service', 'edge-routers', reach.routersOfService),
  },
  async beforeWrite(op, input, existing, ctx) {
    if (op !== 'create' && input.encryptionRequired != null && (input.encryptionRequired ? 1 : 0) !== existing!.encryption_required) {
      throw validationError('encryptionRequired', 'is read-only after create', input.encryptionRequired);
    }
    if (op !== 'create') delete input.encryptionRequired;
    if (input.configs) input.configs = await checkConfigs(ctx, input.configs);
  },
  async afterWrite(op, id, input, _existing, ctx) {
    await serviceWritten(ctx.core, id, op);
    if (!input.configs) return;
    const store = ctx.core.store;
    await store.runSql('DELETE FROM service_configs WHERE service_id = ?', id);
    for (const configId of input.configs) await store.runSql('INSERT INTO service_configs (service_id, config_id) VALUES (?, ?)', id, configId);
  },
  async beforeDelete(row, ctx) {
    await serviceDeleting(ctx.core, row.id);
  },
  async decorate(items, rows, ctx) {
    await decorateServices(ctx, items, rows);
  },
});
