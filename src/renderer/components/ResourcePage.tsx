import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { deriveFields, useResourceDescription } from '../lib/describe';
import { formatDate } from '../lib/format';
import { getPath } from '../lib/paths';
import type { Entity, ResourceName, SortDir } from '../lib/types';
import { Link, navigate } from '../router';
import { useTRPC } from '../trpc';
import type { BulkConfig } from './BulkActions';
import { ResourceForm, type FieldSpec, type Values } from './ResourceForm';
import { ResourceTable, type Column } from './ResourceTable';
import { ErrorBox, Page, Panel, Spinner } from './Status';
import { ConfirmButton } from './ConfirmButton';

/** Everything a page over one resource type declares; the list, create and detail views are generic. */
export interface ResourcePageSpec {
  resource: ResourceName;
  /** route segment, e.g. "identities" */
  path: string;
  title: string;
  singular: string;
  description?: ReactNode;
  columns: Column[];
  defaultSort?: { field: string; dir: SortDir };
  fields?: FieldSpec[];
  createInitial?: Values;
  toCreateBody?(values: Values): unknown;
  toEditValues?(entity: Entity): Values;
  toEditBody?(values: Values): unknown;
  canCreate?: boolean;
  canEdit?: boolean;
  canDelete?: boolean;
  /** extra properties shown on the detail view */
  properties?: Array<{ label: string; render(entity: Entity): ReactNode }>;
  /** extra panels on the detail view (enrollment, verification, ...) */
  panels?: (entity: Entity) => ReactNode;
  /** fields left out of the detail view's generic property list (shown better by `properties` or `panels`) */
  hiddenProperties?: string[];
  /** extra panels below the list */
  listPanels?: () => ReactNode;
  rowActions?: (entity: Entity) => ReactNode;
  /** multi-select on the list, with these actions */
  bulk?: BulkConfig;
  /** more actions beside "New …" on the list (another way to create, an import) */
  listActions?: ReactNode;
}

/** A spec with more detail panels after its own (pages that compose views of several modules). */
export function withPanels(spec: ResourcePageSpec, more: (entity: Entity) => ReactNode): ResourcePageSpec {
  return {
    ...spec,
    panels: (e) => (
      <>
        {spec.panels?.(e)}
        {more(e)}
      </>
    ),
  };
}

/** The first column of most tables: the name, linking to the detail view. */
export const nameColumn = (path: string, label = 'Name'): Column => ({
  field: 'name',
  label,
  render: (e) => <Link to={`/${path}/${encodeURIComponent(e.id)}`}>{e.name || e.id}</Link>,
});

/** Refreshes every list and view after a change (lists are server-side; refetching a page is cheap). */
export function useInvalidateAll() {
  const qc = useQueryClient();
  return () => qc.invalidateQueries();
}

export function ResourcePage({ spec, params }: { spec: ResourcePageSpec; params: string[] }) {
  if (params[0] === 'new' && spec.canCreate !== false && spec.fields) return <CreateView spec={spec} />;
  if (params[0]) return <DetailView spec={spec} id={params[0]} />;
  return (
    <Page
      title={spec.title}
      description={spec.description}
      actions={
        spec.canCreate !== false && spec.fields ? (
          <>
            {spec.listActions}
            <Link className="button" to={`/${spec.path}/new`}>{`New ${spec.singular}`}</Link>
          </>
        ) : (
          spec.listActions
        )
      }
    >
      <ResourceTable
        resource={spec.resource}
        label={spec.title}
        columns={spec.columns}
        defaultSort={spec.defaultSort}
        rowActions={spec.rowActions}
        bulk={spec.bulk}
      />
      {spec.listPanels?.()}
    </Page>
  );
}

function CreateView({ spec }: { spec: ResourcePageSpec }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const create = useMutation(trpc.resources.create.mutationOptions());
  return (
    <Page title={`New ${spec.singular}`}>
      <ResourceForm
        resource={spec.resource}
        label={`New ${spec.singular}`}
        mode="create"
        fields={spec.fields!}
        initial={spec.createInitial ?? {}}
        toBody={spec.toCreateBody}
        submitLabel={`Create ${spec.singular}`}
        onCancel={() => navigate(`/${spec.path}`)}
        onSubmit={async (body) => {
          const { id } = await create.mutateAsync({ resource: spec.resource, body });
          await invalidate();
          navigate(`/${spec.path}/${encodeURIComponent(id)}`);
        }}
      />
    </Page>
  );
}

export { ConfirmButton };

const SKIP = new Set(['_links', 'tags', 'id', 'name', 'createdAt', 'updatedAt']);

function defaultValue(v: unknown): ReactNode {
  if (v === null || v === undefined || v === '') return <span className="muted">—</span>;
  if (typeof v === 'boolean') return v ? 'Yes' : 'No';
  if (Array.isArray(v))
    return v.length ? v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ') : <span className="muted">—</span>;
  if (typeof v === 'object') return (v as { name?: string }).name ?? <code>{JSON.stringify(v)}</code>;
  return String(v);
}

function DetailView({ spec, id }: { spec: ResourcePageSpec; id: string }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const entity = useQuery(trpc.resources.get.queryOptions({ resource: spec.resource, id }));
  const update = useMutation(trpc.resources.update.mutationOptions());
  const remove = useMutation(trpc.resources.delete.mutationOptions());
  const description = useResourceDescription(spec.resource);
  const [editing, setEditing] = useState(false);

  if (entity.isPending) return <Spinner />;
  if (entity.error) {
    return (
      <Page title={spec.singular}>
        <ErrorBox error={entity.error} retry={() => entity.refetch()} />
        <p>
          <Link to={`/${spec.path}`}>{`Back to ${spec.title.toLowerCase()}`}</Link>
        </p>
      </Page>
    );
  }
  const e = entity.data as Entity;
  const editable = spec.canEdit !== false && !!spec.fields;
  const scalars = Object.entries(e).filter(
    ([k, v]) =>
      !SKIP.has(k) &&
      !spec.hiddenProperties?.includes(k) &&
      (typeof v !== 'object' || v === null || Array.isArray(v)) &&
      !/Jwt$|Pem$|^enrollmentToken$/.test(k),
  );
  const tags = Object.entries((e.tags ?? {}) as Record<string, unknown>);
  return (
    <Page
      title={e.name || e.id}
      actions={
        <>
          <Link to={`/${spec.path}`}>{`All ${spec.title.toLowerCase()}`}</Link>
          {editable && (
            <button type="button" className="secondary" aria-expanded={editing} onClick={() => setEditing(!editing)}>
              {editing ? 'Close editor' : 'Edit'}
            </button>
          )}
          {spec.canDelete !== false && (
            <ConfirmButton
              label="Delete"
              confirmLabel={`Delete ${spec.singular} ${e.name ?? e.id}`}
              busy={remove.isPending}
              onConfirm={async () => {
                try {
                  await remove.mutateAsync({ resource: spec.resource, id: e.id });
                  await invalidate();
                  navigate(`/${spec.path}`);
                } catch {
                  /* shown below */
                }
              }}
            />
          )}
        </>
      }
    >
      {remove.error && <ErrorBox error={remove.error} title="Not deleted:" />}
      {editing && spec.fields && (
        <Panel title={`Edit ${spec.singular}`}>
          <ResourceForm
            resource={spec.resource}
            key={e.updatedAt as string}
            label={`Edit ${spec.singular}`}
            mode="edit"
            fields={spec.fields}
            initial={
              spec.toEditValues
                ? spec.toEditValues(e)
                : Object.fromEntries(
                    deriveFields(spec.fields, description.data, 'edit')
                      .filter((f) => !f.createOnly)
                      .map((f) => [f.name.split('.')[0], getPath(e, f.name.split('.')[0]!)]),
                  )
            }
            toBody={spec.toEditBody}
            submitLabel="Save"
            onCancel={() => setEditing(false)}
            onSubmit={async (body) => {
              await update.mutateAsync({ resource: spec.resource, id: e.id, body, op: 'patch' });
              await invalidate();
              setEditing(false);
            }}
          />
        </Panel>
      )}
      {spec.panels?.(e)}
      <Panel title="Properties">
        <dl className="properties">
          <div className="property">
            <dt>ID</dt>
            <dd>
              <code>{e.id}</code>
            </dd>
          </div>
          {spec.properties?.map((p) => (
            <div key={p.label} className="property">
              <dt>{p.label}</dt>
              <dd>{p.render(e)}</dd>
            </div>
          ))}
          {scalars.map(([k, v]) => (
            <div key={k} className="property">
              <dt>{k}</dt>
              <dd>{/At$/.test(k) && typeof v === 'string' ? formatDate(v) : defaultValue(v)}</dd>
            </div>
          ))}
          <div className="property">
            <dt>Tags</dt>
            <dd>{tags.length ? tags.map(([k, v]) => `${k}=${String(v)}`).join(', ') : <span className="muted">—</span>}</dd>
          </div>
          <div className="property">
            <dt>Created</dt>
            <dd>{formatDate(e.createdAt)}</dd>
          </div>
          <div className="property">
            <dt>Updated</dt>
            <dd>{formatDate(e.updatedAt)}</dd>
          </div>
        </dl>
      </Panel>
    </Page>
  );
}
