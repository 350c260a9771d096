import { z } from 'zod';
import { applyAccessFix, explainAccess, FIX_RESOURCES, policyAdvice, previewAccessFix, serviceUsers } from '../../core/policy/index';
import { adviceSentence } from '../adviceSentence';
import { authedProcedure, router } from '../trpc';

const id = z.string().min(1).max(200);
/** The writes of one fix of the "why" chain (as `explain` gives them). */
const changes = z
  .array(
    z.object({
      resource: z.enum(FIX_RESOURCES),
      op: z.enum(['patch', 'create']),
      id: id.optional(),
      body: z.record(z.string(), z.unknown()),
    }),
  )
  .min(1)
  .max(4)
  .refine((list) => list.every((c) => c.op === 'create' || c.id), 'a patch names the id it patches');

export const policyRouter = router({
  /** As `GET /identities/{id}/policy-advice/{serviceId}`, plus a sentence explaining the outcome. */
  advice: authedProcedure.input(z.object({ identityId: id, serviceId: id })).query(async ({ ctx, input }) => {
    const advice = await policyAdvice(ctx.zctx, input.identityId, input.serviceId);
    return { ...advice, sentence: adviceSentence(advice) };
  }),
  /** Why: the policies, routers and posture checks behind the advice, and the smallest change when access is missing. */
  explain: authedProcedure
    .input(z.object({ identityId: id, serviceId: id, want: z.enum(['Dial', 'Bind']).default('Dial') }))
    .query(async ({ ctx, input }) => {
      const explanation = await explainAccess(ctx.zctx, input.identityId, input.serviceId, input.want);
      return { ...explanation, sentence: adviceSentence(explanation.advice) };
    }),
  /** Who would newly reach (or lose) the service if a fix were applied: its writes in a transaction rolled back. */
  previewFix: authedProcedure
    .input(z.object({ serviceId: id, want: z.enum(['Dial', 'Bind']).default('Dial'), changes }))
    .query(({ ctx, input }) => previewAccessFix(ctx.zctx, input.serviceId, input.want, input.changes)),
  /** Applies every write of a fix in one transaction. */
  applyFix: authedProcedure.input(z.object({ changes })).mutation(async ({ ctx, input }) => ({ ids: await applyAccessFix(ctx.zctx, input.changes) })),
  /** Identities that may dial (or bind) a service: a page of them, with the total. */
  serviceUsers: authedProcedure
    .input(z.object({ serviceId: id, type: z.enum(['dial', 'bind']).default('dial'), limit: z.number().int().min(1).max(100).default(20) }))
    .query(async ({ ctx, input }) => {
      const page = await serviceUsers(ctx.zctx, input.serviceId, input.type, { limit: input.limit, offset: 0 });
      return { totalCount: page.meta.pagination.totalCount, items: page.data.map((e) => ({ id: e.id as string, name: e.name as string })) };
    }),
});
