import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import { isUnauthorized } from '../lib/errors';
import { Link } from '../router';
import { useTRPC } from '../trpc';
import '../policyTests.css';

/**
 * The red banner on every page while a saved policy test is failing: the first broken test, the pair and why, and
 * links to its "why" chain (the policy advice) and the tests. The results are read again after each run of the
 * tests (a subscription: the server tells when they ran).
 */
export function PolicyTestBanner() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const results = useQuery(trpc.policyTests.results.queryOptions());
  useSubscription(
    trpc.policyTests.runs.subscriptionOptions(undefined, {
      onData: () => void qc.invalidateQueries({ queryKey: trpc.policyTests.results.queryKey() }),
      onError: (error) => {
        if (isUnauthorized(error)) void qc.invalidateQueries({ queryKey: [['session', 'me']] });
      },
    }),
  );
  const failing = results.data?.tests.filter((t) => t.status === 'failing') ?? [];
  if (!failing.length) return null;
  const first = failing[0]!;
  const pair = first.failure?.identity && first.failure.service ? first.failure : undefined;
  return (
    <div className="pt-banner" role="alert" data-testid="policy-test-banner">
      <strong>{failing.length === 1 ? 'A policy test is failing' : `${failing.length} policy tests are failing`}</strong>
      {`: "${first.name}" — ${first.failure?.why ?? ''}. `}
      {pair && (
        <>
          <Link to={`/policy-advice/${encodeURIComponent(pair.identity!.id)}/${encodeURIComponent(pair.service!.id)}`}>Why?</Link>{' '}
        </>
      )}
      <Link to="/policy-tests">See the policy tests</Link>
    </div>
  );
}
