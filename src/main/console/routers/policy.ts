import { z } from 'zod';
import { policyAdvice, explainAccess, serviceUsers } from '../../core/policy/index';
import { adviceSentence } from '../adviceSentence';
import { authedProcedure, router } from '../trpc';

const id = z.string().min(1).max(200);

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
  /** Identities that may dial (or bind) a service: a page of them, with the total. */
  serviceUsers: authedProcedure
    .input(z.object({ serviceId: id, type: z.enum(['dial', 'bind']).default('dial'), limit: z.number().int().min(1).max(100).default(20) }))
    .query(async ({ ctx, input }) => {
      const page = await serviceUsers(ctx.zctx, input.serviceId, input.type, { limit: input.limit, offset: 0 });
      return { totalCount: page.meta.pagination.totalCount, items: page.data.map((e) => ({ id: e.id as string, name: e.name as string })) };
    }),
});
