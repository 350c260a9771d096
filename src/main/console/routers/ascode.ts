import { z } from 'zod';
import { exportNetwork, formatNetwork, importNetwork, parseNetwork } from '../../core/ops/index';
import { authedProcedure, router } from '../trpc';

/** A file's text as the console read it (JSON or YAML); the core parses it and checks every entry. */
const file = z.object({ text: z.string().max(16 << 20), dryRun: z.boolean().default(false) });

/** The network as code: the same core operations as `GET /ascode` and `POST /ascode/import` (and their checks). */
export const ascodeRouter = router({
  /** The network's file, as `weft export` writes it. */
  export: authedProcedure
    .input(z.object({ format: z.enum(['json', 'yaml']).default('yaml') }))
    .query(async ({ ctx, input }) => ({ format: input.format, text: formatNetwork(await exportNetwork(ctx.zctx), input.format) })),
  /** The plan of a file (dry run: nothing is written), or the import itself (one transaction). */
  import: authedProcedure.input(file).mutation(({ ctx, input }) => importNetwork(ctx.zctx, parseNetwork(input.text), { dryRun: input.dryRun })),
});
