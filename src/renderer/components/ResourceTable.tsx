import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState, type ReactNode } from 'react';
import { DEFAULT_PAGE_SIZE } from '../../shared/console';
import { useResourceDescription } from '../lib/describe';
import { errorInfo } from '../lib/errors';
import { downloadText, formatDate } from '../lib/format';
import { toFilter } from '../lib/search';
import type { Entity, ResourceName, SortDir } from '../lib/types';
import { setHashQuery, useHashQuery } from '../router';
import { useTRPC, useTRPCClient } from '../trpc';
import { BulkBar, type BulkConfig } from './BulkActions';
import { ErrorBox, Spinner } from './Status';

export interface Column {
  field: string;
  label: string;
  /**
   * Sortable when the core says the field is (`resources.describe`); false keeps a column unsortable anyway (e.g. it
   * shows a name where sorting would order by id).
   */
  sortable?: false;
  render?: (entity: Entity) => ReactNode;
}

export interface ResourceTableProps {
  resource: ResourceName;
  columns: Column[];
  /** accessible name of the table */
  label: string;
  defaultSort?: { field: string; dir: SortDir };
  /** a fixed ZitiQL restriction (the filter box is hidden then) */
  fixedFilter?: string;
  pageSize?: number;
  /** no filter box and no paging controls (dashboard widgets) */
  compact?: boolean;
  rowActions?: (entity: Entity) => ReactNode;
  emptyText?: string;
  /** rows can be selected (kept across pages) and acted on together */
  bulk?: BulkConfig;
  /**
   * Filter, sort and page live in the page's URL (`#/identities?filter=…&sort=name:desc&offset=25`), so a reload or
   * Back restores them; default: on for a page's main list (not compact, no fixed filter). One such table per page.
   */
  urlState?: boolean;
}

/** What a list shows: the filter box's text, the sort, the page. */
interface ListState {
  filter: string;
  sort?: { field: string; dir: SortDir };
  offset: number;
  limit: number;
}

const PAGE_SIZES = [10, 25, 50, 100];

/** The list state a URL query names, checked (anything malformed falls back to the defaults). */
function stateFromQuery(q: URLSearchParams, defaults: ListState): ListState {
  const sort = q.get('sort')?.match(/^([A-Za-z_][A-Za-z0-9_.-]{0,100}):(asc|desc)$/);
  const offset = Number(q.get('offset'));
  const limit = Number(q.get('limit'));
  return {
    filter: q.get('filter') ?? defaults.filter,
    sort: sort ? { field: sort[1]!, dir: sort[2] as SortDir } : defaults.sort,
    offset: Number.isInteger(offset) && offset > 0 && offset <= 100_000 ? offset : 0,
    limit: PAGE_SIZES.includes(limit) || limit === defaults.limit ? limit : defaults.limit,
  };
}

/** The URL query of a list state: only what differs from the defaults. */
function queryOfState(s: ListState, defaults: ListState): URLSearchParams {
  const q = new URLSearchParams();
  if (s.filter) q.set('filter', s.filter);
  if (s.sort && (s.sort.field !== defaults.sort?.field || s.sort.dir !== defaults.sort?.dir)) q.set('sort', `${s.sort.field}:${s.sort.dir}`);
  if (s.offset) q.set('offset', String(s.offset));
  if (s.limit !== defaults.limit) q.set('limit', String(s.limit));
  return q;
}

/** Renders a cell: the column's own renderer, or a sensible default for the value's type. */
function cell(column: Column, entity: Entity): ReactNode {
  if (column.render) return column.render(entity);
  const v = entity[column.field];
  if (v === null || v === undefined) return '';
  if (typeof v === 'boolean') return v ? 'Yes' : 'No';
  if (Array.isArray(v)) return v.join(', ');
  if (/At$/.test(column.field)) return formatDate(v);
  if (typeof v === 'object') return (v as { name?: string }).name ?? JSON.stringify(v);
  return String(v);
}

/**
 * The one table of the console: server-side paging, ZitiQL filter (errors shown inline) and sorting through
 * `resources.list`; never loads a whole table.
 */
export function ResourceTable(props: ResourceTableProps) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const filterId = useId();
  const hintId = useId();
  const errorId = useId();
  const urlState = props.urlState ?? (!props.compact && !props.fixedFilter);
  const defaults: ListState = { filter: '', sort: props.defaultSort, offset: 0, limit: props.pageSize ?? DEFAULT_PAGE_SIZE };
  const hashQuery = useHashQuery();
  const [local, setLocal] = useState(defaults);
  const state = urlState ? stateFromQuery(hashQuery, defaults) : local;
  const { filter: applied, sort, offset, limit } = state;
  /** a new list state (a new filter, sort or page size starts at the first page) */
  function update(patch: Partial<ListState>) {
    const next = { ...state, offset: 0, ...patch };
    setExported(undefined);
    if (urlState) setHashQuery(queryOfState(next, defaults));
    else setLocal(next);
  }
  const [text, setText] = useState(applied);
  const [selected, setSelected] = useState<Map<string, string>>(() => new Map());
  const [exported, setExported] = useState<{ message: string; error?: unknown }>();
  const [exporting, setExporting] = useState(false);

  // the filter applies while typing, once the typing pauses; Back (a new filter in the URL) refills the box
  useEffect(() => {
    if (text === applied) return;
    const t = setTimeout(() => update({ filter: text }), 350);
    return () => clearTimeout(t);
  }, [text, hashQuery, local]);
  useEffect(() => setText(applied), [applied]);

  const description = useResourceDescription(props.resource);
  const filterable = description.data?.filterable;
  const filter = props.fixedFilter ?? toFilter(applied, filterable);
  const query = useQuery(
    trpc.resources.list.queryOptions({ resource: props.resource, limit, offset, filter, sort }, { placeholderData: keepPreviousData }),
  );

  const filterError = query.error && errorInfo(query.error).ziti?.code === 'INVALID_FILTER' ? errorInfo(query.error).message : undefined;
  const page = query.data;
  const total = page?.meta.pagination.totalCount ?? 0;
  const sortableField = (c: Column) => c.sortable !== false && !!description.data?.sortable.includes(c.field);

  const selectable = !!props.bulk;
  const pageIds = (page?.data ?? []).map((e) => e.id);
  const allOnPage = pageIds.length > 0 && pageIds.every((id) => selected.has(id));
  function select(entities: Entity[], on: boolean) {
    setSelected((cur) => {
      const next = new Map(cur);
      for (const e of entities) {
        if (on) next.set(e.id, e.name ?? e.id);
        else next.delete(e.id);
      }
      return next;
    });
  }

  function toggleSort(field: string) {
    update({ sort: sort?.field === field ? { field, dir: sort.dir === 'asc' ? 'desc' : 'asc' } : { field, dir: 'asc' } });
  }

  /** The whole filtered result (every page) as a file, built by the core. */
  async function exportAs(format: 'csv' | 'json') {
    setExporting(true);
    try {
      const r = await client.resources.export.query({ resource: props.resource, filter, sort, format });
      downloadText(r.filename, r.content, r.mimeType);
      setExported({
        message: `${r.filename}: ${r.rows} row${r.rows === 1 ? '' : 's'}${r.truncated ? ` (only the first ${r.rows}: narrow the filter for the rest)` : ''}.`,
      });
    } catch (error) {
      setExported({ message: '', error });
    } finally {
      setExporting(false);
    }
  }

  return (
    <div className="resource-table">
      {!props.compact && !props.fixedFilter && (
        <form className="table-filter" role="search" onSubmit={(e) => (e.preventDefault(), update({ filter: text }))}>
          <label htmlFor={filterId}>Filter</label>
          <input
            id={filterId}
            type="search"
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder='web   or   name contains "web" and tags.env = "prod"'
            aria-describedby={filterError ? `${errorId} ${hintId}` : hintId}
            aria-invalid={filterError ? true : undefined}
            spellCheck={false}
            autoComplete="off"
          />
          <p id={hintId} className="hint">
            Plain words search names{filterable?.includes('roleAttributes') ? ' and role attributes; #attr finds a role attribute' : ''}; ZitiQL
            filters work too
            {filterable ? ` (fields: ${filterable.join(', ')})` : ''}.
          </p>
          {filterError && (
            <p id={errorId} className="field-error" role="alert">
              {filterError}
            </p>
          )}
        </form>
      )}
      {props.bulk && selected.size > 0 && (
        <BulkBar
          resource={props.resource}
          config={props.bulk}
          selected={selected}
          onClear={() => setSelected(new Map())}
          onRemoved={(ids) => setSelected((cur) => new Map([...cur].filter(([id]) => !ids.includes(id))))}
        />
      )}
      {query.isPending && <Spinner />}
      {query.error && !filterError && <ErrorBox error={query.error} retry={() => query.refetch()} />}
      {page && (
        <>
          <div className="table-scroll">
            <table aria-label={props.label} aria-busy={query.isFetching}>
              <thead>
                <tr>
                  {selectable && (
                    <th scope="col" className="select-cell">
                      <input
                        type="checkbox"
                        aria-label="Select all rows on this page"
                        checked={allOnPage}
                        onChange={(e) => select(page.data, e.target.checked)}
                      />
                    </th>
                  )}
                  {props.columns.map((c) => {
                    const sorted = sort?.field === c.field ? sort.dir : undefined;
                    return (
                      <th key={c.field} scope="col" aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : undefined}>
                        {sortableField(c) ? (
                          <button type="button" className="sort-button" onClick={() => toggleSort(c.field)}>
                            {c.label}
                            <span aria-hidden="true">{sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}</span>
                          </button>
                        ) : (
                          c.label
                        )}
                      </th>
                    );
                  })}
                  {props.rowActions && (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {page.data.map((e) => (
                  <tr key={e.id}>
                    {selectable && (
                      <td className="select-cell" data-label="Select">
                        <input
                          type="checkbox"
                          aria-label={`Select ${e.name ?? e.id}`}
                          checked={selected.has(e.id)}
                          onChange={(ev) => select([e], ev.target.checked)}
                        />
                      </td>
                    )}
                    {props.columns.map((c) => (
                      <td key={c.field} data-label={c.label}>
                        {cell(c, e)}
                      </td>
                    ))}
                    {props.rowActions && <td className="row-actions">{props.rowActions(e)}</td>}
                  </tr>
                ))}
                {!page.data.length && (
                  <tr>
                    <td colSpan={props.columns.length + (props.rowActions ? 1 : 0) + (selectable ? 1 : 0)} className="empty">
                      {props.emptyText ?? (filter && !props.fixedFilter ? 'Nothing matches the filter.' : 'None yet.')}
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
          {!props.compact && (
            <nav className="pager" aria-label={`${props.label} pages`}>
              <span aria-live="polite">{total ? `${offset + 1}–${Math.min(offset + limit, total)} of ${total}` : '0 of 0'}</span>
              <button type="button" onClick={() => update({ offset: Math.max(0, offset - limit) })} disabled={offset === 0}>
                Previous
              </button>
              <button type="button" onClick={() => update({ offset: offset + limit })} disabled={offset + limit >= total}>
                Next
              </button>
              <label>
                Rows per page{' '}
                <select value={limit} onChange={(e) => update({ limit: Number(e.target.value) })}>
                  {[...new Set([...PAGE_SIZES, defaults.limit])]
                    .sort((a, b) => a - b)
                    .map((n) => (
                      <option key={n} value={n}>
                        {n}
                      </option>
                    ))}
                </select>
              </label>
              <span className="export-buttons" role="group" aria-label={`Export ${props.label}`}>
                <button type="button" className="secondary" disabled={exporting || !total} onClick={() => exportAs('csv')}>
                  Export CSV
                </button>
                <button type="button" className="secondary" disabled={exporting || !total} onClick={() => exportAs('json')}>
                  Export JSON
                </button>
              </span>
            </nav>
          )}
          {exported?.error ? (
            <ErrorBox error={exported.error} title="Not exported:" />
          ) : exported ? (
            <p className="hint" role="status">
              {`Exported ${exported.message}`}
            </p>
          ) : null}
        </>
      )}
    </div>
  );
}
