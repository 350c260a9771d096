import { z } from 'zod';
import { listKindRoleAttributes, previewRoles } from '../../core/registry';
import { ROLE_KIND_NAMES } from '../../core/policy/index';
import { zitiString } from '../../../shared/console';
import { authedProcedure, router } from '../trpc';

const kind = z.enum(ROLE_KIND_NAMES);
const PREVIEW_SIZE = 8;

export const rolesRouter = router({
  /** Role attributes in use by a kind (as `/identity-role-attributes` etc.), filtered by what was typed. */
  attributes: authedProcedure.input(z.object({ kind, contains: z.string().max(200).default('') })).query(async ({ ctx, input }) => {
    const filter = input.contains ? `id icontains ${zitiString(input.contains)}` : undefined;
    return (await listKindRoleAttributes(ctx.zctx, input.kind, { limit: 20, filter })).data;
  }),

  /**
   * Which entities of a kind a policy side's roles select (the roleFilter/roleSemantic of the kind's list): the
   * count and the first few names, for the "matches as you type" preview of policy forms.
   */
  preview: authedProcedure
    .input(z.object({ kind, roles: z.array(z.string().max(1000)).max(200), semantic: z.enum(['AllOf', 'AnyOf']).default('AllOf') }))
    .query(({ ctx, input }) => previewRoles(ctx.zctx, input.kind, input.roles, input.semantic, PREVIEW_SIZE)),
});
