import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState, type ReactNode } from 'react';
import { DEFAULT_PAGE_SIZE } from '../../shared/console';
import { useResourceDescription } from '../lib/describe';
import { errorInfo } from '../lib/errors';
import { formatDate } from '../lib/format';
import { toFilter } from '../lib/search';
import type { Entity, ResourceName, SortDir } from '../lib/types';
import { useTRPC } from '../trpc';
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
  const filterId = useId();
  const hintId = useId();
  const errorId = useId();
  const [text, setText] = useState('');
  const [applied, setApplied] = useState('');
  const [sort, setSort] = useState(props.defaultSort);
  const [offset, setOffset] = useState(0);
  const [limit, setLimit] = useState(props.pageSize ?? DEFAULT_PAGE_SIZE);
  const [selected, setSelected] = useState<Map<string, string>>(() => new Map());

  // the filter applies while typing, once the typing pauses
  useEffect(() => {
    const t = setTimeout(() => setApplied(text), 350);
    return () => clearTimeout(t);
  }, [text]);
  useEffect(() => setOffset(0), [applied, sort, limit]);

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
    setSort((s) => (s?.field === field ? { field, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { field, dir: 'asc' }));
  }

  return (
    <div className="resource-table">
      {!props.compact && !props.fixedFilter && (
        <form className="table-filter" role="search" onSubmit={(e) => (e.preventDefault(), setApplied(text))}>
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
              <button type="button" onClick={() => setOffset(Math.max(0, offset - limit))} disabled={offset === 0}>
                Previous
              </button>
              <button type="button" onClick={() => setOffset(offset + limit)} disabled={offset + limit >= total}>
                Next
              </button>
              <label>
                Rows per page{' '}
                <select value={limit} onChange={(e) => setLimit(Number(e.target.value))}>
                  {[10, 25, 50, 100].map((n) => (
                    <option key={n} value={n}>
                      {n}
                    </option>
                  ))}
                </select>
              </label>
            </nav>
          )}
        </>
      )}
    </div>
  );
}
