import { z } from 'zod';
import { listRoleAttributes } from '../../core/entities/listings';
import { listResource } from '../../core/entities/resource';
import { KIND_RESOURCES } from '../../core/policy/kindResources';
import { ROLE_KIND_NAMES } from '../../core/policy/kinds';
import { parseRoles, parseSemantic, roleMatchSql } from '../../core/policy/roles';
import { authedProcedure, router } from '../trpc';

const kind = z.enum(ROLE_KIND_NAMES);
const PREVIEW_SIZE = 8;

/** Quotes a value as a ZitiQL string literal. */
export const zitiString = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

export const rolesRouter = router({
  /** Role attributes in use by a kind (as `/identity-role-attributes` etc.), filtered by what was typed. */
  attributes: authedProcedure.input(z.object({ kind, contains: z.string().max(200).default('') })).query(({ ctx, input }) => {
    const filter = input.contains ? `id icontains ${zitiString(input.contains)}` : undefined;
    return listRoleAttributes(ctx.zctx, input.kind, KIND_RESOURCES[input.kind].permission, { limit: 20, filter }).data;
  }),

  /**
   * Which entities of a kind a policy side's roles select (the roleFilter/roleSemantic of the kind's list): the
   * count and the first few names, for the "matches as you type" preview of policy forms.
   */
  preview: authedProcedure
    .input(z.object({ kind, roles: z.array(z.string().max(1000)).max(200), semantic: z.enum(['AllOf', 'AnyOf']).default('AllOf') }))
    .query(({ ctx, input }) => {
      const { def } = KIND_RESOURCES[input.kind];
      const roles = input.roles.map((r) => r.trim()).filter(Boolean);
      const match = roles.length ? roleMatchSql(input.kind, parseRoles(roles, 'roles'), parseSemantic(input.semantic)) : { where: '0', params: [] };
      const page = listResource(ctx.zctx, def, { limit: PREVIEW_SIZE }, match);
      return { totalCount: page.meta.pagination.totalCount, items: page.data.map((e) => ({ id: e.id as string, name: e.name as string })) };
    }),
});
