import { z } from 'zod';
import { associateServiceConfigs, listServiceConfigOverrides, removeServiceConfigs } from '../../core/policy/index';
import { authedProcedure, router } from '../trpc';

const identityId = z.string().min(1).max(200);

/**
 * An identity's service config overrides (as `/identities/{id}/service-configs`). `pairs` is the REST body,
 * `[{serviceId, configId}]`, validated by the core (field errors name `0.configId` etc.).
 */
export const serviceConfigOverridesRouter = router({
  list: authedProcedure.input(z.object({ identityId })).query(({ ctx, input }) => listServiceConfigOverrides(ctx.zctx, input.identityId)),
  associate: authedProcedure.input(z.object({ identityId, pairs: z.unknown() })).mutation(async ({ ctx, input }) => {
    await associateServiceConfigs(ctx.zctx, input.identityId, input.pairs);
    return { identityId: input.identityId };
  }),
  remove: authedProcedure.input(z.object({ identityId, pairs: z.unknown() })).mutation(async ({ ctx, input }) => {
    // as REST: no pairs (or an empty list) removes every override of the identity
    await removeServiceConfigs(ctx.zctx, input.identityId, input.pairs);
    return { identityId: input.identityId };
  }),
});
