import { summary } from '../../core/registry';
import { controllerCertificates } from '../../core/ops/index';
import { authedProcedure, router } from '../trpc';

export const dashboardRouter = router({
  /** Counts (as `/summary`), the controller's URLs and certificate expiry; lists come from `resources.list`. */
  overview: authedProcedure.query(async ({ ctx }) => {
    return { counts: await summary(ctx.zctx), urls: ctx.urls(), certificates: controllerCertificates(ctx.zctx) };
  }),
});
