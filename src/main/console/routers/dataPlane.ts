import { dataPlaneView } from '../../core/dataPlane/index';
import { metricHistory } from '../../core/ops/index';
import { authedProcedure, router } from '../trpc';

export const dataPlaneRouter = router({
  /** The built-in router's state, terminators and open circuits (polled by the live traffic page). */
  live: authedProcedure.query(({ ctx }) => dataPlaneView(ctx.zctx, ctx.dataPlane)),
  /** The last hour of metric samples (10 s apart) for the metrics page's charts; empty when metrics are off. */
  metrics: authedProcedure.query(({ ctx }) => metricHistory(ctx.zctx, ctx.metricHistory)),
});
