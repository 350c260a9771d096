import { z } from 'zod';
import { createPublicShare, removePublicShare } from '../../core/shares/index';
import { authedProcedure, router } from '../trpc';

/** Public shares as `weft share public` makes them (core/shareResources.ts). */
export const sharesRouter = router({
  /** Where shares are published and which OAuth providers they may use. */
  options: authedProcedure.query(({ ctx }) => ({ shareUrl: ctx.urls().shareUrl ?? null, providers: ctx.shareProviders ?? null })),
  create: authedProcedure
    .input(z.object({ data: z.record(z.string(), z.unknown()) }))
    .mutation(({ ctx, input }) => createPublicShare(ctx.zctx, input.data)),
  remove: authedProcedure.input(z.object({ configId: z.string().min(1).max(200) })).mutation(async ({ ctx, input }) => {
    await removePublicShare(ctx.zctx, input.configId);
    return { configId: input.configId };
  }),
});
