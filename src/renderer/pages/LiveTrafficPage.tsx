import { useQuery } from '@tanstack/react-query';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import { Link } from '../router';
import { useTRPC } from '../trpc';
import { formatAge, formatBytes } from '../lib/format';
import { livePolling } from '../lib/polling';

/**
 * The routers of this node live: every edge router (Weft's built-in one and the stock routers) with its state, the
 * links between routers, the built-in router's details and bound terminators, and the open circuits of every router
 * (who dials which service, the routers the circuit crosses, bytes each way where the router reports them, age).
 * Polled every 2 s; after failures the interval doubles up to 30 s.
 */
export function LiveTrafficPage() {
  const trpc = useTRPC();
  const live = useQuery(trpc.dataPlane.live.queryOptions(undefined, livePolling));
  const fabric = useQuery(trpc.network.fabric.queryOptions(undefined, livePolling));
  const d = live.data;
  const f = fabric.data;
  return (
    <Page
      title="Live traffic"
      description="The edge routers (the built-in one and stock routers): their state, the links between them, the terminators bound on the built-in router and the circuits open through every router, updated every few seconds."
    >
      {live.error && <ErrorBox error={live.error} retry={() => live.refetch()} />}
      {fabric.error && <ErrorBox error={fabric.error} retry={() => fabric.refetch()} />}
      {((!d && !live.error) || (!f && !fabric.error)) && <Spinner />}
      {f && (
        <Panel title={`Edge routers (${f.totalRouters})`}>
          {f.routers.length === 0 ? (
            <p className="muted">No edge router yet.</p>
          ) : (
            <div className="table-scroll">
              <table className="resource-table" aria-label="Edge routers">
                <thead>
                  <tr>
                    <th scope="col">Router</th>
                    <th scope="col">State</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Open circuits</th>
                  </tr>
                </thead>
                <tbody>
                  {f.routers.map((r) => (
                    <tr key={r.id} data-testid="fabric-router">
                      <td data-label="Router">
                        <Link to={`/edge-routers/${encodeURIComponent(r.id)}`}>{r.name}</Link>
                      </td>
                      <td data-label="State">
                        <span className={`badge ${r.isOnline ? 'badge-ok' : 'badge-off'}`}>{r.isOnline ? 'online' : 'offline'}</span>
                      </td>
                      <td data-label="Kind">{r.builtin ? 'built-in' : 'stock'}</td>
                      <td data-label="Open circuits">{r.circuits}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {f.totalRouters > f.routers.length && (
            <p className="hint">{`The first ${f.routers.length} of ${f.totalRouters} routers, online ones first.`}</p>
          )}
        </Panel>
      )}
      {f && (
        <Panel title={`Links between routers (${f.links.length})`}>
          {f.links.length === 0 ? (
            <p className="muted">No links between routers: each circuit stays on one router.</p>
          ) : (
            <div className="table-scroll">
              <table className="resource-table" aria-label="Links between routers">
                <thead>
                  <tr>
                    <th scope="col">From</th>
                    <th scope="col">To</th>
                    <th scope="col">State</th>
                    <th scope="col">Cost</th>
                    <th scope="col">Protocol</th>
                  </tr>
                </thead>
                <tbody>
                  {f.links.map((l) => (
                    <tr key={l.id} data-testid="fabric-link">
                      <td data-label="From">{l.src.name}</td>
                      <td data-label="To">{l.dst.name}</td>
                      <td data-label="State">
                        <span className={`badge ${l.state === 'connected' ? 'badge-ok' : 'badge-off'}`}>{l.state}</span>
                      </td>
                      <td data-label="Cost">{l.cost}</td>
                      <td data-label="Protocol">{l.protocol}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Panel>
      )}
      {d && !d.router && <Notice kind="info">This Weft runs no built-in edge router (router.enabled is false).</Notice>}
      {d?.router && (
        <>
          <Panel title="Built-in edge router">
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
        </>
      )}
      {f && (
        <Panel title={`Open circuits (${f.totalCircuits})`}>
          {f.totalCircuits > f.circuits.length && <p className="hint">{`The newest ${f.circuits.length} of ${f.totalCircuits} circuits.`}</p>}
          {f.circuits.length === 0 ? (
            <p className="muted">No circuit is open.</p>
          ) : (
            <div className="table-scroll">
              <table className="resource-table" aria-label="Open circuits">
                <thead>
                  <tr>
                    <th scope="col">Dialer</th>
                    <th scope="col">Service</th>
                    <th scope="col">Path</th>
                    <th scope="col">Hops</th>
                    <th scope="col">Terminator</th>
                    <th scope="col">Bytes in</th>
                    <th scope="col">Bytes out</th>
                    <th scope="col">Age</th>
                  </tr>
                </thead>
                <tbody>
                  {f.circuits.map((c) => (
                    <tr key={c.id} data-testid="circuit">
                      <td data-label="Dialer">{c.identity.name}</td>
                      <td data-label="Service">
                        <Link to={`/services/${encodeURIComponent(c.service.id)}`}>{c.service.name}</Link>
                      </td>
                      <td data-label="Path" data-testid="circuit-path">
                        {c.path.map((r) => r.name).join(' → ')}
                      </td>
                      <td data-label="Hops">{c.hops}</td>
                      <td data-label="Terminator">
                        <Link to={`/terminators/${encodeURIComponent(c.terminatorId)}`}>
                          {c.hostKind === 'tcp' ? 'router-hosted' : c.terminatorId}
                        </Link>
                      </td>
                      <td data-label="Bytes in">{c.bytesIn === undefined ? '—' : formatBytes(c.bytesIn)}</td>
                      <td data-label="Bytes out">{c.bytesOut === undefined ? '—' : formatBytes(c.bytesOut)}</td>
                      <td data-label="Age">{formatAge(c.ageSeconds)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Panel>
      )}
    </Page>
  );
}
