import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { bulkDelete, bulkIdentityState, bulkRoleAttributes, BULK_LIMIT } from '../../core/registry';
import { enrollmentArchive, importIdentities } from '../../core/enrollment/index';
import { CONSOLE_RESOURCES, type ConsoleResourceName } from '../registry';
import { requireOp } from '../resources';
import { authedProcedure, router } from '../trpc';

const resource = z.enum(Object.keys(CONSOLE_RESOURCES) as [ConsoleResourceName, ...ConsoleResourceName[]]);
const ids = z.array(z.string().min(1).max(200)).min(1).max(BULK_LIMIT);
const attrs = z.array(z.string().max(1000)).max(100).default([]);
/** CSV text: the console's request cap (1 MiB) bounds it further. */
const csv = z.string().max(900_000);

export const bulkRouter = router({
  /** Deletes each entity (each its own write; failures are reported per entity). */
  delete: authedProcedure.input(z.object({ resource, ids })).mutation(({ ctx, input }) => {
    const r = CONSOLE_RESOURCES[input.resource];
    requireOp(input.resource, r, 'delete');
    return bulkDelete(ctx.zctx, r.def, input.ids);
  }),
  /** Adds and removes role attributes on each entity. */
  roleAttributes: authedProcedure.input(z.object({ resource, ids, add: attrs, remove: attrs })).mutation(({ ctx, input }) => {
    const r = CONSOLE_RESOURCES[input.resource];
    if (!r.roleKind) throw new TRPCError({ code: 'BAD_REQUEST', message: `${input.resource} have no role attributes` });
    requireOp(input.resource, r, 'patch');
    return bulkRoleAttributes(ctx.zctx, r.def, input.ids, { add: input.add, remove: input.remove });
  }),
  /** Disables (0 minutes = until enabled) or enables identities. */
  identityState: authedProcedure
    .input(z.object({ ids, disabled: z.boolean(), durationMinutes: z.number().int().min(0).max(5_256_000).default(0) }))
    .mutation(({ ctx, input }) => bulkIdentityState(ctx.zctx, CONSOLE_RESOURCES.identities.def, input.ids, input)),
  /** Identities from CSV: `dryRun` previews (nothing is kept); otherwise the good rows are created. */
  importIdentities: authedProcedure
    .input(z.object({ csv, dryRun: z.boolean() }))
    .mutation(({ ctx, input }) => importIdentities(ctx.zctx, input.csv, { dryRun: input.dryRun })),
  /** The enrollment JWTs of identities as one ZIP archive (base64). A mutation: the ids may be many (POST). */
  enrollmentArchive: authedProcedure.input(z.object({ ids })).mutation(({ ctx, input }) => enrollmentArchive(ctx.zctx, input.ids)),
});
