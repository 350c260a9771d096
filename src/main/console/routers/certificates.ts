import { listCertificates } from '../../core/ops/index';
import { authedProcedure, router } from '../trpc';

export const certificatesRouter = router({
  /** Every certificate Weft issued or trusts, soonest expiry first (as GET /weft/certificates). */
  list: authedProcedure.query(({ ctx }) => listCertificates(ctx.zctx)),
});
