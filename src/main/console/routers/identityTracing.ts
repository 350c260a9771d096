import { z } from 'zod';
import { getTrace, updateTrace } from '../../core/ops/index';
import { authedProcedure, router } from '../trpc';

const identityId = z.string().min(1).max(200);

/** Data flow tracing of an identity (as `GET`/`PUT /identities/{id}/trace`). */
export const identityTracingRouter = router({
  get: authedProcedure.input(z.object({ identityId })).query(({ ctx, input }) => getTrace(ctx.zctx, input.identityId)),
  /** The body is the REST trace spec (`enabled`, `duration`, `channels`, `traceId`), validated by the core. */
  update: authedProcedure
    .input(z.object({ identityId, body: z.unknown() }))
    .mutation(({ ctx, input }) => updateTrace(ctx.zctx, input.identityId, input.body ?? {})),
});
