import { DeleteEntityButton } from '../components/DeleteEntityButton';
import { RefLink } from '../components/RefLink';
import { nameColumn, type ResourcePageSpec } from '../components/ResourcePage';
import type { Entity } from '../lib/types';
import { Link } from '../router';

type EdgeRouter = { name?: string; isOnline?: boolean };
type PolicyRef = { id: string; name?: string };

const serviceName = (e: Entity) => (e.service as { name?: string } | null)?.name ?? String(e.serviceId);

function EdgeRouters({ session }: { session: Entity }) {
  const routers = (session.edgeRouters ?? []) as EdgeRouter[];
  if (!routers.length) return <span className="muted">none</span>;
  return <>{routers.map((r) => `${r.name}${r.isOnline ? '' : ' (offline)'}`).join(', ')}</>;
}

export const sessionsSpec: ResourcePageSpec = {
  resource: 'sessions',
  path: 'sessions',
  title: 'Sessions',
  singular: 'session',
  description:
    'Dial and Bind sessions clients opened for services (through the Client API), with the edge routers they may use. Deleting one ends the client’s access until it asks again.',
  columns: [
    nameColumn('sessions', 'ID'),
    { field: 'type', label: 'Type' },
    // the core sorts these by id: the columns show names
    { field: 'serviceId', label: 'Service', sortable: false, render: (e) => <Link to={`/services/${e.serviceId as string}`}>{serviceName(e)}</Link> },
    { field: 'identityId', label: 'Identity', sortable: false, render: (e) => <RefLink value={e.identity} /> },
    {
      field: 'apiSessionId',
      label: 'API session',
      sortable: false,
      render: (e) => <Link to={`/api-sessions/${e.apiSessionId as string}`}>{String(e.apiSessionId)}</Link>,
    },
    { field: 'edgeRouters', label: 'Edge routers', render: (e) => <EdgeRouters session={e} /> },
    { field: 'createdAt', label: 'Created' },
  ],
  defaultSort: { field: 'createdAt', dir: 'desc' },
  rowActions: (e) => <DeleteEntityButton resource="sessions" id={e.id} confirmLabel={`Delete the ${String(e.type)} session for ${serviceName(e)}`} />,
  hiddenProperties: ['edgeRouters', 'servicePolicies', 'serviceId', 'identityId', 'identity', 'apiSessionId'],
  properties: [
    { label: 'Service', render: (e) => <Link to={`/services/${e.serviceId as string}`}>{serviceName(e)}</Link> },
    { label: 'Identity', render: (e) => <RefLink value={e.identity} /> },
    { label: 'API session', render: (e) => <Link to={`/api-sessions/${e.apiSessionId as string}`}>{String(e.apiSessionId)}</Link> },
    { label: 'Edge routers', render: (e) => <EdgeRouters session={e} /> },
    {
      label: 'Granted by (policies whose posture checks passed)',
      render: (e) => ((e.servicePolicies ?? []) as PolicyRef[]).map((p) => p.name ?? p.id).join(', ') || <span className="muted">—</span>,
    },
  ],
};
