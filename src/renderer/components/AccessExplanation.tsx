import { useMutation, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { RouterOutputs } from '../lib/types';
import { Link } from '../router';
import { useTRPC } from '../trpc';
import { useInvalidateAll } from './ResourcePage';
import { ErrorBox, Notice, Spinner } from './Status';
import '../workflows.css';
import '../policyTests.css';

type Explanation = RouterOutputs['policy']['explain'];
type RefLike = { entity: string; id: string; name?: string };

/** A link to an entity's page in the console. */
export function EntityLink({ r }: { r: RefLike }) {
  return <Link to={`/${r.entity}/${encodeURIComponent(r.id)}`}>{r.name ?? r.id}</Link>;
}

function Links({ list, none = 'none' }: { list: RefLike[]; none?: string }) {
  if (!list.length) return <span className="muted">{none}</span>;
  return (
    <>
      {list.map((r, i) => (
        <span key={r.id}>
          {i > 0 && ', '}
          <EntityLink r={r} />
        </span>
      ))}
    </>
  );
}

const mark = (ok: boolean) => (
  <span className={ok ? 'ok' : 'bad'} aria-hidden="true">
    {ok ? '✓' : '✗'}
  </span>
);

function Grants({ what, grant, needed }: { what: 'Dial' | 'Bind'; grant: Explanation['dial']; needed: boolean }) {
  return (
    <li className="chain-step" data-testid={`chain-${what.toLowerCase()}`}>
      {grant.policies.length || needed ? (
        mark(grant.allowed && grant.posturePasses)
      ) : (
        <span className="muted" aria-hidden="true">
          –
        </span>
      )}{' '}
      <strong>{what}</strong>
      {grant.policies.length ? ': granted by ' : `: no service policy grants it${needed ? '' : ' (only hosts need it)'}`}
      {grant.policies.length > 0 && (
        <ul className="chain-items">
          {grant.policies.map((p) => (
            <li key={p.id}>
              <EntityLink r={p} /> <span className="muted">({p.semantic})</span>
              {p.postureChecks.length > 0 && (
                <span>
                  {' — posture: '}
                  {p.postureChecks.map((c, i) => (
                    <span key={c.id}>
                      {i > 0 && ', '}
                      <EntityLink r={c} /> <span className={c.passes ? 'ok' : 'bad'}>{c.passes ? 'passes' : 'fails'}</span>
                    </span>
                  ))}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** Who would newly reach the service with a fix applied (its writes run in a transaction rolled back), then Confirm. */
function FixConfirm({
  fix,
  serviceId,
  serviceName,
  want,
  onCancel,
  onApplied,
}: {
  fix: Explanation['fixes'][number];
  serviceId: string;
  serviceName: string;
  want: 'Dial' | 'Bind';
  onCancel(): void;
  onApplied(): void;
}) {
  const trpc = useTRPC();
  const preview = useQuery(trpc.policy.previewFix.queryOptions({ serviceId, want, changes: fix.changes }, { staleTime: 0, gcTime: 0 }));
  const apply = useMutation(trpc.policy.applyFix.mutationOptions());
  const verb = want === 'Dial' ? 'dial' : 'bind';
  const p = preview.data;
  async function confirm() {
    try {
      await apply.mutateAsync({ changes: fix.changes });
      onApplied();
    } catch {
      /* shown below */
    }
  }
  return (
    <div className="fix-preview" role="group" aria-label="Confirm the change" data-testid="fix-preview">
      {preview.isPending && <Spinner label="Working out who else gains access…" />}
      {preview.error && <ErrorBox error={preview.error} title="Cannot preview:" />}
      {p && (
        <>
          <p>
            {p.gainCount === 0
              ? `No identity newly reaches ${serviceName} with this change${fix.complete ? '' : ' alone'}.`
              : `${p.gainCount} identit${p.gainCount === 1 ? 'y' : 'ies'} would newly ${verb} ${serviceName}: `}
            {p.gains.map((g, i) => (
              <span key={g.id}>
                {i > 0 && ', '}
                <EntityLink r={{ entity: 'identities', id: g.id, name: g.name }} />
              </span>
            ))}
            {p.gainCount > p.gains.length && ` and ${p.gainCount - p.gains.length} more`}
            {p.gainCount > 0 && '.'}
          </p>
          {p.lossCount > 0 && <p className="bad">{`${p.lossCount} would no longer ${verb} it: ${p.losses.map((l) => l.name).join(', ')}.`}</p>}
        </>
      )}
      <div className="pt-actions">
        <button type="button" disabled={!p || apply.isPending} onClick={confirm}>
          {apply.isPending ? 'Applying…' : `Confirm${fix.changes.length > 1 ? ` (${fix.changes.length} changes)` : ''}`}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {apply.error && <ErrorBox error={apply.error} title="Not applied:" />}
    </div>
  );
}

/** One suggested fix: its sentence with links, whether it is complete, and Apply (a preview, then Confirm). */
function Fix({
  fix,
  primary,
  serviceId,
  serviceName,
  want,
  onApplied,
}: {
  fix: Explanation['fixes'][number];
  primary: boolean;
  serviceId: string;
  serviceName: string;
  want: 'Dial' | 'Bind';
  onApplied(): void;
}) {
  const [asking, setAsking] = useState(false);
  return (
    <li className={primary ? 'fix fix-primary' : 'fix'}>
      <span>
        {fix.changes.length > 1 && <span className="badge badge-ok">{`complete: ${fix.changes.length} changes`}</span>}
        {fix.changes.length > 1 && ' '}
        {fix.parts.map((p, i) => (typeof p === 'string' ? <span key={i}>{p}</span> : <EntityLink key={i} r={p} />))}
        {fix.alsoGrants > 0 && (
          <span className="muted">{` (also grants up to ${fix.alsoGrants} other identit${fix.alsoGrants === 1 ? 'y' : 'ies'})`}</span>
        )}
        .{!fix.complete && <span className="bad">{` Fixes only part: ${fix.leaves ?? 'another link is still missing'}.`}</span>}
      </span>{' '}
      {!asking && (
        <button type="button" className={primary ? undefined : 'secondary'} onClick={() => setAsking(true)} aria-label={`Apply: ${fix.sentence}`}>
          Apply…
        </button>
      )}
      {asking && (
        <FixConfirm
          fix={fix}
          serviceId={serviceId}
          serviceName={serviceName}
          want={want}
          onCancel={() => setAsking(false)}
          onApplied={() => (setAsking(false), onApplied())}
        />
      )}
    </li>
  );
}

/**
 * Why an identity can or cannot use a service: the service policies that grant Dial/Bind (with posture checks), the
 * edge router and service edge router policies behind each common router, each a link; and when access is
 * missing, the smallest change that would grant it (applicable with one button).
 */
export function AccessExplanation({
  identityId,
  serviceId,
  showSentence = true,
  want = 'Dial',
}: {
  identityId: string;
  serviceId: string;
  showSentence?: boolean;
  want?: 'Dial' | 'Bind';
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const headingId = useId();
  const [applied, setApplied] = useState<string>();
  const q = useQuery(trpc.policy.explain.queryOptions({ identityId, serviceId, want }));
  if (q.isPending) return <Spinner label="Working out why…" />;
  if (q.error) return <ErrorBox error={q.error} retry={() => q.refetch()} />;
  const x = q.data;
  return (
    <section className="explanation" aria-labelledby={headingId} data-testid="access-explanation">
      <h3
        id={headingId}
      >{`Why ${x.identity.name ?? x.identity.id} ${(want === 'Dial' ? x.canDial : x.canBind) ? 'can' : 'cannot'} ${want.toLowerCase()} ${x.service.name ?? x.service.id}`}</h3>
      {showSentence && <p className="explanation-sentence">{x.sentence}</p>}
      {applied && <Notice kind="success">{`Applied: ${applied}.`}</Notice>}
      <ol className="chain">
        <Grants what="Dial" grant={x.dial} needed />
        <Grants what="Bind" grant={x.bind} needed={false} />
        <li className="chain-step" data-testid="chain-routers">
          {mark(x.routers.common.some((r) => r.isOnline))} <strong>Edge routers in common</strong>
          {`: the identity may use ${x.routers.identityRouterCount}, the service ${x.routers.serviceRouterCount}`}
          {x.routers.common.length === 0 ? (
            <span>; none in common.</span>
          ) : (
            <ul className="chain-items">
              {x.routers.common.map((r) => (
                <li key={r.id}>
                  <EntityLink r={r} /> <span className={`badge ${r.isOnline ? 'badge-ok' : 'badge-off'}`}>{r.isOnline ? 'online' : 'offline'}</span>
                  {' — the identity through '}
                  <Links list={r.edgeRouterPolicies} />
                  {', the service through '}
                  <Links list={r.serviceEdgeRouterPolicies} />
                </li>
              ))}
              {x.routers.moreCommon > 0 && <li className="muted">{`and ${x.routers.moreCommon} more`}</li>}
            </ul>
          )}
        </li>
      </ol>
      <p className="hint">{`Posture checks evaluated with the identity's ${x.postureBasis === 'latest API session' ? 'latest API session and reported data' : 'reported data (it has no API session yet)'}.`}</p>
      {x.missing && (
        <div className="fixes" role="region" aria-label="How to grant access">
          <p className="bad">{`Missing: ${x.missing}`}</p>
          {x.fixes.length > 0 && (
            <>
              <p>
                {x.fixes[0]!.changes.length > 1
                  ? 'More than one link is missing: complete fixes first (each applies the whole missing chain at once), then fixes of one link'
                  : `The smallest change that would grant it${x.fixes.length > 1 ? ', then alternatives' : ''}`}
                :
              </p>
              <ol className="fix-list">
                {x.fixes.map((f, i) => (
                  <Fix
                    key={f.sentence}
                    fix={f}
                    primary={i === 0}
                    serviceId={serviceId}
                    serviceName={x.service.name ?? x.service.id}
                    want={want}
                    onApplied={() => (setApplied(f.sentence), void invalidate())}
                  />
                ))}
              </ol>
            </>
          )}
        </div>
      )}
    </section>
  );
}

/** The service page's "who may use it": a dialing identity (the first by default) and why it can or cannot dial. */
export function ServiceAccessPanel({ serviceId, serviceName }: { serviceId: string; serviceName?: string }) {
  const trpc = useTRPC();
  const selectId = useId();
  const users = useQuery(trpc.policy.serviceUsers.queryOptions({ serviceId, type: 'dial', limit: 50 }));
  const [chosen, setChosen] = useState<string>();
  const identity = chosen ?? users.data?.items[0]?.id;
  return (
    <section className="panel" aria-label="Who may dial">
      <header className="panel-header">
        <h2>Who may dial</h2>
      </header>
      {users.isPending && <Spinner />}
      {users.error && <ErrorBox error={users.error} retry={() => users.refetch()} />}
      {users.data && users.data.totalCount === 0 && (
        <p>
          {`No identity may dial ${serviceName ?? 'this service'} yet. `}
          <Link to="/policy-advice">Ask the policy advice</Link> for one identity to see what is missing.
        </p>
      )}
      {users.data && users.data.totalCount > 0 && identity && (
        <>
          <div className="field">
            <label htmlFor={selectId}>{`Identity (${users.data.totalCount} may dial)`}</label>
            <select id={selectId} value={identity} onChange={(e) => setChosen(e.target.value)}>
              {users.data.items.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name}
                </option>
              ))}
            </select>
          </div>
          <AccessExplanation key={identity} identityId={identity} serviceId={serviceId} />
        </>
      )}
    </section>
  );
}
