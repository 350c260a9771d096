import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { SVC_PROXY_CONFIG_TYPE_ID } from '../entities/builtinConfigTypes';
import { configs } from '../entities/configs';
import { createResource, deleteResource, requireRow } from '../entities/resource';
import { services } from '../policy/index';
import { validationError } from '../errors';
import { SHARE_TAG, shareResourceName } from './config';

/**
 * Public shares as `weft share public` makes them: a svc.proxy.v1 config and a service carrying it (same names and
 * tag), created and removed in one transaction through the generic create/delete (with their checks).
 */
export async function createPublicShare(ctx: Ctx, data: Record<string, unknown>): Promise<{ configId: string; serviceId: string }> {
  const name = shareResourceName(typeof data.token === 'string' ? data.token : '');
  const tags = { [SHARE_TAG]: true };
  return ctx.core.store.tx(async () => {
    const configId = await createResource(ctx, configs, { name, configTypeId: SVC_PROXY_CONFIG_TYPE_ID, data, tags });
    const serviceId = await createResource(ctx, services, { name, encryptionRequired: true, configs: [configId], tags });
    return { configId, serviceId };
  });
}

/** Deletes every service carrying the share's config, then the config. */
export async function removePublicShare(ctx: Ctx, configId: string): Promise<void> {
  requirePermission(ctx.caller, 'config', 'delete');
  const store = ctx.core.store;
  const row = await requireRow(store, configs, configId);
  if (row.config_type_id !== SVC_PROXY_CONFIG_TYPE_ID) throw validationError('configId', 'not a share config', configId);
  await store.tx(async () => {
    const carriers = await store.allSql<{ service_id: string }>('SELECT service_id FROM service_configs WHERE config_id = ?', configId);
    for (const { service_id } of carriers) await deleteResource(ctx, services, service_id);
    await deleteResource(ctx, configs, configId);
  });
}
