import { useQuery } from '@tanstack/react-query';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import { Link } from '../router';
import { useTRPC } from '../trpc';
import { formatAge, formatBytes } from '../lib/format';
import { livePolling } from '../lib/polling';

/**
 * The built-in edge router live: whether it is online, the terminators bound on it and the open circuits (who dials
 * which service through which terminator, bytes each way, age). Polled every 2 s; after failures the interval
 * doubles up to 30 s.
 */
export function LiveTrafficPage() {
  const trpc = useTRPC();
  const live = useQuery(trpc.dataPlane.live.queryOptions(undefined, livePolling));
  const d = live.data;
  return (
    <Page
      title="Live traffic"
      description="The built-in edge router: its state, the terminators bound on it and the circuits open through it, updated every few seconds."
    >
      {live.error && <ErrorBox error={live.error} retry={() => live.refetch()} />}
      {!d && !live.error && <Spinner />}
      {d && !d.router && <Notice kind="warning">This Weft runs no edge router (router.enabled is false).</Notice>}
      {d?.router && (
        <>
          <Panel title="Edge router">
            <dl className="properties">
              <div className="property">
                <dt>Router</dt>
                <dd>
                  <Link to={`/edge-routers/${encodeURIComponent(d.router.id)}`}>{d.router.name}</Link>
                </dd>
              </div>
              <div className="property">
                <dt>State</dt>
                <dd>
                  <span className={`badge ${d.router.isOnline ? 'badge-ok' : 'badge-off'}`} data-testid="router-state">
                    {d.router.isOnline ? 'online' : 'offline'}
                  </span>
                </dd>
              </div>
              <div className="property">
                <dt>URL</dt>
                <dd>
                  <code>{d.router.url}</code>
                </dd>
              </div>
              <div className="property">
                <dt>SDK connections</dt>
                <dd>{d.router.connections}</dd>
              </div>
            </dl>
          </Panel>
          <Panel title={`Terminators (${d.terminators.length})`}>
            {d.terminators.length === 0 ? (
              <p className="muted">No service is bound on this router.</p>
            ) : (
              <div className="table-scroll">
                <table aria-label="Live terminators">
                  <thead>
                    <tr>
                      <th scope="col">Service</th>
                      <th scope="col">Hosted by</th>
                      <th scope="col">Instance</th>
                      <th scope="col">Cost</th>
                      <th scope="col">Precedence</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.terminators.map((t) => (
                      <tr key={t.id}>
                        <td>
                          <Link to={`/services/${encodeURIComponent(t.serviceId)}`}>{t.service.name ?? t.serviceId}</Link>
                        </td>
                        <td>{t.kind === 'host' ? 'the router (host.v1)' : (t.caller ?? 'an SDK')}</td>
                        <td>{t.identity || '—'}</td>
                        <td>{t.cost}</td>
                        <td>{t.precedence}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Panel>
          <Panel title={`Open circuits (${d.circuits.length})`}>
            {d.circuits.length === 0 ? (
              <p className="muted">No circuit is open.</p>
            ) : (
              <div className="table-scroll">
                <table aria-label="Open circuits">
                  <thead>
                    <tr>
                      <th scope="col">Dialer</th>
                      <th scope="col">Service</th>
                      <th scope="col">Terminator</th>
                      <th scope="col">Bytes in</th>
                      <th scope="col">Bytes out</th>
                      <th scope="col">Age</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.circuits.map((c) => (
                      <tr key={c.id} data-testid="circuit">
                        <td>{c.caller}</td>
                        <td>
                          <Link to={`/services/${encodeURIComponent(c.serviceId)}`}>{c.serviceName}</Link>
                        </td>
                        <td>
                          <Link to={`/terminators/${encodeURIComponent(c.terminatorId)}`}>
                            {c.hostKind === 'tcp' ? 'router-hosted' : c.terminatorId}
                          </Link>
                        </td>
                        <td>{formatBytes(c.bytesIn)}</td>
                        <td>{formatBytes(c.bytesOut)}</td>
                        <td>{formatAge(c.ageSeconds)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Panel>
        </>
      )}
    </Page>
  );
}
