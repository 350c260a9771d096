import { z } from 'zod';
import { disableIdentity, enableIdentity, removeIdentityMfa } from '../../core/auth/index';
import { createEnrollment, refreshEnrollment } from '../../core/enrollment/index';
import { authedProcedure, router } from '../trpc';

const id = z.string().min(1).max(200);
/** Enrollment lifetime in minutes (default 180, OpenZiti's) — turned into `expiresAt` by the core's clock. */
const minutes = z.number().int().min(1).max(525_600).default(180);

export const identityRouter = router({
  /** As `POST /identities/{id}/disable`: no logins for `durationMinutes` (0 = until enabled); ends its API sessions. */
  disable: authedProcedure.input(z.object({ id, durationMinutes: z.number().int().min(0).max(5_256_000) })).mutation(async ({ ctx, input }) => {
    await disableIdentity(ctx.zctx, input.id, { durationMinutes: input.durationMinutes });
    return { id: input.id };
  }),
  enable: authedProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
    await enableIdentity(ctx.zctx, input.id);
    return { id: input.id };
  }),
  /** As `DELETE /identities/{id}/mfa`. */
  resetMfa: authedProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
    await removeIdentityMfa(ctx.zctx, input.id);
    return { id: input.id };
  }),
  /** As `POST /enrollments`: a new enrollment (ott, ottca with a CA, updb with a username) for an identity. */
  createEnrollment: authedProcedure
    .input(
      z.object({
        identityId: id,
        method: z.enum(['ott', 'ottca', 'updb']),
        caId: z.string().max(200).optional(),
        username: z.string().max(200).optional(),
        minutes,
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const expiresAt = new Date(ctx.core.clock.now().getTime() + input.minutes * 60_000).toISOString();
      const { minutes: _m, ...body } = input;
      return { id: await createEnrollment(ctx.zctx, { ...body, expiresAt }) };
    }),
  /** As `POST /enrollments/{id}/refresh`: new token, JWT and expiry; the old JWT stops working. */
  refreshEnrollment: authedProcedure.input(z.object({ id, minutes })).mutation(async ({ ctx, input }) => {
    await refreshEnrollment(ctx.zctx, input.id, { expiresAt: new Date(ctx.core.clock.now().getTime() + input.minutes * 60_000).toISOString() });
    return { id: input.id };
  }),
});
