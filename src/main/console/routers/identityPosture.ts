import { z } from 'zod';
import { identityFailedServiceRequests, postureDataView } from '../../core/policy/index';
import { authedProcedure, router } from '../trpc';

const identityId = z.object({ identityId: z.string().min(1).max(200) });

/** An identity's posture: what its clients reported and which session requests failed posture checks. */
export const identityPostureRouter = router({
  /** As `GET /identities/{id}/posture-data`. */
  data: authedProcedure.input(identityId).query(({ ctx, input }) => postureDataView(ctx.zctx, input.identityId)),
  /** As `GET /identities/{id}/failed-service-requests`: newest first, at most MAX_FAILURES_PER_IDENTITY kept. */
  failedServiceRequests: authedProcedure.input(identityId).query(async ({ ctx, input }) => {
    return (await identityFailedServiceRequests(ctx.zctx, input.identityId)) as Array<{
      apiSessionId: string;
      serviceId: string;
      serviceName: string;
      sessionType: string;
      when: string;
      policyFailures: Array<{ policyId: string; policyName?: string; checks: Array<Record<string, unknown>> }>;
    }>;
  }),
});
