import { z } from 'zod';
import { fabricView, networkLive } from '../../core/dataPlane/index';
import { networkGraph } from '../../core/policy/index';
import { authedProcedure, router } from '../trpc';

export const networkRouter = router({
  /** Identities, services and edge routers joined by their policies (grouped by role attribute), as the core computes it. */
  graph: authedProcedure.input(z.object({ query: z.unknown() })).query(({ ctx, input }) => networkGraph(ctx.zctx, input.query ?? {})),
  /** The live overlay (router state, terminators, every router's circuits with their paths and the classes involved); polled by the network page. */
  live: authedProcedure.query(({ ctx }) => networkLive(ctx.zctx, ctx.dataPlane, ctx.fabric)),
  /** Every router (built-in and stock) with its state, the links between routers, every live circuit with its path; polled. */
  fabric: authedProcedure.query(({ ctx }) => fabricView(ctx.zctx, ctx.fabric, ctx.dataPlane)),
});
