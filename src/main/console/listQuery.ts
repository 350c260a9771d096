import { z } from 'zod';
import type { ListParams } from '../core/query/list';
import { parseZitiQl, QueryError } from '../core/query/zitiql';
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

const IDENT_CHAR = /[A-Za-z0-9_.-]/;

/** Offset of the first top-level `sort`/`skip`/`limit` keyword (outside strings and 'quoted' identifiers), or -1. */
function clauseStart(filter: string): { at: number; word: string } | undefined {
  for (let i = 0; i < filter.length; i++) {
    const c = filter[i]!;
    if (c === '"') {
      for (i++; i < filter.length && filter[i] !== '"'; i++) if (filter[i] === '\\') i++;
      continue;
    }
    if (c === "'") {
      i = filter.indexOf("'", i + 1);
      if (i < 0) return undefined;
      continue;
    }
    if (i > 0 && IDENT_CHAR.test(filter[i - 1]!)) continue;
    const m = /^(sort|skip|limit)(?![A-Za-z0-9_.-])/i.exec(filter.slice(i));
    if (m) return { at: i, word: m[1]!.toLowerCase() };
  }
  return undefined;
}

/**
 * The filter with the table's column sort added as ZitiQL `sort by`. A `sort by` written in the filter itself wins;
 * a filter that does not parse is passed on unchanged so the core reports it (INVALID_FILTER with its position).
 */
export function withSort(filter: string | undefined, sort: ListQuery['sort']): string | undefined {
  const text = filter?.trim() ?? '';
  if (!sort) return text || undefined;
  try {
    if (text) parseZitiQl(text);
  } catch (e) {
    if (e instanceof QueryError) return text;
    throw e;
  }
  const clause = clauseStart(text);
  if (clause?.word === 'sort') return text;
  const sortBy = `sort by ${sort.field} ${sort.dir}`;
  if (!clause) return text ? `${text} ${sortBy}` : sortBy;
  return `${text.slice(0, clause.at)}${sortBy} ${text.slice(clause.at)}`.trim();
}

/** The core's list parameters for a console list query. */
export function toListParams(q: z.output<typeof listQuerySchema>): ListParams {
  return { limit: q.limit, offset: q.offset, filter: withSort(q.filter, q.sort), roleFilter: q.roleFilter, roleSemantic: q.roleSemantic };
}
