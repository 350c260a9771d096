import { z } from 'zod';
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { identities } from './identities';
import { requireRow } from '../entities/resource';
import { validationError } from '../errors';
import { allRows, getRow, rowShape } from '../store/rows';
import { parseInput } from '../validation';
import { AccessChanges } from './changes';

/** `/identities/{id}/service-configs`: per-identity configs that replace a service's config of the same type. */
const pairs = z.array(z.object({ serviceId: z.string().min(1), configId: z.string().min(1) }));

const entityRef = (entity: string, id: string, name: string) => ({ _links: { self: { href: `./${entity}/${id}` } }, id, name, urlName: entity });

/** An override as listed: the service and the config, with their names. */
const OVERRIDE = rowShape({ service_id: 'string', service_name: 'string', config_id: 'string', config_name: 'string' });
/** A config named in a body, with what its type says. */
const CONFIG_OF_TYPE = rowShape({ id: 'string', name: 'string', config_type_id: 'string', type_name: 'string', target: 'string?' });

export async function listServiceConfigOverrides(ctx: Ctx, identityId: string) {
  requirePermission(ctx.caller, 'identity', 'read');
  await requireRow(ctx.core.store, identities, identityId);
  const rows = await allRows(
    ctx.core.store,
    OVERRIDE,
    `SELECT x.service_id, s.name AS service_name, x.config_id, c.name AS config_name
     FROM identity_service_configs x JOIN services s ON s.id = x.service_id JOIN configs c ON c.id = x.config_id
     WHERE x.identity_id = ? ORDER BY s.name, c.name`,
    identityId,
  );
  return rows.map((r) => ({
    config: entityRef('configs', r.config_id, r.config_name),
    configId: r.config_id,
    service: entityRef('services', r.service_id, r.service_name),
    serviceId: r.service_id,
  }));
}

/** Looks up the configs of a body's pairs, checking services exist and configs target services. */
async function resolvePairs(ctx: Ctx, body: unknown, forAdd: boolean): Promise<Array<{ serviceId: string; configId: string; typeId: string }>> {
  const input = parseInput(pairs, body);
  const store = ctx.core.store;
  const out: Array<{ serviceId: string; configId: string; typeId: string }> = [];
  for (const [i, p] of input.entries()) {
    if (forAdd && !(await store.getSql('SELECT 1 FROM services WHERE id = ?', p.serviceId))) {
      throw validationError(`${i}.serviceId`, 'no service found with the given id', p.serviceId);
    }
    const config = await getRow(
      store,
      CONFIG_OF_TYPE,
      'SELECT c.id, c.name, c.config_type_id, ct.name AS type_name, ct.target FROM configs c JOIN config_types ct ON ct.id = c.config_type_id WHERE c.id = ?',
      p.configId,
    );
    if (!config) throw validationError(`${i}.configId`, 'no config found with the given id', p.configId);
    if (forAdd && config.target != null && config.target !== 'service') {
      throw validationError(`${i}.configId`, `config ${config.name} has config type ${config.type_name} which does not target services`, p.configId);
    }
    out.push({ serviceId: p.serviceId, configId: p.configId, typeId: config.config_type_id });
  }
  return out;
}

/** POST: sets the override of each pair's config type for its service (replacing one of the same type). */
export async function associateServiceConfigs(ctx: Ctx, identityId: string, body: unknown): Promise<void> {
  requirePermission(ctx.caller, 'identity', 'update');
  const store = ctx.core.store;
  // checked with the write: an identity, service or config deleted (or a config type changed) meanwhile is refused
  await store.tx(async () => {
    await requireRow(store, identities, identityId);
    const list = await resolvePairs(ctx, body, true);
    for (const p of list) {
      await store.runSql(
        `INSERT INTO identity_service_configs (identity_id, service_id, config_type_id, config_id) VALUES (?, ?, ?, ?)
         ON CONFLICT (identity_id, service_id, config_type_id) DO UPDATE SET config_id = excluded.config_id`,
        identityId,
        p.serviceId,
        p.typeId,
        p.configId,
      );
    }
    await overridesChanged(ctx, identityId);
  });
}

/** DELETE: removes the override of each pair's config type for its service; no body removes every override. */
export async function removeServiceConfigs(ctx: Ctx, identityId: string, body: unknown): Promise<void> {
  requirePermission(ctx.caller, 'identity', 'update');
  const store = ctx.core.store;
  await requireRow(store, identities, identityId);
  const list = body === undefined || body === null ? undefined : await resolvePairs(ctx, body, false);
  await store.tx(async () => {
    if (!list || !list.length) await store.runSql('DELETE FROM identity_service_configs WHERE identity_id = ?', identityId);
    else {
      for (const p of list) {
        await store.runSql(
          'DELETE FROM identity_service_configs WHERE identity_id = ? AND service_id = ? AND config_type_id = ?',
          identityId,
          p.serviceId,
          p.typeId,
        );
      }
    }
    await overridesChanged(ctx, identityId);
  });
}

async function overridesChanged(ctx: Ctx, identityId: string): Promise<void> {
  const changes = new AccessChanges();
  changes.identities.add(identityId);
  await changes.apply(ctx.core);
}
