import { toCsv } from '../csv';
import type { Ctx } from '../context';
import type { ListParams } from '../query/list';
import { resourceOps, type ApiObject, type ResourceDef } from './resource';

export type ExportFormat = 'csv' | 'json';

/** The most rows one export holds (the deepest offset a list reaches, plus its last page). */
export const EXPORT_MAX_ROWS = 100_000;
const PAGE = 500;

export interface ListExport {
  filename: string;
  mimeType: string;
  content: string;
  rows: number;
  /** the filter matched more than EXPORT_MAX_ROWS rows: only the first ones are in the file */
  truncated: boolean;
}

/**
 * A list's whole filtered result (not one page) as a file: the same list operation, caller checks and views as the
 * REST list, read page by page inside one read transaction (a consistent snapshot). `omit`: fields never exported.
 */
export async function exportList(
  ctx: Ctx,
  def: ResourceDef,
  params: Pick<ListParams, 'filter' | 'sort' | 'roleFilter' | 'roleSemantic'>,
  format: ExportFormat,
  omit: readonly string[] = [],
): Promise<ListExport> {
  const { rows: listed, truncated } = await ctx.core.store.read(async () => {
    const out: ApiObject[] = [];
    for (;;) {
      const page = await resourceOps(def).list(ctx, { ...params, limit: PAGE, offset: out.length });
      out.push(...page.data);
      // (explicit paging wins over a filter's own skip/limit, as in every list)
      if (page.data.length < PAGE || out.length >= page.meta.pagination.totalCount) return { rows: out, truncated: false };
      if (out.length >= EXPORT_MAX_ROWS) return { rows: out.slice(0, EXPORT_MAX_ROWS), truncated: true };
    }
  });
  // copies: a listed object may be shared with other replies
  const rows = listed.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => k !== '_links' && !omit.includes(k))) as ApiObject);
  const stamp = ctx.core.clock.now().toISOString().replace(/[:.]/g, '-');
  const base = `${def.entity}-${stamp}`;
  if (format === 'json') {
    return { filename: `${base}.json`, mimeType: 'application/json', content: JSON.stringify(rows, null, 2) + '\n', rows: rows.length, truncated };
  }
  return { filename: `${base}.csv`, mimeType: 'text/csv', content: toCsv(csvTable(rows)), rows: rows.length, truncated };
}

/**
 * Objects as a table: one column per top-level field (in the order they first appear), a reference as its name (or
 * id), a list of plain values joined with "; ", anything else nested as JSON.
 */
export function csvTable(rows: readonly ApiObject[]): string[][] {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const k of Object.keys(row)) {
      if (seen.has(k)) continue;
      seen.add(k);
      columns.push(k);
    }
  }
  return [columns, ...rows.map((row) => columns.map((c) => csvValue(row[c])))];
}

function csvValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.every((x) => x === null || ['string', 'number', 'boolean'].includes(typeof x))) return v.join('; ');
  const o = v as Record<string, unknown>;
  if (!Array.isArray(v) && typeof o.id === 'string' && typeof o.entity === 'string') return String(o.name ?? o.id);
  return JSON.stringify(v);
}
