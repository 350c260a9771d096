import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { errorInfo } from '../lib/errors';
import { zitiString } from '../../shared/console';
import { ROLE_KINDS } from '../../shared/roleKinds';
import type { Entity, ResourceName, RoleKind } from '../lib/types';
import { useTRPC } from '../trpc';
import { ChipsInput, useDebounced, type Suggestion } from './inputs';

/** Role attributes in use by a kind that contain what is typed (no # or @). */
function useAttributeSuggestions(kind: RoleKind, text: string, enabled = true): string[] {
  const trpc = useTRPC();
  const q = useDebounced(text.replace(/^[#@]/, ''));
  const attrs = useQuery({ ...trpc.roles.attributes.queryOptions({ kind, contains: q }), enabled });
  return enabled ? (attrs.data ?? []) : [];
}

/** Suggestions while typing a role attribute of an entity. */
function useAttributeOnlySuggestions(kind: RoleKind, text: string): Suggestion[] {
  return useAttributeSuggestions(kind, text).map((a) => ({ value: a }));
}

/** Entities of a kind whose name contains what is typed (after a leading @), the first few by name. */
function useEntitySuggestions(kind: RoleKind, text: string, enabled: boolean): Entity[] {
  const trpc = useTRPC();
  const q = useDebounced(text.replace(/^[#@]/, '').trim());
  const entities = useQuery({
    ...trpc.resources.list.queryOptions({
      resource: ROLE_KINDS[kind].resource satisfies ResourceName,
      limit: 8,
      filter: q ? `name icontains ${zitiString(q)}` : undefined,
      sort: { field: 'name', dir: 'asc' },
    }),
    enabled,
    placeholderData: keepPreviousData,
  });
  return enabled ? ((entities.data?.data ?? []) as Entity[]) : [];
}

/**
 * How roles read: `@<id>` as `@<name>` (looked up in one list request for the ids shown), `#attr`, `#all` and a typed
 * `@name` as they are. For role lists, policy pages and chips.
 */
export function useRoleLabels(kind: RoleKind, roles: readonly string[]): (role: string) => string {
  const trpc = useTRPC();
  const ids = [...new Set(roles.filter((r) => r.startsWith('@')).map((r) => r.slice(1)))].sort();
  const found = useQuery({
    ...trpc.resources.list.queryOptions({
      resource: ROLE_KINDS[kind].resource satisfies ResourceName,
      limit: Math.max(1, Math.min(ids.length, 500)),
      filter: `id in [${ids.map(zitiString).join(', ')}]`,
    }),
    enabled: ids.length > 0,
    placeholderData: keepPreviousData,
  });
  const names = new Map(((found.data?.data ?? []) as Entity[]).map((e) => [e.id, e.name ?? e.id]));
  return (role) => (role.startsWith('@') && names.has(role.slice(1)) ? `@${names.get(role.slice(1))}` : role);
}

/** Role attributes of an entity (plain names, no # or @). */
export function AttributesField(p: {
  id: string;
  kind: RoleKind;
  value: string[];
  onChange(v: string[]): void;
  describedBy?: string;
  invalid?: boolean;
}) {
  const [text, setText] = useState('');
  const suggestions = useAttributeOnlySuggestions(p.kind, text);
  return <ChipsInput {...p} values={p.value} suggestions={suggestions} onPendingChange={setText} placeholder="e.g. sales, then Enter" />;
}

interface RoleOption {
  value: string;
  label: string;
  /** what it is: "identity", "attribute", "everything" */
  what: string;
}

/** The picker's options for what is typed: entities of the kind by name (`@`), attributes in use (`#`), `#all`. */
function useRoleOptions(kind: RoleKind, text: string, open: boolean): RoleOption[] {
  const t = text.trim();
  const wantsEntities = open && !t.startsWith('#');
  const wantsAttributes = open && !t.startsWith('@');
  const entities = useEntitySuggestions(kind, t, wantsEntities);
  const attributes = useAttributeSuggestions(kind, t, wantsAttributes);
  const k = ROLE_KINDS[kind];
  const q = t.replace(/^[#@]/, '').toLowerCase();
  return [
    ...entities.map((e) => ({ value: `@${e.id}`, label: `@${e.name ?? e.id}`, what: k.label })),
    ...attributes.slice(0, 8).map((a) => ({ value: `#${a}`, label: `#${a}`, what: 'attribute' })),
    ...(wantsAttributes && 'all'.startsWith(q) ? [{ value: '#all', label: '#all', what: `every ${k.label}` }] : []),
  ];
}

/**
 * One side of a policy (`#attribute`, `@name` or `@id`, `#all`): a picker over the kind's entities (by name) and the
 * attributes in use, chips that show entities by name, and a live preview of the entities it selects, counting what
 * is still being typed. A typed `@name` is kept as typed; the core resolves it to `@id` when the form is saved.
 */
export function RolesField(p: {
  id: string;
  kind: RoleKind;
  value: string[];
  onChange(v: string[]): void;
  semantic: 'AllOf' | 'AnyOf';
  describedBy?: string;
  invalid?: boolean;
}) {
  const trpc = useTRPC();
  const listId = useId();
  const [text, setText] = useState('');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const options = useRoleOptions(p.kind, text, open).filter((o) => !p.value.includes(o.value));
  const label = useRoleLabels(p.kind, p.value);
  const pending = text.trim() && /^[#@]./.test(text.trim()) ? [text.trim()] : [];
  const roles = useDebounced([...p.value, ...pending], 200);
  const preview = useQuery(trpc.roles.preview.queryOptions({ kind: p.kind, roles, semantic: p.semantic }, { placeholderData: keepPreviousData }));
  const previewId = `${p.id}-preview`;
  const add = (values: string[]) => {
    const fresh = values.map((v) => v.trim()).filter((v) => v && !p.value.includes(v));
    if (fresh.length) p.onChange([...p.value, ...new Set(fresh)]);
    setText('');
    setActive(-1);
  };
  const shown = open && options.length > 0;
  const activeOption = shown && active >= 0 ? options[active] : undefined;
  return (
    <>
      <div className="chips-input role-picker">
        {p.value.length > 0 && (
          <ul className="chips" aria-label="Added">
            {p.value.map((v) => (
              <li key={v} className="chip" title={v}>
                <span>{label(v)}</span>
                <button type="button" aria-label={`Remove ${label(v)}`} onClick={() => p.onChange(p.value.filter((x) => x !== v))}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        <input
          id={p.id}
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={shown}
          aria-controls={listId}
          aria-activedescendant={activeOption ? `${listId}-${active}` : undefined}
          value={text}
          placeholder="Type a name, #attribute or #all"
          aria-describedby={[p.describedBy, previewId].filter(Boolean).join(' ')}
          aria-invalid={p.invalid || undefined}
          autoComplete="off"
          spellCheck={false}
          onFocus={() => setOpen(true)}
          onChange={(e) => {
            const v = e.target.value;
            setOpen(true);
            setActive(-1);
            if (v.endsWith(',')) add(v.split(','));
            else setText(v);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              e.preventDefault();
              setOpen(true);
              if (options.length) setActive((a) => (e.key === 'ArrowDown' ? (a + 1) % options.length : (a <= 0 ? options.length : a) - 1));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              if (activeOption) add([activeOption.value]);
              else add([text]);
            } else if (e.key === 'Escape') {
              if (shown) e.preventDefault();
              setOpen(false);
              setActive(-1);
            } else if (e.key === 'Backspace' && !text && p.value.length) {
              p.onChange(p.value.slice(0, -1));
            }
          }}
          onBlur={() => {
            add([text]);
            setOpen(false);
          }}
        />
        <ul id={listId} role="listbox" aria-label={`Matching ${ROLE_KINDS[p.kind].plural} and attributes`} className="role-options" hidden={!shown}>
          {shown &&
            options.map((o, i) => (
              <li
                key={o.value}
                id={`${listId}-${i}`}
                role="option"
                aria-selected={i === active}
                className={i === active ? 'active' : undefined}
                // keep the focus in the box: a click picks the option, then typing goes on
                onMouseDown={(e) => e.preventDefault()}
                onClick={() => add([o.value])}
              >
                <span>{o.label}</span> <span className="muted">{o.what}</span>
              </li>
            ))}
        </ul>
      </div>
      <div id={previewId} className="role-preview" aria-live="polite">
        {preview.error ? (
          <span className="field-error">{errorInfo(preview.error).message}</span>
        ) : preview.data ? (
          <>
            {preview.data.problem && <span className="field-error">{`${preview.data.problem}. `}</span>}
            {preview.data.totalCount === 0 ? (
              <span>{`Matches no ${ROLE_KINDS[p.kind].plural}.`}</span>
            ) : (
              <span>
                {`Matches ${preview.data.totalCount} ${preview.data.totalCount === 1 ? ROLE_KINDS[p.kind].label : ROLE_KINDS[p.kind].plural}: `}
                {preview.data.items.map((e) => e.name).join(', ')}
                {preview.data.totalCount > preview.data.items.length ? ', …' : ''}
              </span>
            )}
          </>
        ) : (
          <span>Checking matches…</span>
        )}
      </div>
    </>
  );
}
