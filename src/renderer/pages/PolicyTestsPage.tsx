import { useMutation, useQuery } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { AccessExplanation } from '../components/AccessExplanation';
import { ConfirmButton } from '../components/ConfirmButton';
import { RefSelect } from '../components/inputs';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import type { RouterOutputs } from '../lib/types';
import { Link } from '../router';
import { useTRPC } from '../trpc';
import '../policyTests.css';

type Report = RouterOutputs['policyTests']['results'];
type Test = Report['tests'][number];
type Expectation = Test['expectation'];

export const EXPECTATION_TEXT: Record<Expectation, string> = {
  canDial: 'must be able to dial',
  canBind: 'must be able to bind',
  mustNotDial: 'must not be able to dial',
  mustNotBind: 'must not be able to bind',
};

/** One side of a test: one entity (picked by name) or every entity with an attribute. */
function SidePicker({
  what,
  resource,
  value,
  onChange,
}: {
  what: string;
  resource: 'identities' | 'services';
  value: string;
  onChange(v: string): void;
}) {
  const kindId = useId();
  const pickId = useId();
  const [mode, setMode] = useState<'one' | 'attr'>('one');
  return (
    <fieldset className="pt-side">
      <legend>{what}</legend>
      <div className="field">
        <label htmlFor={kindId}>{`Which ${what.toLowerCase()}`}</label>
        <select id={kindId} value={mode} onChange={(e) => (setMode(e.target.value as 'one' | 'attr'), onChange(''))}>
          <option value="one">{`One ${what.toLowerCase()}`}</option>
          <option value="attr">Every one with an attribute (#attribute, #all)</option>
        </select>
      </div>
      <div className="field">
        <label htmlFor={pickId}>{mode === 'one' ? what : `${what} attribute`}</label>
        {mode === 'one' ? (
          <RefSelect
            id={pickId}
            label={what}
            resource={resource}
            value={value.startsWith('@') ? value.slice(1) : null}
            onChange={(id) => onChange(id ? `@${id}` : '')}
          />
        ) : (
          <input id={pickId} value={value} placeholder="#guests" onChange={(e) => onChange(e.target.value)} />
        )}
      </div>
    </fieldset>
  );
}

function NewTest() {
  const trpc = useTRPC();
  const nameId = useId();
  const expectId = useId();
  const [name, setName] = useState('');
  const [identityRole, setIdentityRole] = useState('');
  const [serviceRole, setServiceRole] = useState('');
  const [expectation, setExpectation] = useState<Expectation>('canDial');
  const [saved, setSaved] = useState<string>();
  const create = useMutation(trpc.policyTests.create.mutationOptions());
  async function submit(e: FormEvent) {
    e.preventDefault();
    try {
      await create.mutateAsync({ name, identityRole, serviceRole, expectation });
      setSaved(name);
      setName('');
    } catch {
      /* shown below */
    }
  }
  return (
    <form className="pt-form" aria-label="New policy test" onSubmit={submit}>
      <div className="field">
        <label htmlFor={nameId}>Name</label>
        <input id={nameId} value={name} placeholder="laptop-1 must reach wiki" onChange={(e) => setName(e.target.value)} />
      </div>
      <SidePicker what="Identity" resource="identities" value={identityRole} onChange={setIdentityRole} />
      <div className="field">
        <label htmlFor={expectId}>Expectation</label>
        <select id={expectId} value={expectation} onChange={(e) => setExpectation(e.target.value as Expectation)}>
          {Object.entries(EXPECTATION_TEXT).map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          ))}
        </select>
      </div>
      <SidePicker what="Service" resource="services" value={serviceRole} onChange={setServiceRole} />
      <div className="form-actions">
        <button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Saving…' : 'Save test'}
        </button>
      </div>
      {create.error && <ErrorBox error={create.error} title="Not saved:" />}
      {saved && !create.error && <Notice kind="success">{`Saved "${saved}"; it runs after every change.`}</Notice>}
    </form>
  );
}

const sentence = (t: Test) => `${t.identityLabel ?? t.identityRole} ${EXPECTATION_TEXT[t.expectation]} ${t.serviceLabel ?? t.serviceRole}`;

function TestItem({ t }: { t: Test }) {
  const trpc = useTRPC();
  const remove = useMutation(trpc.policyTests.delete.mutationOptions());
  const [why, setWhy] = useState(false);
  const pair = t.failure?.identity && t.failure.service ? { i: t.failure.identity.id, s: t.failure.service.id } : undefined;
  return (
    <li className={`pt-item pt-${t.status}`} data-testid="policy-test">
      <div className="pt-head">
        <span className={`badge ${t.status === 'passing' ? 'badge-ok' : t.status === 'failing' ? 'badge-bad' : 'badge-off'}`}>{t.status}</span>{' '}
        <strong>{t.name}</strong>
      </div>
      <p className="pt-sentence">{sentence(t)}</p>
      {t.failure && <p className="bad pt-why">{t.failure.why}</p>}
      <div className="pt-actions">
        {pair && (
          <button type="button" className="secondary" aria-expanded={why} onClick={() => setWhy(!why)}>
            {why ? 'Hide why' : 'Why?'}
          </button>
        )}
        {pair && <Link to={`/policy-advice/${encodeURIComponent(pair.i)}/${encodeURIComponent(pair.s)}`}>Open in policy advice</Link>}
        <ConfirmButton label="Delete" confirmLabel={`Delete test ${t.name}`} busy={remove.isPending} onConfirm={() => remove.mutate({ id: t.id })} />
      </div>
      {remove.error && <ErrorBox error={remove.error} title="Not deleted:" />}
      {why && pair && <AccessExplanation identityId={pair.i} serviceId={pair.s} want={t.expectation.endsWith('Bind') ? 'Bind' : 'Dial'} />}
    </li>
  );
}

/**
 * Saved policy tests ("laptop-1 must reach wiki", "#guests must not reach #db"): each runs after every change that
 * can affect access; a broken one names the pair that breaks it, with the advice's "why" chain and its fixes.
 */
export function PolicyTestsPage() {
  const trpc = useTRPC();
  const results = useQuery(trpc.policyTests.results.queryOptions());
  const run = useMutation(trpc.policyTests.run.mutationOptions());
  const report = results.data;
  return (
    <Page
      title="Policy tests"
      description="Expectations about access, run again after every change to policies, identities, services, edge routers and posture. Also under /edge/management/v1/weft/policy-tests, to keep them in code."
    >
      <Panel title="New test">
        <NewTest />
      </Panel>
      <Panel
        title="Tests"
        actions={
          <button type="button" className="secondary" disabled={run.isPending} onClick={() => run.mutate()}>
            {run.isPending ? 'Running…' : 'Run now'}
          </button>
        }
      >
        {results.isPending && <Spinner />}
        {results.error && <ErrorBox error={results.error} retry={() => results.refetch()} />}
        {run.error && <ErrorBox error={run.error} title="Not run:" />}
        {report && (
          <>
            <p role="status" className={report.failing ? 'bad' : 'ok'} data-testid="policy-tests-summary">
              {report.tests.length === 0
                ? 'No tests yet.'
                : report.failing
                  ? `${report.failing} of ${report.tests.length} failing`
                  : `All ${report.tests.length} passing`}
            </p>
            {report.error && (
              <Notice kind="warning">{`The last run could not read the database (${report.error}); these are the results before it.`}</Notice>
            )}
            <ul className="pt-list">
              {report.tests.map((t) => (
                <TestItem key={t.id} t={t} />
              ))}
            </ul>
          </>
        )}
      </Panel>
    </Page>
  );
}
