import { z } from 'zod';
import type { ListParams } from '../core/registry';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type ListQuery } from '../../shared/console';

/** The paging, ZitiQL filter and sort of every console list. */
export const listQuerySchema = z.object({
  limit: z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  offset: z.number().int().min(0).max(100_000).default(0),
  filter: z.string().max(4000).optional(),
  sort: z.object({ field: z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,100}$/, 'must be a field name'), dir: z.enum(['asc', 'desc']) }).optional(),
  roleFilter: z.array(z.string().max(1000)).max(100).optional(),
  roleSemantic: z.enum(['AllOf', 'AnyOf']).optional(),
}) satisfies z.ZodType<ListQuery, unknown>;

/** The core's list parameters for a console list query. */
export function toListParams(q: z.output<typeof listQuerySchema>): ListParams {
  const { limit, offset, filter, sort, roleFilter, roleSemantic } = q;
  return { limit, offset, filter, sort: sort && [sort], roleFilter, roleSemantic };
}
