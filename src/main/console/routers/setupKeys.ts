import { z } from 'zod';
import { createSetupKey, setupKeys } from '../../core/enrollment/index';
import { resourceOps } from '../../core/registry';
import { authedProcedure, router } from '../trpc';

const ops = resourceOps(setupKeys);
const id = z.string().min(1).max(200);

/** Setup keys (core/enrollment/setupKeys.ts): the list, a new key (shown once), revoking. */
export const setupKeysRouter = router({
  list: authedProcedure.query(async ({ ctx }) => {
    const page = await ops.list(ctx.zctx, { limit: 500 });
    return page.data as Array<{
      id: string;
      name: string;
      expiresAt: string;
      maxUses: number | null;
      uses: number;
      revoked: boolean;
      roleAttributes: string[] | null;
      identityNamePrefix: string | null;
    }>;
  }),
  create: authedProcedure
    .input(
      z.object({
        name: z.string().max(1000),
        expiresAt: z.string().max(100),
        maxUses: z.number().nullable(),
        roleAttributes: z.array(z.string().max(1000)).max(100),
        identityNamePrefix: z.string().max(100).nullable(),
      }),
    )
    .mutation(({ ctx, input }) => createSetupKey(ctx.zctx, input)),
  revoke: authedProcedure
    .input(z.object({ id }))
    .mutation(async ({ ctx, input }) => void (await ops.update(ctx.zctx, input.id, { revoked: true }, 'patch'))),
});
