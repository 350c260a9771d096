import { z } from 'zod';
import { policyAdvice } from '../../core/policy/advice';
import { adviceSentence } from '../adviceSentence';
import { authedProcedure, router } from '../trpc';

const id = z.string().min(1).max(200);

export const policyRouter = router({
  /** As `GET /identities/{id}/policy-advice/{serviceId}`, plus a sentence explaining the outcome. */
  advice: authedProcedure.input(z.object({ identityId: id, serviceId: id })).query(({ ctx, input }) => {
    const advice = policyAdvice(ctx.zctx, input.identityId, input.serviceId);
    return { ...advice, sentence: adviceSentence(advice) };
  }),
});
