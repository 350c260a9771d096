import { ApiError } from '../errors';
import { compileFilter, QueryError, type CompileOptions, type CompiledQuery, type QueryFields, type SortKey } from './compile';

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 500;
export const MAX_OFFSET = 100_000;

/** The list parameters every list operation accepts (LP, and RP where supported). */
export interface ListParams {
  limit?: number | string;
  offset?: number | string;
  filter?: string;
  /** the order when the filter has no `sort by` of its own (console column sorts; the REST API has only ZitiQL) */
  sort?: SortKey[];
  roleFilter?: string[] | string;
  roleSemantic?: string;
}

export interface PageQuery {
  compiled: CompiledQuery;
  limit: number;
  offset: number;
}

const invalidPagination = (message: string) => new ApiError('INVALID_PAGINATION', 400, message);

function intParam(name: string, v: number | string | undefined): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = typeof v === 'number' ? v : /^-?\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n)) throw invalidPagination(`${name} must be an integer`);
  return n;
}

/**
 * Compiles the filter and sort and resolves paging: explicit limit/offset parameters win over ZitiQL's skip/limit,
 * a `sort by` in the filter wins over the `sort` parameter. Either one's errors are INVALID_FILTER.
 */
export function pageQuery(params: ListParams, fields: QueryFields, options: Omit<CompileOptions, 'sort'> = {}): PageQuery {
  let compiled: CompiledQuery;
  try {
    compiled = compileFilter(params.filter, fields, { ...options, ...(params.sort ? { sort: params.sort } : {}) });
  } catch (e) {
    if (e instanceof QueryError) throw new ApiError('INVALID_FILTER', 400, `invalid filter: ${e.message}`);
    throw e;
  }
  let limit = intParam('limit', params.limit);
  if (limit === undefined) limit = compiled.limit === 'none' ? MAX_LIMIT : (compiled.limit ?? DEFAULT_LIMIT);
  const offset = intParam('offset', params.offset) ?? compiled.skip ?? 0;
  if (limit < 1 || limit > MAX_LIMIT) throw invalidPagination(`limit must be between 1 and ${MAX_LIMIT}`);
  if (offset < 0 || offset > MAX_OFFSET) throw invalidPagination(`offset must be between 0 and ${MAX_OFFSET}`);
  return { compiled, limit, offset };
}

export interface Page<T> {
  data: T[];
  meta: { pagination: { limit: number; offset: number; totalCount: number }; filterableFields: string[] };
}
