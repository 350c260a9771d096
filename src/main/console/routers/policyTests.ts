import { z } from 'zod';
import { EXPECTATIONS, policyTestResults, policyTests, runPolicyTests, watchPolicyTests } from '../../core/policy/index';
import { resourceOps } from '../../core/registry';
import { authedProcedure, router } from '../trpc';

const ops = resourceOps(policyTests);
const id = z.string().min(1).max(200);

/** Saved policy tests (core/policy/policyTests.ts): their latest results, writes through the generic path, live runs. */
export const policyTestsRouter = router({
  /** Every test with its latest result (after the runs that changes committed so far asked for). */
  results: authedProcedure.query(({ ctx }) => policyTestResults(ctx.zctx)),
  create: authedProcedure
    .input(
      z.object({
        name: z.string().max(1000),
        identityRole: z.string().max(300),
        serviceRole: z.string().max(300),
        expectation: z.enum(EXPECTATIONS),
      }),
    )
    .mutation(async ({ ctx, input }) => ({ id: await ops.create(ctx.zctx, input) })),
  delete: authedProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => void (await ops.delete(ctx.zctx, input.id))),
  /** Runs every test now. */
  run: authedProcedure.mutation(({ ctx }) => runPolicyTests(ctx.zctx)),
  /**
   * After each run, the run's number (the first at once): the console refetches `results` when it changes. The
   * caller is checked before the stream opens.
   */
  runs: authedProcedure.subscription(async ({ ctx, signal }) => {
    let wake: (() => void) | undefined;
    let changed = true;
    const off = watchPolicyTests(ctx.zctx, () => {
      changed = true;
      wake?.();
    });
    const stop = () => {
      off();
      wake?.();
    };
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
    return (async function* () {
      try {
        while (!signal?.aborted) {
          if (!changed) await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          if (signal?.aborted) break;
          if (!changed) continue;
          changed = false;
          yield (await policyTestResults(ctx.zctx)).run;
        }
      } finally {
        signal?.removeEventListener('abort', stop);
        off();
      }
    })();
  }),
});
