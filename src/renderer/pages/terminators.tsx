import { DeleteEntityButton } from '../components/DeleteEntityButton';
import { RefLink } from '../components/RefLink';
import { nameColumn, type ResourcePageSpec } from '../components/ResourcePage';
import type { Column } from '../components/ResourceTable';
import { ResourceTable } from '../components/ResourceTable';
import type { FieldSpec, Values } from '../components/ResourceForm';
import { Panel } from '../components/Status';
import { zitiString } from '../../shared/console';
import type { Entity } from '../lib/types';
import { Link } from '../router';

type RouterRef = { entity?: string; id?: string; name?: string } | null;

/** A terminator's router is an edge router or a transit router; the API names which in its ref. */
const routerKindOf = (e: Entity) => ((e.router as RouterRef)?.entity === 'transit-routers' ? 'transit' : 'edge');
const routerPage = (e: Entity) => (routerKindOf(e) === 'transit' ? 'routers' : 'edge-routers');

function RouterCell({ terminator }: { terminator: Entity }) {
  const r = terminator.router as RouterRef;
  return <Link to={`/${routerPage(terminator)}/${encodeURIComponent(String(terminator.routerId))}`}>{r?.name ?? String(terminator.routerId)}</Link>;
}

const commonColumns: Column[] = [
  // the core sorts by router id: the column shows names
  { field: 'router', label: 'Router', sortable: false, render: (e) => <RouterCell terminator={e} /> },
  { field: 'binding', label: 'Binding' },
  { field: 'address', label: 'Address' },
  { field: 'identity', label: 'Identity' },
  { field: 'cost', label: 'Cost' },
  { field: 'precedence', label: 'Precedence' },
];

const fields: FieldSpec[] = [
  { kind: 'ref', name: 'service', label: 'Service', resource: 'services' },
  // the console's choice of the router's type (not a body field): which list `router` is chosen from
  {
    kind: 'radio',
    name: 'routerKind',
    label: 'Router kind',
    clears: ['router'],
    options: [
      { value: 'edge', label: 'Edge router' },
      { value: 'transit', label: 'Transit router' },
    ],
  },
  { kind: 'ref', name: 'router', label: 'Router', resource: 'edge-routers', when: (v) => v.routerKind !== 'transit' },
  { kind: 'ref', name: 'router', label: 'Router', resource: 'routers', when: (v) => v.routerKind === 'transit' },
  {
    kind: 'text',
    name: 'binding',
    label: 'Binding',
    placeholder: 'edge',
    help: 'How the router reaches the address: edge (a hosting SDK), tunnel, transport…',
  },
  { kind: 'text', name: 'address', label: 'Address', placeholder: 'tcp:10.0.0.5:443' },
  { kind: 'text', name: 'identity', label: 'Identity (addressable terminator name)' },
  // the update schema takes it, but the API never shows it: the edit form could only show it empty
  { kind: 'text', name: 'identitySecret', label: 'Identity secret (base64)', createOnly: true },
  { kind: 'number', name: 'cost', label: 'Cost (0–65535)' },
  { kind: 'select', name: 'precedence', label: 'Precedence' },
  { kind: 'tags', name: 'tags', label: 'Tags' },
];

const terminatorBody = ({ routerKind: _k, ...v }: Values) => v;

export const terminatorsSpec: ResourcePageSpec = {
  resource: 'terminators',
  path: 'terminators',
  title: 'Terminators',
  singular: 'terminator',
  description: 'Where a service’s traffic leaves the overlay: a binding and address at an edge or transit router.',
  columns: [
    nameColumn('terminators', 'ID'),
    // the core sorts by service id: the column shows names
    { field: 'service', label: 'Service', sortable: false, render: (e) => <RefLink value={e.service} /> },
    ...commonColumns,
    { field: 'createdAt', label: 'Created' },
  ],
  defaultSort: { field: 'createdAt', dir: 'desc' },
  fields,
  createInitial: { routerKind: 'edge', cost: 0, precedence: 'default' },
  toCreateBody: terminatorBody,
  toEditValues: (e) => ({
    service: e.serviceId,
    routerKind: routerKindOf(e),
    router: e.routerId,
    binding: e.binding,
    address: e.address,
    identity: e.identity || undefined,
    cost: e.cost,
    precedence: e.precedence,
    tags: e.tags,
  }),
  toEditBody: terminatorBody,
  hiddenProperties: ['dynamicCost'],
  properties: [
    { label: 'Service', render: (e) => <RefLink value={e.service} /> },
    { label: 'Router', render: (e) => <RouterCell terminator={e} /> },
  ],
};

/** The service detail's list of its terminators (server-side paged like every table). */
export function ServiceTerminators({ service }: { service: Entity }) {
  return (
    <Panel title="Terminators" actions={<Link to="/terminators/new">New terminator</Link>}>
      <ResourceTable
        resource="terminators"
        label={`Terminators of ${service.name ?? service.id}`}
        fixedFilter={`service = ${zitiString(service.id)}`}
        pageSize={10}
        columns={[nameColumn('terminators', 'ID'), ...commonColumns]}
        rowActions={(t) => <DeleteEntityButton resource="terminators" id={t.id} confirmLabel={`Delete terminator ${t.id}`} />}
        emptyText="No terminators: nothing hosts this service yet."
      />
    </Panel>
  );
}
