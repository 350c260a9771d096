import { Link } from '../router';

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
