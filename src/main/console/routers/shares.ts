import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { requirePermission } from '../../core/auth/permissions';
import { SVC_PROXY_CONFIG_TYPE_ID } from '../../core/entities/builtinConfigTypes';
import { configs } from '../../core/entities/configs';
import { createResource, deleteResource, requireRow } from '../../core/entities/resource';
import { services } from '../../core/entities/services';
import { SHARE_TAG, shareResourceName } from '../../core/shares';
import { authedProcedure, router } from '../trpc';

/**
 * Public shares as `weft share public` makes them: a svc.proxy.v1 config and a service carrying it (same names and
 * tag), created and removed in one transaction through the core's generic create/delete (with their checks).
 */
export const sharesRouter = router({
  /** Where shares are published and which OAuth providers they may use. */
  options: authedProcedure.query(({ ctx }) => ({ shareUrl: ctx.urls().shareUrl ?? null, providers: ctx.shareProviders ?? null })),

  create: authedProcedure.input(z.object({ data: z.record(z.string(), z.unknown()) })).mutation(({ ctx, input }) => {
    const token = typeof input.data.token === 'string' ? input.data.token : '';
    const name = shareResourceName(token);
    const tags = { [SHARE_TAG]: true };
    return ctx.core.store.tx(() => {
      const configId = createResource(ctx.zctx, configs, { name, configTypeId: SVC_PROXY_CONFIG_TYPE_ID, data: input.data, tags });
      const serviceId = createResource(ctx.zctx, services, { name, encryptionRequired: true, configs: [configId], tags });
      return { configId, serviceId };
    });
  }),

  /** Deletes every service carrying the share's config, then the config. */
  remove: authedProcedure.input(z.object({ configId: z.string().min(1).max(200) })).mutation(({ ctx, input }) => {
    requirePermission(ctx.zctx.caller, 'config', 'delete');
    const store = ctx.core.store;
    const row = requireRow(store, configs, input.configId);
    if (row.config_type_id !== SVC_PROXY_CONFIG_TYPE_ID) throw new TRPCError({ code: 'BAD_REQUEST', message: 'not a share config' });
    store.tx(() => {
      const carriers = store.allSql<{ service_id: string }>('SELECT service_id FROM service_configs WHERE config_id = ?', input.configId);
      for (const { service_id } of carriers) deleteResource(ctx.zctx, services, service_id);
      deleteResource(ctx.zctx, configs, input.configId);
    });
    return { configId: input.configId };
  }),
});
