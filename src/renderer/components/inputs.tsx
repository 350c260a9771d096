import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { toFilter } from '../lib/search';
import type { Entity, ResourceName } from '../lib/types';
import { useTRPC } from '../trpc';
import { useJsonProblemReport } from './JsonGuard';

/** A value that follows `value` after it stops changing for `ms`. */
export function useDebounced<T>(value: T, ms = 250): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

export interface Suggestion {
  value: string;
  label?: string;
}

interface ChipsProps {
  id: string;
  values: string[];
  onChange(values: string[]): void;
  suggestions?: Suggestion[];
  /** what is typed but not yet added (previews use it "as you type") */
  onPendingChange?(text: string): void;
  placeholder?: string;
  describedBy?: string;
  invalid?: boolean;
}

/** A list of strings edited as chips: type and press Enter or comma; Backspace on an empty box removes the last. */
export function ChipsInput(p: ChipsProps) {
  const listId = useId();
  const [text, setText] = useState('');
  const setPending = (t: string) => {
    setText(t);
    p.onPendingChange?.(t);
  };
  const commit = (raw: string) => {
    const parts = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (parts.length) p.onChange([...p.values, ...parts.filter((s) => !p.values.includes(s))]);
    setPending('');
  };
  return (
    <div className="chips-input">
      {p.values.length > 0 && (
        <ul className="chips" aria-label="Added">
          {p.values.map((v) => (
            <li key={v} className="chip">
              <span>{v}</span>
              <button type="button" aria-label={`Remove ${v}`} onClick={() => p.onChange(p.values.filter((x) => x !== v))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <input
        id={p.id}
        value={text}
        list={p.suggestions?.length ? listId : undefined}
        placeholder={p.placeholder}
        aria-describedby={p.describedBy}
        aria-invalid={p.invalid || undefined}
        autoComplete="off"
        spellCheck={false}
        onChange={(e) => (e.target.value.endsWith(',') ? commit(e.target.value) : setPending(e.target.value))}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            commit(text);
          } else if (e.key === 'Backspace' && !text && p.values.length) {
            p.onChange(p.values.slice(0, -1));
          }
        }}
        onBlur={() => commit(text)}
      />
      {p.suggestions?.length ? (
        <datalist id={listId}>
          {p.suggestions.map((s) => (
            <option key={s.value} value={s.value} label={s.label} />
          ))}
        </datalist>
      ) : null}
    </div>
  );
}

interface RefProps {
  id: string;
  resource: ResourceName;
  value: string | null | undefined;
  onChange(id: string | null): void;
  /** "(none)" is a choice */
  nullable?: boolean;
  describedBy?: string;
  invalid?: boolean;
  /** the visible label, for the search box's accessible name */
  label: string;
  /** extra ZitiQL restriction on the choices */
  filter?: string;
}

/** Picks one entity: a server-side name search narrowing a select (never a whole table in the browser). */
export function RefSelect(p: RefProps) {
  const trpc = useTRPC();
  const [search, setSearch] = useState('');
  const q = useDebounced(search);
  const typed = toFilter(q, ['name']);
  const filter =
    [p.filter, typed]
      .filter(Boolean)
      .map((f) => `(${f})`)
      .join(' and ') || undefined;
  const list = useQuery(trpc.resources.list.queryOptions({ resource: p.resource, limit: 50, filter, sort: { field: 'name', dir: 'asc' } }));
  const listed = (list.data?.data ?? []) as Entity[];
  const needCurrent = !!p.value && !listed.some((e) => e.id === p.value);
  const current = useQuery({ ...trpc.resources.get.queryOptions({ resource: p.resource, id: p.value ?? '' }), enabled: needCurrent });
  const options: Entity[] = [...(needCurrent && current.data ? [current.data as Entity] : []), ...listed];
  return (
    <div className="ref-select">
      <input
        type="search"
        aria-label={`Search ${p.label}`}
        placeholder="Search by name…"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
        autoComplete="off"
      />
      <select
        id={p.id}
        value={p.value ?? ''}
        aria-describedby={p.describedBy}
        aria-invalid={p.invalid || undefined}
        aria-busy={list.isFetching}
        onChange={(e) => p.onChange(e.target.value || null)}
      >
        <option value="">{p.nullable ? '(none)' : list.isPending ? 'Loading…' : 'Choose…'}</option>
        {options.map((e) => (
          <option key={e.id} value={e.id}>
            {e.name ?? e.id}
          </option>
        ))}
      </select>
      {list.data && list.data.meta.pagination.totalCount > listed.length && (
        <span className="hint">{`Showing ${listed.length} of ${list.data.meta.pagination.totalCount}; search to narrow.`}</span>
      )}
    </div>
  );
}

/** Picks several entities (e.g. a service's configs): chips of names plus a RefSelect to add one. */
export function RefMultiSelect(p: Omit<RefProps, 'value' | 'onChange' | 'nullable'> & { value: string[]; onChange(ids: string[]): void }) {
  const trpc = useTRPC();
  const filter = p.value.length ? `id in [${p.value.map((v) => JSON.stringify(v)).join(', ')}]` : undefined;
  const chosen = useQuery({ ...trpc.resources.list.queryOptions({ resource: p.resource, limit: 100, filter }), enabled: !!filter });
  const names = new Map(((chosen.data?.data ?? []) as Entity[]).map((e) => [e.id, e.name ?? e.id]));
  return (
    <div className="ref-multi">
      {p.value.length > 0 && (
        <ul className="chips" aria-label="Chosen">
          {p.value.map((id) => (
            <li key={id} className="chip">
              <span>{names.get(id) ?? id}</span>
              <button type="button" aria-label={`Remove ${names.get(id) ?? id}`} onClick={() => p.onChange(p.value.filter((v) => v !== id))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <RefSelect {...p} value={null} nullable onChange={(id) => id && !p.value.includes(id) && p.onChange([...p.value, id])} />
    </div>
  );
}

/** Tags as key/value rows. */
export function TagsEditor({ id, value, onChange }: { id: string; value: Record<string, unknown>; onChange(v: Record<string, unknown>): void }) {
  const [rows, setRows] = useState<Array<[string, string]>>(() => Object.entries(value ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]));
  const update = (next: Array<[string, string]>) => {
    setRows(next);
    onChange(Object.fromEntries(next.filter(([k]) => k.trim()).map(([k, v]) => [k.trim(), v])));
  };
  return (
    <div className="tags-editor" id={id}>
      {rows.map(([k, v], i) => (
        <div className="tag-row" key={i}>
          <input aria-label={`Tag ${i + 1} name`} value={k} onChange={(e) => update(rows.map((r, j) => (j === i ? [e.target.value, r[1]] : r)))} />
          <input aria-label={`Tag ${i + 1} value`} value={v} onChange={(e) => update(rows.map((r, j) => (j === i ? [r[0], e.target.value] : r)))} />
          <button type="button" aria-label={`Remove tag ${k || i + 1}`} onClick={() => update(rows.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => setRows([...rows, ['', '']])}>
        Add tag
      </button>
    </div>
  );
}

const formatJson = (v: unknown) => (v === undefined ? '' : JSON.stringify(v, null, 2));
const sameJson = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

interface JsonTextareaProps {
  id: string;
  /** the field's label, as the form names it when this editor blocks submitting ("Fix the JSON in <label> first") */
  label: string;
  value: unknown;
  onChange(v: unknown): void;
  /** what else the parsed value must be (blank text is `undefined`): a reason when the field cannot take it */
  check?(v: unknown): string | undefined;
  /** told whenever the editor starts or stops holding text the form cannot submit */
  onProblemChange?(problem: string | undefined): void;
  rows?: number;
  describedBy?: string;
  invalid?: boolean;
}

/**
 * JSON edited as text; blank text is `undefined`. The value changes only when the text parses (and passes `check`);
 * until then the editor says why and reports it to the form around it (JsonGuard), which will not submit. A value
 * changed from outside (another field clearing it) replaces the text, so the text always shows what is submitted.
 */
export function JsonTextarea(p: JsonTextareaProps) {
  // `value`: what the text stands for (the last value given to onChange, or the one received)
  const [state, setState] = useState<{ text: string; value: unknown; problem?: string }>(() => ({ text: formatJson(p.value), value: p.value }));
  if (!sameJson(p.value, state.value)) setState({ text: formatJson(p.value), value: p.value });
  const problem = sameJson(p.value, state.value) ? state.problem : undefined;
  const problemId = useId();
  const { onProblemChange } = p;
  useJsonProblemReport(p.id, p.label, problem);
  useEffect(() => onProblemChange?.(problem), [onProblemChange, problem]);
  return (
    <>
      <textarea
        id={p.id}
        className="code"
        rows={p.rows ?? 8}
        value={state.text}
        spellCheck={false}
        aria-describedby={[p.describedBy, problem ? problemId : undefined].filter(Boolean).join(' ') || undefined}
        aria-invalid={p.invalid || !!problem || undefined}
        onChange={(e) => {
          const text = e.target.value;
          let next: unknown;
          try {
            next = text.trim() ? JSON.parse(text) : undefined;
          } catch (err) {
            setState({ text, value: state.value, problem: `Not valid JSON: ${(err as Error).message}` });
            return;
          }
          const refused = p.check?.(next);
          if (refused) {
            setState({ text, value: state.value, problem: refused });
            return;
          }
          setState({ text, value: next });
          p.onChange(next);
        }}
      />
      {problem && (
        <p id={problemId} className="field-error">
          {problem}
        </p>
      )}
    </>
  );
}
