import { dataPlaneView } from '../../core/dataPlane/index';
import { authedProcedure, router } from '../trpc';

export const dataPlaneRouter = router({
  /** The built-in router's state, terminators and open circuits (polled by the live traffic page). */
  live: authedProcedure.query(({ ctx }) => dataPlaneView(ctx.zctx, ctx.dataPlane)),
});
