import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ErrorBox, Notice, Page, Panel } from '../components/Status';
import { formatDate } from '../lib/format';
import { useTRPC } from '../trpc';

/** Data integrity check/fix (runs in the background; progress is polled) and database snapshots. */
export function DatabasePage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const results = useQuery(
    trpc.security.database.integrityResults.queryOptions(undefined, { refetchInterval: (q) => (q.state.data?.inProgress ? 500 : false) }),
  );
  const start = useMutation(
    trpc.security.database.startIntegrityCheck.mutationOptions({
      onSuccess: (started) => qc.setQueryData(trpc.security.database.integrityResults.queryKey(), started),
    }),
  );
  const snapshot = useMutation(trpc.security.database.snapshot.mutationOptions());
  const r = results.data;
  return (
    <Page title="Database" description="Check the data for inconsistencies (and repair them), or write a consistent copy of the database.">
      <Panel title="Data integrity">
        <div className="button-row">
          <button type="button" disabled={start.isPending || r?.inProgress} onClick={() => start.mutate({ fix: false })}>
            Check data integrity
          </button>
          <button type="button" className="secondary" disabled={start.isPending || r?.inProgress} onClick={() => start.mutate({ fix: true })}>
            Check and fix
          </button>
        </div>
        {start.error && <ErrorBox error={start.error} />}
        {results.error && <ErrorBox error={results.error} retry={() => results.refetch()} />}
        {r?.inProgress && (
          <div role="status" className="progress">
            <progress aria-label="Integrity check in progress" />
            <span>{`${r.fixingErrors ? 'Checking and fixing' : 'Checking'}… ${r.results.length} finding(s) so far.`}</span>
          </div>
        )}
        {r && !r.inProgress && r.startTime && (
          <div role="status">
            {r.error ? (
              <ErrorBox error={new Error(r.error)} title="The run failed:" />
            ) : r.results.length === 0 ? (
              <Notice kind="success">{`No problems found (finished ${formatDate(r.endTime)}).`}</Notice>
            ) : (
              <Notice kind="warning">{`${r.results.length} finding(s)${r.tooManyErrors ? ' (stopped: too many)' : ''}, finished ${formatDate(r.endTime)}.`}</Notice>
            )}
          </div>
        )}
        {r && r.results.length > 0 && (
          <div className="table-scroll">
            <table aria-label="Integrity findings">
              <thead>
                <tr>
                  <th scope="col">Finding</th>
                  <th scope="col">Fixed</th>
                </tr>
              </thead>
              <tbody>
                {r.results.map((f, i) => (
                  <tr key={i}>
                    <td data-label="Finding">{f.description}</td>
                    <td data-label="Fixed">{f.fixed ? 'Yes' : 'No'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Panel>
      <Panel title="Snapshot">
        <button type="button" disabled={snapshot.isPending} onClick={() => snapshot.mutate()}>
          {snapshot.isPending ? 'Writing snapshot…' : 'Write a database snapshot'}
        </button>
        {snapshot.isPending && <progress aria-label="Writing the snapshot" />}
        {snapshot.error && <ErrorBox error={snapshot.error} />}
        {snapshot.data && (
          <Notice kind="success">
            Snapshot written to <code>{snapshot.data.file}</code>
          </Notice>
        )}
      </Panel>
    </Page>
  );
}
