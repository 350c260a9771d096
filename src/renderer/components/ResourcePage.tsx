import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type ReactNode } from 'react';
import { deriveFields, useResourceDescription, type ResourceDescription } from '../lib/describe';
import { formatDate } from '../lib/format';
import { editBodyFor, editValuesFrom, fieldsFromSchema, initialFromSchema } from '../lib/generic';
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
  /**
   * The create and edit forms' fields; without them, both are generated from the core's create and update body
   * schemas (lib/generic.ts).
   */
  fields?: FieldSpec[];
  createInitial?: Values;
  toCreateBody?(values: Values): unknown;
  toEditValues?(entity: Entity): Values;
  toEditBody?(values: Values): unknown;
  /**
   * The writes offered are the core's (`resources.describe` ops); these withhold one the core allows, where a page
   * deliberately offers less.
   */
  canCreate?: false;
  canEdit?: false;
  canDelete?: false;
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

/** What a page offers of the writes the core allows (describe's ops), and the form fields for each. */
export interface PageOffers {
  /** the create form's fields, null without create */
  create: FieldSpec[] | null;
  /** the edit form's fields, null without edit */
  edit: FieldSpec[] | null;
  /** how an edit is sent: a patch where the core takes one */
  editOp: 'patch' | 'update';
  delete: boolean;
  /** the forms are generated from the body schemas (the spec has no fields) */
  generated: boolean;
}

export function pageOffers(spec: ResourcePageSpec, d: ResourceDescription | undefined): PageOffers {
  const ops = d?.ops ?? [];
  const generated = !spec.fields;
  const fieldsFor = (schema: ResourceDescription['create'] | undefined) => {
    const fields = spec.fields ?? fieldsFromSchema(schema);
    return fields.length ? fields : null;
  };
  const canEdit = ops.includes('patch') || ops.includes('update');
  return {
    create: spec.canCreate !== false && ops.includes('create') ? fieldsFor(d?.create) : null,
    edit: spec.canEdit !== false && canEdit ? fieldsFor(d?.update) : null,
    editOp: ops.includes('patch') ? 'patch' : 'update',
    delete: spec.canDelete !== false && ops.includes('delete'),
    generated,
  };
}

export function ResourcePage({ spec, params }: { spec: ResourcePageSpec; params: string[] }) {
  const description = useResourceDescription(spec.resource);
  const offers = useMemo(() => pageOffers(spec, description.data), [spec, description.data]);
  if (params[0] === 'new' && description.isPending) return <Spinner />;
  if (params[0] === 'new' && offers.create) return <CreateView spec={spec} fields={offers.create} description={description.data} />;
  if (params[0]) return <DetailView spec={spec} id={params[0]} offers={offers} description={description.data} />;
  return (
    <Page
      title={spec.title}
      description={spec.description}
      actions={
        offers.create ? (
          <>
            {spec.listActions}
            <Link className="button" to={`/${spec.path}/new`}>{`New ${spec.singular}`}</Link>
          </>
        ) : (
          spec.listActions
        )
      }
    >
      {description.error && <ErrorBox error={description.error} retry={() => description.refetch()} />}
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

function CreateView({ spec, fields, description }: { spec: ResourcePageSpec; fields: FieldSpec[]; description?: ResourceDescription }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const create = useMutation(trpc.resources.create.mutationOptions());
  return (
    <Page title={`New ${spec.singular}`}>
      <ResourceForm
        resource={spec.resource}
        label={`New ${spec.singular}`}
        mode="create"
        fields={fields}
        initial={spec.createInitial ?? (spec.fields ? {} : initialFromSchema(description?.create))}
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

function DetailView({
  spec,
  id,
  offers,
  description,
}: {
  spec: ResourcePageSpec;
  id: string;
  offers: PageOffers;
  description?: ResourceDescription;
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const entity = useQuery(trpc.resources.get.queryOptions({ resource: spec.resource, id }));
  const update = useMutation(trpc.resources.update.mutationOptions());
  const remove = useMutation(trpc.resources.delete.mutationOptions());
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
  const editFields = offers.edit;
  // the edit form's values, read from the entity while the editor is open
  const editInitial =
    !editing || !editFields
      ? {}
      : spec.toEditValues
        ? spec.toEditValues(e)
        : offers.generated
          ? editValuesFrom(editFields, e)
          : Object.fromEntries(
              deriveFields(editFields, description, 'edit')
                .filter((f) => !f.createOnly)
                .map((f) => [f.name.split('.')[0], getPath(e, f.name.split('.')[0]!)]),
            );
  const toEditBody = spec.toEditBody ?? (offers.generated ? editBodyFor(editInitial) : undefined);
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
          {editFields && (
            <button type="button" className="secondary" aria-expanded={editing} onClick={() => setEditing(!editing)}>
              {editing ? 'Close editor' : 'Edit'}
            </button>
          )}
          {offers.delete && (
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
      {editing && editFields && (
        <Panel title={`Edit ${spec.singular}`}>
          <ResourceForm
            resource={spec.resource}
            key={e.updatedAt as string}
            label={`Edit ${spec.singular}`}
            mode="edit"
            fields={editFields}
            initial={editInitial}
            toBody={toEditBody}
            submitLabel="Save"
            onCancel={() => setEditing(false)}
            onSubmit={async (body) => {
              await update.mutateAsync({ resource: spec.resource, id: e.id, body, op: offers.editOp });
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
