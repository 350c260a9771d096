import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { FirstRunLab, labWanted } from '../components/FirstRunLab';
import { ResourceTable } from '../components/ResourceTable';
import { ErrorBox, Page, Panel, Spinner } from '../components/Status';
import { useConsoleResources } from '../lib/describe';
import { formatDate } from '../lib/format';
import { humanize } from '../lib/generic';
import { Link } from '../router';
import type { ResourceName } from '../lib/types';
import { expiryBadge } from './CertificatesPage';
import { useTRPC } from '../trpc';

/** The page over a type (its own or the generated one), given the server's console types. */
export type PageOfType = (resource: string, names: readonly ResourceName[]) => { id: string; title: string } | undefined;

/** Labels of counts where the words of the name are not the best (the rest: the page's title, or the name in words). */
const COUNT_LABELS: Record<string, string> = { cas: 'CAs', mfas: 'MFA enrollments' };

/**
 * A tile for each count the server returns (`/summary`, by entity in camelCase): linked to the page of the type
 * (its own or the generated one), labelled as that page is.
 */
function countTile(name: string, page: ReturnType<PageOfType>): { label: string; page?: string } {
  return { label: COUNT_LABELS[name] ?? page?.title ?? humanize(name), page: page?.id };
}

/** The entity (URL segment) of a count's camelCase name: "edgeRouters" → "edge-routers". */
const entityOf = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export function DashboardPage({ pageOf }: { pageOf: PageOfType }) {
  const trpc = useTRPC();
  const overview = useQuery(trpc.dashboard.overview.queryOptions());
  const names = useConsoleResources();
  const [labOpen, setLabOpen] = useState(true);
  return (
    <Page title="Dashboard">
      {overview.isPending && <Spinner />}
      {overview.error && <ErrorBox error={overview.error} retry={() => overview.refetch()} />}
      {overview.data && labOpen && labWanted(overview.data.counts.services) && <FirstRunLab onClose={() => setLabOpen(false)} />}
      {overview.data && (
        <>
          <ul className="counts" aria-label="Counts">
            {Object.entries(overview.data.counts).map(([k, n]) => {
              const c = countTile(k, pageOf(entityOf(k), names.data ?? []));
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
            <Panel title="Certificates" actions={<Link to="/certificates">All certificates</Link>}>
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
                      <tr key={c.name} className={c.state === 'ok' ? undefined : 'warning'}>
                        <td data-label="Certificate">
                          {c.name}
                          <br />
                          <span className="muted">{c.subject}</span>
                        </td>
                        <td data-label="Expires">
                          {formatDate(c.notAfter)} <span className={expiryBadge(c).className}>{expiryBadge(c).label}</span>
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
