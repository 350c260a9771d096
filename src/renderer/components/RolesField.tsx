import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { errorInfo } from '../lib/errors';
import { toFilter } from '../lib/search';
import { ROLE_KINDS } from '../../shared/roleKinds';
import type { Entity, ResourceName, RoleKind } from '../lib/types';
import { useTRPC } from '../trpc';
import { ChipsInput, useDebounced, type Suggestion } from './inputs';

/** Suggestions while typing a role: `#attribute`s in use, or `@entity` by name. */
function useRoleSuggestions(kind: RoleKind, text: string, attributesOnly: boolean): Suggestion[] {
  const trpc = useTRPC();
  const q = useDebounced(text.replace(/^[#@]/, ''));
  const wantsEntity = !attributesOnly && text.startsWith('@');
  const attrs = useQuery({ ...trpc.roles.attributes.queryOptions({ kind, contains: q }), enabled: !wantsEntity });
  const entities = useQuery({
    ...trpc.resources.list.queryOptions({ resource: ROLE_KINDS[kind].resource satisfies ResourceName, limit: 20, filter: toFilter(q, ['name']) }),
    enabled: wantsEntity,
  });
  if (wantsEntity) return ((entities.data?.data ?? []) as Entity[]).map((e) => ({ value: `@${e.id}`, label: e.name ?? e.id }));
  return (attrs.data ?? []).map((a) => (attributesOnly ? { value: a } : { value: `#${a}`, label: `attribute ${a}` }));
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
  const suggestions = useRoleSuggestions(p.kind, text, true);
  return <ChipsInput {...p} values={p.value} suggestions={suggestions} onPendingChange={setText} placeholder="e.g. sales, then Enter" />;
}

/**
 * One side of a policy (`#attribute`, `@id`, `#all`) with a live preview of the entities it selects, counting what
 * is still being typed.
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
  const [text, setText] = useState('');
  const suggestions = useRoleSuggestions(p.kind, text, false);
  const pending = text.trim() && /^[#@]./.test(text.trim()) ? [text.trim()] : [];
  const roles = useDebounced([...p.value, ...pending], 200);
  const preview = useQuery(trpc.roles.preview.queryOptions({ kind: p.kind, roles, semantic: p.semantic }, { placeholderData: keepPreviousData }));
  const previewId = `${p.id}-preview`;
  return (
    <>
      <ChipsInput
        {...p}
        values={p.value}
        suggestions={suggestions}
        onPendingChange={setText}
        describedBy={[p.describedBy, previewId].filter(Boolean).join(' ')}
        placeholder="#attribute, @id or #all, then Enter"
      />
      <div id={previewId} className="role-preview" aria-live="polite">
        {preview.error ? (
          <span className="field-error">{errorInfo(preview.error).message}</span>
        ) : preview.data ? (
          preview.data.totalCount === 0 ? (
            <span>{`Matches no ${ROLE_KINDS[p.kind].plural}.`}</span>
          ) : (
            <span>
              {`Matches ${preview.data.totalCount} ${preview.data.totalCount === 1 ? ROLE_KINDS[p.kind].label : ROLE_KINDS[p.kind].plural}: `}
              {preview.data.items.map((e) => e.name).join(', ')}
              {preview.data.totalCount > preview.data.items.length ? ', …' : ''}
            </span>
          )
        ) : (
          <span>Checking matches…</span>
        )}
      </div>
    </>
  );
}
