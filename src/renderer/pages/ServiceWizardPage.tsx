import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { AttributesField, RolesField } from '../components/RolesField';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import { errorInfo } from '../lib/errors';
import type { RouterOutputs } from '../lib/types';
import { Link, navigate } from '../router';
import { useTRPC } from '../trpc';
import '../workflows.css';
import { RequiredMark } from '../components/RequiredMark';

type HostKind = 'router' | 'identity' | 'sdk';
type Preview = RouterOutputs['serviceWizard']['preview'];

export interface WizardState {
  name: string;
  roleAttributes: string[];
  encryptionRequired: boolean;
  intercept: boolean;
  interceptHost: string;
  interceptPort: string;
  hostKind: HostKind;
  hostAddress: string;
  hostPort: string;
  hostProtocol: 'tcp' | 'udp';
  hostRoles: string[];
  dialRoles: string[];
  routerRoles: string[];
  edgeRouterPolicy: 'auto' | 'always' | 'never';
}

export const INITIAL: WizardState = {
  name: '',
  roleAttributes: [],
  encryptionRequired: true,
  intercept: true,
  interceptHost: '',
  interceptPort: '80',
  hostKind: 'router',
  hostAddress: '127.0.0.1',
  hostPort: '',
  hostProtocol: 'tcp',
  hostRoles: [],
  dialRoles: [],
  routerRoles: [],
  edgeRouterPolicy: 'auto',
};

// an empty box is a missing value ("is required"), not an empty string
const num = (s: string): number | string | undefined => (/^\d+$/.test(s.trim()) ? Number(s.trim()) : s.trim() || undefined);

/** The wizard's request body (the core validates it; errors come back naming these fields). */
export function wizardBody(s: WizardState) {
  const host =
    s.hostKind === 'router'
      ? { kind: 'router', address: s.hostAddress.trim(), port: num(s.hostPort) }
      : s.hostKind === 'identity'
        ? { kind: 'identity', identityRoles: s.hostRoles, address: s.hostAddress.trim(), port: num(s.hostPort), protocol: s.hostProtocol }
        : { kind: 'sdk', identityRoles: s.hostRoles };
  return {
    name: s.name.trim(),
    roleAttributes: s.roleAttributes,
    encryptionRequired: s.encryptionRequired,
    ...(s.intercept
      ? {
          intercept: {
            addresses: s.interceptHost.trim() ? [s.interceptHost.trim()] : [],
            port: num(s.interceptPort),
            protocols: [s.hostKind === 'identity' ? s.hostProtocol : 'tcp'],
          },
        }
      : {}),
    host,
    dialRoles: s.dialRoles,
    ...(s.routerRoles.length ? { routerRoles: s.routerRoles } : {}),
    edgeRouterPolicy: s.edgeRouterPolicy,
  };
}

type FieldName =
  'name' | 'roleAttributes' | 'interceptHost' | 'interceptPort' | 'hostKind' | 'hostAddress' | 'hostPort' | 'hostRoles' | 'dialRoles' | 'routerRoles';

/** The form field an error of the core names (`host.port`, `dialRoles`, `intercept.addresses` ...). */
export function fieldOf(path: string | undefined): FieldName | undefined {
  if (!path) return undefined;
  if (path === 'name') return 'name';
  if (path.startsWith('roleAttributes')) return 'roleAttributes';
  if (path.startsWith('intercept.port')) return 'interceptPort';
  if (path.startsWith('intercept')) return 'interceptHost';
  if (path.startsWith('host.port')) return 'hostPort';
  if (path.startsWith('host.identityRoles')) return 'hostRoles';
  if (path.startsWith('host.routerId') || path === 'host.kind') return 'hostKind';
  if (path.startsWith('host')) return 'hostAddress';
  if (path.startsWith('dialRoles')) return 'dialRoles';
  if (path.startsWith('routerRoles')) return 'routerRoles';
  return undefined;
}

/** The wizard's fields as their labels read (for the summary naming every field at fault). */
const FIELD_LABELS: Record<FieldName, string> = {
  name: 'Name',
  roleAttributes: 'Service attributes',
  interceptHost: 'Host name clients use',
  interceptPort: 'Port clients use',
  hostKind: 'Where it lives',
  hostAddress: 'Address',
  hostPort: 'Port it listens on',
  hostRoles: 'Hosting identities',
  dialRoles: 'Who may dial',
  routerRoles: 'Which edge routers carry it',
};

/** The preview's query (tRPC keys start with the procedure's path). */
const isWizardPreview = (key: readonly unknown[]) => Array.isArray(key[0]) && key[0].join('.') === 'serviceWizard.preview';

const KIND_LABELS: Record<string, string> = {
  'intercept-config': 'config (intercept.v1)',
  'host-config': 'config (host.v1)',
  service: 'service',
  'dial-policy': 'service policy (Dial)',
  'bind-policy': 'service policy (Bind)',
  'service-edge-router-policy': 'service edge router policy',
  'edge-router-policy': 'edge router policy',
};
const SIDE_LABELS: Record<string, string> = {
  identityRoles: 'Identities',
  serviceRoles: 'Services',
  edgeRouterRoles: 'Edge routers',
};

/** The REST requests as text: method and path, the JSON body, and the variable that keeps the created id. */
export function restText(rest: Preview['commands']['rest']): string {
  return rest.map((r) => `${r.method} ${r.path}\n${JSON.stringify(r.body, null, 2)}\n# ${r.saveIdAs} = data.id of the response`).join('\n\n');
}

function CopyBlock({ title, hint, text, testId }: { title: string; hint: ReactNode; text: string; testId: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="plan-commands" data-testid={testId}>
      <h3>{title}</h3>
      <p className="hint">{hint}</p>
      <pre className="code" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
        {text}
      </pre>
      <button
        type="button"
        className="secondary"
        onClick={() =>
          navigator.clipboard?.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : `Copy ${title.toLowerCase()}`}
      </button>
    </div>
  );
}

/** The same plan as `ziti` CLI commands and Management API requests (generated by the core from the plan). */
export function CommandsView({ commands }: { commands: Preview['commands'] }) {
  return (
    <section aria-label="Equivalent commands">
      <CopyBlock
        title="ziti CLI commands"
        testId="wizard-cli"
        hint={
          <>
            Run after <code>ziti edge login</code>; the CLI looks the <code>@names</code> up itself.
          </>
        }
        text={commands.cli.join('\n')}
      />
      <CopyBlock
        title="REST requests"
        testId="wizard-rest"
        hint={`Management API requests, in order, each with the admin's zt-session header; a \${…_ID} is the id an earlier request returned.`}
        text={restText(commands.rest)}
      />
    </section>
  );
}

/** The plan as the core computed it, with the dry run's outcome. */
export function PlanView({ preview, headingRef }: { preview: Preview; headingRef?: React.Ref<HTMLHeadingElement> }) {
  return (
    <>
      <h2 ref={headingRef} tabIndex={-1} className="plan-heading">{`The wizard will create ${preview.steps.length} things`}</h2>
      {preview.ok ? (
        <Notice kind="success">Dry run passed: every step was tried in a transaction that was then rolled back. Nothing exists yet.</Notice>
      ) : (
        <div className="error-box" role="alert">
          <strong>{`The dry run failed at step ${preview.steps.findIndex((s) => s.key === preview.problem?.step) + 1}:`}</strong>{' '}
          {preview.problem?.reason ?? preview.problem?.message}
        </div>
      )}
      <ul className="notes">
        {preview.notes.map((n) => (
          <li key={n}>{n}</li>
        ))}
      </ul>
      <ol className="plan" aria-label="Planned entities">
        {preview.steps.map((s) => (
          <li key={s.key} className={preview.problem?.step === s.key ? 'plan-failed' : undefined} data-testid={`plan-${s.key}`}>
            <strong>{s.name}</strong>
            <span className="plan-kind">{KIND_LABELS[s.key] ?? s.resource}</span>
            <div>{s.summary}</div>
            {s.roles && (
              <dl>
                {Object.entries(s.roles).map(([side, list]) => (
                  <div key={side} style={{ display: 'contents' }}>
                    <dt>{SIDE_LABELS[side] ?? side}</dt>
                    <dd>
                      {list.map((r) => r.name).join(', ') || '—'}
                      {s.matches?.[side] !== undefined && <span className="muted">{` (matches ${s.matches[side]} now)`}</span>}
                    </dd>
                  </div>
                ))}
              </dl>
            )}
          </li>
        ))}
      </ol>
    </>
  );
}

function Field(p: {
  id: string;
  label: string;
  error?: string;
  hint?: ReactNode;
  children: (describedBy: string | undefined) => ReactNode;
  required?: boolean;
}) {
  const describedBy = [p.hint ? `${p.id}-hint` : undefined, p.error ? `${p.id}-error` : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={p.id}>
        {p.label}
        <RequiredMark when={p.required} />
      </label>
      {p.children(describedBy)}
      {p.hint && (
        <span id={`${p.id}-hint`} className="hint">
          {p.hint}
        </span>
      )}
      {p.error && (
        <span id={`${p.id}-error`} className="field-error" role="alert">
          {p.error}
        </span>
      )}
    </div>
  );
}

/**
 * One form for a usable service: how clients reach it, where it lives, who may dial, who hosts it, which routers.
 * "Preview" asks the core for the plan and a dry run of it; "Create" makes everything in one transaction and opens
 * the service page, where the policy advice of a dialing identity is shown.
 */
export function ServiceWizardPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const base = useId();
  const id = (f: string) => `${base}-${f}`;
  const [s, setS] = useState<WizardState>(INITIAL);
  const [previewBody, setPreviewBody] = useState<ReturnType<typeof wizardBody>>();
  const previewHeading = useRef<HTMLHeadingElement>(null);
  const set = <K extends keyof WizardState>(k: K, v: WizardState[K]) => {
    setS((cur) => ({ ...cur, [k]: v }));
    setPreviewBody(undefined);
  };
  const preview = useQuery({
    ...trpc.serviceWizard.preview.queryOptions({ body: previewBody ?? {} }),
    enabled: !!previewBody,
    retry: false,
    staleTime: 0,
    gcTime: 0,
  });
  const create = useMutation(trpc.serviceWizard.create.mutationOptions());

  useEffect(() => {
    if (preview.data) previewHeading.current?.focus();
  }, [preview.data]);

  const problem = preview.data?.problem;
  const error = create.error ?? preview.error;
  // every field the core names at once (its first is where the focus goes)
  const ziti = errorInfo(error).ziti;
  const fieldErrors = new Map<FieldName, string>();
  for (const c of error
    ? (ziti?.causes ?? (ziti?.cause ? [ziti.cause] : []))
    : problem?.field
      ? [{ field: problem.field, reason: problem.reason ?? '' }]
      : []) {
    const f = fieldOf(c.field);
    if (f && !fieldErrors.has(f)) fieldErrors.set(f, c.reason || errorInfo(error).message);
  }
  const errField = fieldErrors.keys().next().value;
  const errorFor = (f: FieldName) => fieldErrors.get(f);
  const invalid = (f: FieldName) => (fieldErrors.has(f) ? true : undefined);

  useEffect(() => {
    // a field error moves focus to that field (keyboard users hear it)
    if (errField && (preview.error || create.error)) document.getElementById(id(errField))?.focus();
  }, [errField, preview.error, create.error]);

  async function doCreate() {
    try {
      const r = await create.mutateAsync({ body: wizardBody(s) });
      navigate(`/services/${encodeURIComponent(r.serviceId)}`);
      // everything but the preview, whose dry run would now fail on what was just created
      await qc.invalidateQueries({ predicate: (q) => !isWizardPreview(q.queryKey) });
    } catch {
      /* shown at the field */
    }
  }

  const hostKinds: Array<{ value: HostKind; label: string; hint: string }> = [
    {
      value: 'router',
      label: 'Behind the built-in router',
      hint: 'The router connects to the address below (a local web app, say). Nothing to install.',
    },
    {
      value: 'identity',
      label: 'On a hosting identity',
      hint: 'A tunneler on that identity (ziti tunnel host, a Ziti desktop app) connects to the address below.',
    },
    { value: 'sdk', label: 'In an SDK application', hint: 'An application using an OpenZiti SDK on that identity binds the service itself.' },
  ];

  return (
    <Page
      title="New service (wizard)"
      description="Everything a service needs in one form: configs, policies and routers, created together or not at all."
    >
      <form
        className="wizard"
        aria-label="Service wizard"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setPreviewBody(wizardBody(s));
        }}
      >
        <fieldset>
          <legend>The service</legend>
          <Field
            id={id('name')}
            label="Name"
            required
            error={errorFor('name')}
            hint="Configs and policies are named after it (name-dial, name-host, …)."
          >
            {(d) => (
              <input
                id={id('name')}
                type="text"
                value={s.name}
                onChange={(e) => set('name', e.target.value)}
                aria-describedby={d}
                aria-invalid={invalid('name')}
                autoComplete="off"
              />
            )}
          </Field>
          <Field id={id('roleAttributes')} label="Service attributes" error={errorFor('roleAttributes')}>
            {(d) => (
              <AttributesField
                id={id('roleAttributes')}
                kind="service"
                value={s.roleAttributes}
                onChange={(v) => set('roleAttributes', v)}
                describedBy={d}
                invalid={invalid('roleAttributes')}
              />
            )}
          </Field>
          <label className="inline">
            <input type="checkbox" checked={s.encryptionRequired} onChange={(e) => set('encryptionRequired', e.target.checked)} />
            End-to-end encryption required
          </label>
        </fieldset>

        <fieldset>
          <legend>How clients reach it</legend>
          <label className="inline">
            <input type="checkbox" checked={s.intercept} onChange={(e) => set('intercept', e.target.checked)} />
            Intercept a host name (Ziti apps and tunnelers)
          </label>
          {s.intercept && (
            <div className="row">
              <Field
                id={id('interceptHost')}
                label="Host name clients use"
                required
                error={errorFor('interceptHost')}
                hint="e.g. wiki.lab.internal — any name; tunnelers answer for it."
              >
                {(d) => (
                  <input
                    id={id('interceptHost')}
                    type="text"
                    value={s.interceptHost}
                    onChange={(e) => set('interceptHost', e.target.value)}
                    aria-describedby={d}
                    aria-invalid={invalid('interceptHost')}
                    autoComplete="off"
                    spellCheck={false}
                  />
                )}
              </Field>
              <Field id={id('interceptPort')} label="Port clients use" required error={errorFor('interceptPort')}>
                {(d) => (
                  <input
                    id={id('interceptPort')}
                    type="number"
                    inputMode="numeric"
                    min={1}
                    max={65535}
                    value={s.interceptPort}
                    onChange={(e) => set('interceptPort', e.target.value)}
                    aria-describedby={d}
                    aria-invalid={invalid('interceptPort')}
                  />
                )}
              </Field>
            </div>
          )}
        </fieldset>

        <fieldset>
          <legend>Where it lives</legend>
          <div
            className="radio-stack"
            role="radiogroup"
            aria-label="Hosted"
            id={id('hostKind')}
            aria-describedby={errorFor('hostKind') ? `${id('hostKind')}-error` : undefined}
          >
            {hostKinds.map((k) => (
              <label key={k.value} className="inline">
                <input
                  type="radio"
                  name={id('hostKindRadio')}
                  value={k.value}
                  checked={s.hostKind === k.value}
                  onChange={() => set('hostKind', k.value)}
                />
                <span>
                  {k.label} <span className="hint">{k.hint}</span>
                </span>
              </label>
            ))}
          </div>
          {errorFor('hostKind') && (
            <span id={`${id('hostKind')}-error`} className="field-error" role="alert">
              {errorFor('hostKind')}
            </span>
          )}
          {s.hostKind !== 'router' && (
            <Field
              id={id('hostRoles')}
              label="Hosting identities"
              required
              error={errorFor('hostRoles')}
              hint="#attribute or @identity; these identities get the Bind policy."
            >
              {(d) => (
                <RolesField
                  id={id('hostRoles')}
                  kind="identity"
                  value={s.hostRoles}
                  onChange={(v) => set('hostRoles', v)}
                  semantic="AnyOf"
                  describedBy={d}
                  invalid={invalid('hostRoles')}
                />
              )}
            </Field>
          )}
          {s.hostKind !== 'sdk' && (
            <div className="row">
              <Field
                id={id('hostAddress')}
                label={s.hostKind === 'router' ? 'Address the router connects to' : 'Address the tunneler connects to'}
                required
                error={errorFor('hostAddress')}
              >
                {(d) => (
                  <input
                    id={id('hostAddress')}
                    type="text"
                    value={s.hostAddress}
                    onChange={(e) => set('hostAddress', e.target.value)}
                    aria-describedby={d}
                    aria-invalid={invalid('hostAddress')}
                    autoComplete="off"
                    spellCheck={false}
                  />
                )}
              </Field>
              <Field id={id('hostPort')} label="Port it listens on" required error={errorFor('hostPort')}>
                {(d) => (
                  <input
                    id={id('hostPort')}
                    type="number"
                    inputMode="numeric"
                    min={1}
                    max={65535}
                    value={s.hostPort}
                    onChange={(e) => set('hostPort', e.target.value)}
                    aria-describedby={d}
                    aria-invalid={invalid('hostPort')}
                  />
                )}
              </Field>
            </div>
          )}
        </fieldset>

        <fieldset>
          <legend>Who may use it</legend>
          <Field
            id={id('dialRoles')}
            label="Who may dial"
            required
            error={errorFor('dialRoles')}
            hint="Pick identities by name (@name) or #attributes; any of them may dial."
          >
            {(d) => (
              <RolesField
                id={id('dialRoles')}
                kind="identity"
                value={s.dialRoles}
                onChange={(v) => set('dialRoles', v)}
                semantic="AnyOf"
                describedBy={d}
                invalid={invalid('dialRoles')}
              />
            )}
          </Field>
          <Field
            id={id('routerRoles')}
            label="Which edge routers carry it"
            error={errorFor('routerRoles')}
            hint="Leave empty for the built-in router."
          >
            {(d) => (
              <RolesField
                id={id('routerRoles')}
                kind="edge-router"
                value={s.routerRoles}
                onChange={(v) => set('routerRoles', v)}
                semantic="AnyOf"
                describedBy={d}
                invalid={invalid('routerRoles')}
              />
            )}
          </Field>
          <Field id={id('erp')} label="Edge router policy for the dialers">
            {(d) => (
              <select
                id={id('erp')}
                value={s.edgeRouterPolicy}
                aria-describedby={d}
                onChange={(e) => set('edgeRouterPolicy', e.target.value as WizardState['edgeRouterPolicy'])}
              >
                <option value="auto">When needed (some dialer would not reach the routers)</option>
                <option value="always">Always create one</option>
                <option value="never">Never</option>
              </select>
            )}
          </Field>
        </fieldset>
        {fieldErrors.size > 1 && (
          <div className="error-box" role="alert" data-testid="wizard-missing">
            {`${fieldErrors.size} fields need attention: ${[...fieldErrors.keys()].map((f) => FIELD_LABELS[f]).join(', ')}.`}
          </div>
        )}
        {error && !errField && <ErrorBox error={error} />}
        <div className="form-actions">
          <button type="submit" disabled={preview.isFetching}>
            {preview.isFetching ? 'Checking…' : 'Preview'}
          </button>
          <Link to="/services">Cancel</Link>
        </div>
      </form>
      {preview.isFetching && !preview.data && <Spinner label="Planning and trying it out…" />}
      {preview.data && previewBody && (
        <Panel title="Preview">
          <PlanView preview={preview.data} headingRef={previewHeading} />
          <div className="form-actions">
            <button type="button" onClick={doCreate} disabled={!preview.data.ok || create.isPending}>
              {create.isPending ? 'Creating…' : `Create service ${s.name.trim()}`}
            </button>
            <button type="button" className="secondary" onClick={() => (setPreviewBody(undefined), document.getElementById(id('name'))?.focus())}>
              Change something
            </button>
          </div>
          {create.error && <ErrorBox error={create.error} title="Not created:" />}
          <CommandsView commands={preview.data.commands} />
        </Panel>
      )}
    </Page>
  );
}
