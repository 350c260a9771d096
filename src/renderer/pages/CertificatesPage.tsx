import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorBox, Notice, Page, Panel } from '../components/Status';
import { formatDate } from '../lib/format';
import { useTRPC } from '../trpc';

type Entry = {
  name: string;
  kind: string;
  subject: string;
  fingerprint: string;
  notAfter: string;
  daysLeft: number;
  renewal: string;
  renewsAt?: string;
  state: string;
};

/** The badge of a certificate's state: expired, ≤ 1, ≤ 7, ≤ 30 days left, or ok. */
export function expiryBadge(e: Pick<Entry, 'state' | 'daysLeft'>): { label: string; className: string } {
  if (e.state === 'expired') return { label: 'expired', className: 'badge badge-off' };
  if (e.state === 'ok') return { label: `${e.daysLeft} days`, className: 'badge badge-ok' };
  const left = e.daysLeft <= 0 ? 'expires today' : `${e.daysLeft} day${e.daysLeft === 1 ? '' : 's'} left`;
  return { label: `${e.state.replace('warning-', '≤ ')} d: ${left}`, className: e.state === 'warning-30' ? 'badge badge-warn' : 'badge badge-off' };
}

const RENEWAL: Record<string, string> = {
  automatic: 'Weft renews it',
  extend: 'the identity extends it when asked',
  'extend-requested': 'extension requested',
  router: 'the router extends it',
  manual: 'by hand',
};

/** Every certificate Weft issued or trusts, soonest expiry first, with warning badges at 30, 7 and 1 days. */
export function CertificatesPage() {
  const trpc = useTRPC();
  const list = useQuery(trpc.certificates.list.queryOptions());
  const [onlyWarnings, setOnlyWarnings] = useState(false);
  const all = (list.data ?? []) as Entry[];
  const shown = onlyWarnings ? all.filter((e) => e.state !== 'ok') : all;
  const warnings = all.filter((e) => e.state !== 'ok').length;
  return (
    <Page
      title="Certificates"
      description="Every certificate Weft issued or trusts, with its expiry. Weft renews its own server and router certificates before they expire and asks identities to extend theirs."
    >
      <Panel title="Inventory">
        {list.error && <ErrorBox error={list.error} retry={() => list.refetch()} />}
        {list.data &&
          (warnings ? (
            <Notice kind="warning">{`${warnings} certificate(s) expire within 30 days or have expired.`}</Notice>
          ) : (
            <Notice kind="success">No certificate expires within 30 days.</Notice>
          ))}
        <label>
          <input type="checkbox" checked={onlyWarnings} onChange={(e) => setOnlyWarnings(e.target.checked)} /> Only those with a warning
        </label>
        <div className="table-scroll">
          <table aria-label="Certificates">
            <thead>
              <tr>
                <th scope="col">Certificate</th>
                <th scope="col">Kind</th>
                <th scope="col">Expires</th>
                <th scope="col">Renewal</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((e) => {
                const badge = expiryBadge(e);
                return (
                  <tr key={`${e.kind}:${e.fingerprint}`} data-state={e.state} className={e.state === 'ok' ? undefined : 'warning'}>
                    <td data-label="Certificate">
                      {e.name}
                      <br />
                      <span className="muted">{e.subject}</span>
                      <br />
                      <span className="muted">{e.fingerprint}</span>
                    </td>
                    <td data-label="Kind">{e.kind}</td>
                    <td data-label="Expires">
                      {formatDate(e.notAfter)} <span className={badge.className}>{badge.label}</span>
                    </td>
                    <td data-label="Renewal">
                      {RENEWAL[e.renewal] ?? e.renewal}
                      {e.renewsAt && (
                        <>
                          <br />
                          <span className="muted">{`due ${formatDate(e.renewsAt)}`}</span>
                        </>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      </Panel>
    </Page>
  );
}
