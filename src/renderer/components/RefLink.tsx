import { useQuery } from '@tanstack/react-query';
import { zitiString } from '../../shared/console';
import type { Entity, ResourceName } from '../lib/types';
import { Link } from '../router';
import { useTRPC } from '../trpc';

export interface Ref {
  entity?: string;
  id: string;
  name?: string;
}

/** A link to the entity a reference names (refs come named and batched from the core's views). */
export function RefLink({ value, page }: { value: unknown; page?: string }) {
  const ref = value as Ref | null | undefined;
  if (!ref?.id) return <span className="muted">—</span>;
  return <Link to={`/${page ?? ref.entity}/${encodeURIComponent(ref.id)}`}>{ref.name ?? ref.id}</Link>;
}

/** Entities named by id (a service's configs, say), shown by name with links; one list request for all of them. */
export function IdNames({ resource, ids }: { resource: ResourceName; ids: readonly string[] }) {
  const trpc = useTRPC();
  const sorted = [...new Set(ids)].sort();
  const found = useQuery({
    ...trpc.resources.list.queryOptions({
      resource,
      limit: Math.max(1, Math.min(sorted.length, 500)),
      filter: `id in [${sorted.map(zitiString).join(', ')}]`,
    }),
    enabled: sorted.length > 0,
  });
  if (!sorted.length) return <span className="muted">—</span>;
  const names = new Map(((found.data?.data ?? []) as Entity[]).map((e) => [e.id, e.name ?? e.id]));
  return (
    <>
      {sorted.map((id, i) => (
        <span key={id}>
          {i > 0 && ', '}
          <Link to={`/${resource}/${encodeURIComponent(id)}`}>{names.get(id) ?? id}</Link>
        </span>
      ))}
    </>
  );
}
