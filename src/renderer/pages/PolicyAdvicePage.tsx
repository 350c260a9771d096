import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { AccessExplanation } from '../components/AccessExplanation';
import { RefSelect } from '../components/inputs';
import { ErrorBox, Page, Panel, Spinner } from '../components/Status';
import { Link } from '../router';
import { useTRPC } from '../trpc';

const mark = (ok: boolean) => (ok ? '✓ allowed' : '✗ not allowed');

/**
 * Pick an identity and a service (or come with `#/policy-advice/<identity>/<service>`): can it dial/bind, through
 * which routers, and why — the chain of policies and posture checks, and the smallest change when access is missing.
 */
export function PolicyAdvicePage({ params = [] }: { params?: string[] }) {
  const trpc = useTRPC();
  const identityId = useId();
  const serviceId = useId();
  const [identity, setIdentity] = useState<string | null>(params[0] ?? null);
  const [service, setService] = useState<string | null>(params[1] ?? null);
  const advice = useQuery({
    ...trpc.policy.advice.queryOptions({ identityId: identity ?? '', serviceId: service ?? '' }),
    enabled: !!identity && !!service,
  });
  return (
    <Page title="Policy advice" description="Whether an identity can use a service, read from the same policy index that session creation uses.">
      <form className="advice-form" aria-label="Identity and service" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor={identityId}>Identity</label>
          <RefSelect id={identityId} label="Identity" resource="identities" value={identity} onChange={setIdentity} />
        </div>
        <div className="field">
          <label htmlFor={serviceId}>Service</label>
          <RefSelect id={serviceId} label="Service" resource="services" value={service} onChange={setService} />
        </div>
      </form>
      {(!identity || !service) && <p className="hint">Choose an identity and a service.</p>}
      {advice.isFetching && !advice.data && <Spinner />}
      {advice.error && <ErrorBox error={advice.error} retry={() => advice.refetch()} />}
      {advice.data && identity && service && (
        <Panel title="Result">
          <p className="advice-sentence" role="status" aria-live="polite">
            {advice.data.sentence}
          </p>
          <dl className="properties">
            <div className="property">
              <dt>Dial</dt>
              <dd className={advice.data.isDialAllowed ? 'ok' : 'bad'}>{mark(advice.data.isDialAllowed)}</dd>
            </div>
            <div className="property">
              <dt>Bind</dt>
              <dd className={advice.data.isBindAllowed ? 'ok' : 'bad'}>{mark(advice.data.isBindAllowed)}</dd>
            </div>
            <div className="property">
              <dt>Edge routers the identity may use</dt>
              <dd>{advice.data.identityRouterCount}</dd>
            </div>
            <div className="property">
              <dt>Edge routers the service may use</dt>
              <dd>{advice.data.serviceRouterCount}</dd>
            </div>
            <div className="property">
              <dt>Common edge routers</dt>
              <dd>
                {advice.data.commonRouters.length ? (
                  <ul className="plain">
                    {advice.data.commonRouters.map((r) => (
                      <li key={r.id}>
                        <Link to={`/edge-routers/${r.id}`}>{r.name ?? r.id}</Link> {r.isOnline ? '(online)' : '(offline)'}
                      </li>
                    ))}
                  </ul>
                ) : (
                  'none'
                )}
              </dd>
            </div>
          </dl>
        </Panel>
      )}
      {advice.data && identity && service && (
        <Panel title="Why">
          <AccessExplanation key={`${identity}/${service}`} identityId={identity} serviceId={service} showSentence={false} />
        </Panel>
      )}
    </Page>
  );
}
