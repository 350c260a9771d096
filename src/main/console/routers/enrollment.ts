import { z } from 'zod';
import { caJwt, verifyCa, reEnrollRouter } from '../../core/enrollment/index';
import { authedProcedure, router } from '../trpc';

const id = z.string().min(1).max(200);

export const enrollmentRouter = router({
  /** As `POST /cas/{id}/verify`: a PEM certificate signed by the CA whose common name is the verification token. */
  verifyCa: authedProcedure.input(z.object({ id, certPem: z.string().max(65_536) })).mutation(async ({ ctx, input }) => {
    await verifyCa(ctx.zctx, input.id, input.certPem);
    return { id: input.id };
  }),
  /** As `GET /cas/{id}/jwt`. */
  caJwt: authedProcedure.input(z.object({ id })).query(async ({ ctx, input }) => ({ jwt: await caJwt(ctx.zctx, input.id) })),
  /** As `POST /edge-routers/{id}/re-enroll` and `/routers/{id}/re-enroll`. */
  reEnrollRouter: authedProcedure.input(z.object({ id, kind: z.enum(['edge', 'transit']) })).mutation(async ({ ctx, input }) => {
    await reEnrollRouter(ctx.zctx, input.kind, input.id);
    return { id: input.id };
  }),
});
