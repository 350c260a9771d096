import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { FirstRunLab, labWanted } from '../components/FirstRunLab';
import { ResourceTable } from '../components/ResourceTable';
import { ErrorBox, Page, Panel, Spinner } from '../components/Status';
import { formatDate, relative } from '../lib/format';
import { Link } from '../router';
import { useTRPC } from '../trpc';

/** Summary counts that have a page of their own link to it. */
const COUNT_PAGES: Record<string, { label: string; page?: string }> = {
  identities: { label: 'Identities', page: 'identities' },
  services: { label: 'Services', page: 'services' },
  edgeRouters: { label: 'Edge routers', page: 'edge-routers' },
  routers: { label: 'Routers', page: 'routers' },
  configs: { label: 'Configs', page: 'configs' },
  configTypes: { label: 'Config types', page: 'config-types' },
  authPolicies: { label: 'Auth policies', page: 'auth-policies' },
  cas: { label: 'CAs', page: 'cas' },
  apiSessions: { label: 'API sessions', page: 'api-sessions' },
  enrollments: { label: 'Enrollments' },
  authenticators: { label: 'Authenticators' },
  mfas: { label: 'MFA enrollments' },
  externalJwtSigners: { label: 'External JWT signers' },
  controllers: { label: 'Controllers' },
};

export function DashboardPage() {
  const trpc = useTRPC();
  const overview = useQuery(trpc.dashboard.overview.queryOptions());
  const [labOpen, setLabOpen] = useState(true);
  return (
    <Page title="Dashboard">
      {overview.isPending && <Spinner />}
      {overview.error && <ErrorBox error={overview.error} retry={() => overview.refetch()} />}
      {overview.data && labOpen && labWanted(overview.data.counts.services) && <FirstRunLab onClose={() => setLabOpen(false)} />}
      {overview.data && (
        <>
          <ul className="counts" aria-label="Counts">
            {Object.entries(overview.data.counts)
              .filter(([k]) => COUNT_PAGES[k])
              .map(([k, n]) => {
                const c = COUNT_PAGES[k]!;
                return (
                  <li key={k} className="count">
                    <span className="count-number">{n}</span>
                    {c.page ? <Link to={`/${c.page}`}>{c.label}</Link> : <span>{c.label}</span>}
                  </li>
                );
              })}
          </ul>
          <div className="columns">
            <Panel title="Controller URLs">
              <dl className="properties">
                {(
                  [
                    ['Controller API', overview.data.urls.api],
                    ['Client API', overview.data.urls.client],
                    ['Management API', overview.data.urls.management],
                    ['Console', overview.data.urls.console],
                  ] as const
                ).map(([label, url]) => (
                  <div key={label} className="property">
                    <dt>{label}</dt>
                    <dd>
                      <code>{url}</code>
                    </dd>
                  </div>
                ))}
              </dl>
            </Panel>
            <Panel title="Certificates">
              <div className="table-scroll">
                <table aria-label="Controller certificates">
                  <thead>
                    <tr>
                      <th scope="col">Certificate</th>
                      <th scope="col">Expires</th>
                    </tr>
                  </thead>
                  <tbody>
                    {overview.data.certificates.map((c) => (
                      <tr key={c.name} className={c.daysLeft < 30 ? 'warning' : undefined}>
                        <td data-label="Certificate">
                          {c.name}
                          <br />
                          <span className="muted">{c.subject}</span>
                        </td>
                        <td data-label="Expires">
                          {formatDate(c.notAfter)} ({relative(c.notAfter)}){c.daysLeft < 30 ? ' — renew soon' : ''}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </Panel>
          </div>
        </>
      )}
      <Panel title="Recent API sessions" actions={<Link to="/api-sessions">All API sessions</Link>}>
        <ResourceTable
          resource="api-sessions"
          label="Recent API sessions"
          compact
          pageSize={5}
          defaultSort={{ field: 'createdAt', dir: 'desc' }}
          columns={[
            { field: 'identity', label: 'Identity' },
            { field: 'ipAddress', label: 'IP address' },
            { field: 'createdAt', label: 'Started' },
            { field: 'lastActivityAt', label: 'Last activity' },
          ]}
        />
      </Panel>
      <Panel title="Controllers">
        <ResourceTable
          resource="controllers"
          label="Controllers"
          compact
          columns={[
            { field: 'name', label: 'Name' },
            { field: 'isOnline', label: 'Online' },
            { field: 'fingerprint', label: 'Fingerprint' },
            { field: 'lastJoinedAt', label: 'Last joined' },
          ]}
        />
      </Panel>
    </Page>
  );
}
