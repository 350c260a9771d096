import { z } from 'zod';
import { advertiseNetworkAddress, networkAddressView } from '../../core/dataPlane/index';
import { authedProcedure, router } from '../trpc';

/** The address the API and the built-in router advertise (what enrollment JWTs and sessions name), and changing it. */
export const networkAddressRouter = router({
  /** What is advertised, whether only this machine can reach it, and this machine's other addresses. */
  view: authedProcedure.query(({ ctx }) => networkAddressView(ctx.zctx, ctx.networkAddress)),
  /** Advertise `host` for the API and the router (they listen there too; the choice survives a restart). */
  advertise: authedProcedure
    .input(z.object({ host: z.string().max(200) }))
    .mutation(({ ctx, input }) => advertiseNetworkAddress(ctx.zctx, ctx.networkAddress, input)),
});
