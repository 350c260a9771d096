import { useMemo } from 'react';
import { useResourceDescription, type ResourceDescription } from '../lib/describe';
import { hasName, humanize, singular } from '../lib/generic';
import type { ResourceName } from '../lib/types';
import { Link } from '../router';
import { ResourcePage, type ResourcePageSpec } from './ResourcePage';
import { ErrorBox, Page, Spinner } from './Status';

/** A type's title: its name in words ("identity-types" → "Identity types"). */
export const resourceTitle = (resource: string) => humanize(resource);

/**
 * The spec of a page over a type the console has no page of, from what the core says about it: its name (or ID)
 * and creation time as columns, forms generated from the body schemas (no `fields`), the writes the core offers.
 */
export function genericSpec(resource: ResourceName, path: string, d: ResourceDescription): ResourcePageSpec {
  const title = resourceTitle(resource);
  const named = hasName(d);
  const first = named ? { field: 'name', label: 'Name' } : { field: 'id', label: 'ID' };
  return {
    resource,
    path,
    title,
    // "Identity types" → "identity type"; an acronym keeps its case ("API sessions" → "API session")
    singular: singular(/^[A-Z][A-Z]/.test(title) ? title : title.charAt(0).toLowerCase() + title.slice(1)),
    description: (
      <>
        A page generated from what the core declares of <code>{resource}</code>.
      </>
    ),
    columns: [
      { ...first, render: (e) => <Link to={`/${path}/${encodeURIComponent(e.id)}`}>{named ? e.name || e.id : e.id}</Link> },
      { field: 'createdAt', label: 'Created' },
    ],
    defaultSort: named && d.sortable.includes('name') ? { field: 'name', dir: 'asc' } : { field: 'createdAt', dir: 'desc' },
  };
}

/** The generated page of a type: list, detail, and create and edit forms for the writes the core offers. */
export function GenericResourcePage({ resource, path, params }: { resource: ResourceName; path: string; params: string[] }) {
  const description = useResourceDescription(resource);
  const spec = useMemo(() => description.data && genericSpec(resource, path, description.data), [resource, path, description.data]);
  if (description.error) {
    return (
      <Page title={resourceTitle(resource)}>
        <ErrorBox error={description.error} retry={() => description.refetch()} />
      </Page>
    );
  }
  if (!spec) return <Spinner />;
  return <ResourcePage key={`${path}/${params.join('/')}`} spec={spec} params={params} />;
}
