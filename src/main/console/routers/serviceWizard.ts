import { previewServiceWizard, runServiceWizard } from '../../core/policy/index';
import { authedProcedure, router } from '../trpc';
import { z } from 'zod';

/** The body is validated by the core (COULD_NOT_VALIDATE with the field), as for resources.create. */
const body = z.object({ body: z.unknown() });

export const serviceWizardRouter = router({
  /** What the wizard would create, and a dry run of it (rolled back): nothing is kept. */
  preview: authedProcedure.input(body).query(({ ctx, input }) => previewServiceWizard(ctx.zctx, input.body ?? {})),
  /** Creates the service, its configs and policies in one transaction (all or nothing). */
  create: authedProcedure.input(body).mutation(({ ctx, input }) => runServiceWizard(ctx.zctx, input.body ?? {})),
});
