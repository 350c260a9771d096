import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ErrorBox, Panel, Spinner } from '../components/Status';
import { formatDate } from '../lib/format';
import type { Entity, RouterOutputs } from '../lib/types';
import { Link } from '../router';
import { useTRPC } from '../trpc';

type PostureData = RouterOutputs['identityPosture']['data'];
type FailedRequest = RouterOutputs['identityPosture']['failedServiceRequests'][number];

const none = <span className="muted">—</span>;
const updated = (at: string | null) => (at ? <span className="hint">{`reported ${formatDate(at)}`}</span> : null);
/** Expected and actual values of a failed check, compactly. */
const show = (v: unknown): string => (typeof v === 'string' ? v || '(none)' : JSON.stringify(v));

function Property({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="property">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function PostureDataView({ data }: { data: PostureData }) {
  const sessions = Object.entries(
    data.apiSessionPostureData as Record<
      string,
      { mfa: { passedAt: string | null }; endpointState: { wokenAt: string | null; unlockedAt: string | null } }
    >,
  );
  const reported = data.os.lastUpdatedAt || data.domain.lastUpdatedAt || data.mac.lastUpdatedAt || data.processes.length;
  return (
    <>
      {!reported && <p className="hint">The identity’s clients have not reported any posture data yet.</p>}
      <dl className="properties">
        <Property label="Operating system">
          {data.os.type ? `${data.os.type} ${data.os.version}${data.os.build ? ` (build ${data.os.build})` : ''}` : none}{' '}
          {updated(data.os.lastUpdatedAt)}
        </Property>
        <Property label="Domain">
          {data.domain.domain || none} {updated(data.domain.lastUpdatedAt)}
        </Property>
        <Property label="MAC addresses">
          {data.mac.addresses.join(', ') || none} {updated(data.mac.lastUpdatedAt)}
        </Property>
      </dl>
      {data.processes.length > 0 && (
        <div className="table-scroll resource-table">
          <table aria-label="Reported processes">
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col">Running</th>
                <th scope="col">Hash</th>
                <th scope="col">Signers</th>
                <th scope="col">Reported</th>
              </tr>
            </thead>
            <tbody>
              {data.processes.map((p, i) => (
                <tr key={`${p.path}-${i}`}>
                  <td data-label="Path">
                    <code>{p.path}</code>
                  </td>
                  <td data-label="Running">{p.isRunning ? 'Yes' : 'No'}</td>
                  <td data-label="Hash">
                    <code>{p.binaryHash ?? ''}</code>
                  </td>
                  <td data-label="Signers">{(p.signerFingerprints ?? []).join(', ')}</td>
                  <td data-label="Reported">{formatDate(p.lastUpdatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {sessions.length > 0 && (
        <div className="table-scroll resource-table">
          <table aria-label="MFA and endpoint state per API session">
            <thead>
              <tr>
                <th scope="col">API session</th>
                <th scope="col">MFA passed</th>
                <th scope="col">Woken</th>
                <th scope="col">Unlocked</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map(([id, s]) => (
                <tr key={id}>
                  <td data-label="API session">
                    <Link to={`/api-sessions/${id}`}>{id}</Link>
                  </td>
                  <td data-label="MFA passed">{s.mfa.passedAt ? formatDate(s.mfa.passedAt) : 'No'}</td>
                  <td data-label="Woken">{formatDate(s.endpointState.wokenAt)}</td>
                  <td data-label="Unlocked">{formatDate(s.endpointState.unlockedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function FailedChecks({ request }: { request: FailedRequest }) {
  return (
    <ul className="plain">
      {request.policyFailures.map((p) => (
        <li key={p.policyId}>
          <Link to={`/service-policies/${p.policyId}`}>{p.policyName ?? p.policyId}</Link>
          {': '}
          {p.checks
            .map((c) => `${String(c.postureCheckName)} (${String(c.postureCheckType)}) expected ${show(c.expectedValue)}, got ${show(c.actualValue)}`)
            .join('; ')}
        </li>
      ))}
    </ul>
  );
}

function FailedRequests({ requests }: { requests: FailedRequest[] }) {
  if (!requests.length) return <p className="hint">No session request of this identity has failed its posture checks.</p>;
  return (
    <div className="table-scroll resource-table">
      <table aria-label="Failed service requests">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Service</th>
            <th scope="col">Type</th>
            <th scope="col">Failed checks (per policy)</th>
          </tr>
        </thead>
        <tbody>
          {requests.map((r, i) => (
            <tr key={`${r.when}-${i}`}>
              <td data-label="When">{formatDate(r.when)}</td>
              <td data-label="Service">
                <Link to={`/services/${r.serviceId}`}>{r.serviceName}</Link>
              </td>
              <td data-label="Type">{r.sessionType}</td>
              <td data-label="Failed checks">
                <FailedChecks request={r} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The identity's posture: reported data, and the session requests it failed (kept by the controller, newest first). */
export function IdentityPosture({ identity }: { identity: Entity }) {
  const trpc = useTRPC();
  const data = useQuery(trpc.identityPosture.data.queryOptions({ identityId: identity.id }));
  const failed = useQuery(trpc.identityPosture.failedServiceRequests.queryOptions({ identityId: identity.id }));
  return (
    <>
      <Panel title="Posture data">
        {data.isPending && <Spinner />}
        {data.error && <ErrorBox error={data.error} retry={() => data.refetch()} />}
        {data.data && <PostureDataView data={data.data} />}
      </Panel>
      <Panel title="Failed service requests">
        {failed.isPending && <Spinner />}
        {failed.error && <ErrorBox error={failed.error} retry={() => failed.refetch()} />}
        {failed.data && <FailedRequests requests={failed.data} />}
      </Panel>
    </>
  );
}
