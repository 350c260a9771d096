import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import type { Entity } from '../lib/types';
import { errorInfo } from '../lib/errors';
import { Link } from '../router';
import { useTRPC } from '../trpc';
import { AccessExplanation } from './AccessExplanation';
import { JwtView } from './JwtPanel';
import { ReissueEnrollment } from './ReissueEnrollment';
import { ErrorBox } from './Status';
import '../workflows.css';

const KEY = 'weft.firstRunLab';
const LAB_ATTRIBUTE = 'lab-users';

interface LabState {
  serviceId?: string;
  serviceName?: string;
  interceptHost?: string;
  interceptPort?: number;
  identityId?: string;
  dismissed?: boolean;
}

function load(): LabState {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? '{}') as LabState;
  } catch {
    return {};
  }
}

/** Whether the dashboard shows the lab: an empty network (no service yet), or a lab under way. */
export function labWanted(services: number | undefined): boolean {
  const s = load();
  if (s.dismissed) return false;
  return services === 0 || !!s.serviceId;
}

/**
 * On an empty network, the dashboard's guided lab: (1) a service for a local web app, hosted by the built-in router
 * (the service wizard's core with its defaults), (2) a device identity with its enrollment QR code, (3) connecting,
 * with the policy advice of that identity for that service.
 */
export function FirstRunLab({ onClose }: { onClose(): void }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const base = useId();
  const id = (f: string) => `${base}-${f}`;
  const [lab, setLab] = useState<LabState>(load);
  const save = (next: LabState) => {
    setLab(next);
    localStorage.setItem(KEY, JSON.stringify(next));
  };
  const [app, setApp] = useState({ name: 'my-web-app', address: '127.0.0.1', port: '3000', host: 'my-web-app.ziti', hostPort: '80' });
  const [device, setDevice] = useState('my-phone');
  const createService = useMutation(trpc.serviceWizard.create.mutationOptions());
  const createIdentity = useMutation(trpc.resources.create.mutationOptions());
  const identity = useQuery({ ...trpc.resources.get.queryOptions({ resource: 'identities', id: lab.identityId ?? '' }), enabled: !!lab.identityId });
  const stepHeadings = [useRef<HTMLHeadingElement>(null), useRef<HTMLHeadingElement>(null), useRef<HTMLHeadingElement>(null)];
  const step = !lab.serviceId ? 0 : !lab.identityId ? 1 : 2;
  const shownStep = useRef(step);
  useEffect(() => {
    // after a step is done, focus moves to the next one (not on the first render)
    if (shownStep.current === step) return;
    shownStep.current = step;
    stepHeadings[step]?.current?.focus();
  }, [step]);

  const serviceError = createService.error ? errorInfo(createService.error) : undefined;
  const jwt = ((identity.data as Entity | undefined)?.enrollment as { ott?: { id: string; jwt: string; expiresAt: string } } | undefined)?.ott;
  const finish = () => {
    save({ ...lab, dismissed: true });
    onClose();
  };

  return (
    <section className="panel lab" aria-labelledby={id('title')}>
      <header className="panel-header">
        <h2 id={id('title')}>Guided lab: reach a local web app from your phone</h2>
        <div className="panel-actions">
          <button type="button" className="link-button" onClick={finish}>
            {step === 2 ? 'Finish' : 'Hide the lab'}
          </button>
        </div>
      </header>
      <p className="hint">
        Three steps. The built-in edge router hosts the app; your device enrolls with a QR code and reaches it by name, from anywhere it can reach
        this machine's router.
      </p>
      <ol className="lab-steps">
        <li className={step > 0 ? 'done' : undefined}>
          <h3 ref={stepHeadings[0]} tabIndex={-1}>
            1. Your web app
          </h3>
          {step === 0 ? (
            <form
              aria-label="Your web app"
              onSubmit={async (e) => {
                e.preventDefault();
                try {
                  const r = await createService.mutateAsync({
                    body: {
                      name: app.name.trim(),
                      intercept: { addresses: [app.host.trim()], port: Number(app.hostPort) || app.hostPort },
                      host: { kind: 'router', address: app.address.trim(), port: Number(app.port) || app.port },
                      dialRoles: [`#${LAB_ATTRIBUTE}`],
                    },
                  });
                  await qc.invalidateQueries();
                  save({
                    ...lab,
                    serviceId: r.serviceId,
                    serviceName: app.name.trim(),
                    interceptHost: app.host.trim(),
                    interceptPort: Number(app.hostPort),
                  });
                } catch {
                  /* shown below */
                }
              }}
            >
              <div className="wizard">
                <div className="row">
                  {(
                    [
                      ['name', 'Service name', 'text'],
                      ['address', 'Where the app runs (address)', 'text'],
                      ['port', 'Its port', 'number'],
                      ['host', 'Name to open on your device', 'text'],
                      ['hostPort', 'Port on your device', 'number'],
                    ] as const
                  ).map(([k, label, type]) => {
                    const wrong = serviceError?.ziti?.cause?.field;
                    const mine =
                      wrong &&
                      ((k === 'name' && wrong === 'name') ||
                        (k === 'address' && wrong === 'host.address') ||
                        (k === 'port' && wrong === 'host.port') ||
                        (k === 'host' && wrong.startsWith('intercept.addresses')) ||
                        (k === 'hostPort' && wrong === 'intercept.port'));
                    return (
                      <div className="field" key={k}>
                        <label htmlFor={id(k)}>{label}</label>
                        <input
                          id={id(k)}
                          type={type}
                          value={app[k]}
                          onChange={(e) => setApp({ ...app, [k]: e.target.value })}
                          aria-invalid={mine || undefined}
                          aria-describedby={mine ? id('service-error') : undefined}
                          autoComplete="off"
                          spellCheck={false}
                        />
                      </div>
                    );
                  })}
                </div>
              </div>
              {serviceError && (
                <p id={id('service-error')} className="field-error" role="alert">
                  {serviceError.message}
                </p>
              )}
              <div className="form-actions">
                <button type="submit" disabled={createService.isPending}>
                  {createService.isPending ? 'Creating…' : 'Create the service'}
                </button>
                <Link to="/service-wizard">More options: the service wizard</Link>
              </div>
            </form>
          ) : (
            <p>
              {`Service ${lab.serviceName ?? ''} created: the router connects to your app; devices with #${LAB_ATTRIBUTE} may dial it.`}{' '}
              <Link to={`/services/${encodeURIComponent(lab.serviceId!)}`}>Open it</Link>
            </p>
          )}
        </li>
        <li className={step > 1 ? 'done' : step < 1 ? 'waiting' : undefined}>
          <h3 ref={stepHeadings[1]} tabIndex={-1}>
            2. Your device
          </h3>
          {step === 1 && (
            <form
              aria-label="Your device"
              className="inline-form"
              onSubmit={async (e) => {
                e.preventDefault();
                try {
                  const r = await createIdentity.mutateAsync({
                    resource: 'identities',
                    body: { name: device.trim(), type: 'Device', isAdmin: false, roleAttributes: [LAB_ATTRIBUTE], enrollment: { ott: true } },
                  });
                  await qc.invalidateQueries();
                  save({ ...lab, identityId: r.id });
                } catch {
                  /* shown below */
                }
              }}
            >
              <div className="field">
                <label htmlFor={id('device')}>Device name</label>
                <input id={id('device')} type="text" value={device} onChange={(e) => setDevice(e.target.value)} autoComplete="off" />
              </div>
              <button type="submit" disabled={createIdentity.isPending}>
                {createIdentity.isPending ? 'Creating…' : 'Create the identity'}
              </button>
              {createIdentity.error && <ErrorBox error={createIdentity.error} title="Not created:" />}
            </form>
          )}
          {step === 2 && (
            <>
              <p>{`Scan this QR code with the Ziti Mobile Edge or Desktop Edge app (add identity → scan), or load the JWT file. It is valid for three hours.`}</p>
              {jwt ? (
                <>
                  <ReissueEnrollment enrollmentId={jwt.id} expiresAt={jwt.expiresAt} />
                  <JwtView jwt={jwt.jwt} expiresAt={jwt.expiresAt} filename={`${device || 'device'}.jwt`} what="Enrollment token" />
                </>
              ) : identity.error ? (
                <ErrorBox error={identity.error} />
              ) : (
                <p className="hint">Loading the enrollment token…</p>
              )}
            </>
          )}
        </li>
        <li className={step < 2 ? 'waiting' : undefined}>
          <h3 ref={stepHeadings[2]} tabIndex={-1}>
            3. Connect
          </h3>
          {step === 2 && lab.serviceId && lab.identityId && (
            <>
              <ol>
                <li>Start your web app on the address and port of step 1.</li>
                <li>
                  After enrolling, open{' '}
                  <code>{`http://${lab.interceptHost ?? 'the name of step 1'}${lab.interceptPort && lab.interceptPort !== 80 ? `:${lab.interceptPort}` : ''}/`}</code>{' '}
                  on the device.
                </li>
                <li>
                  Watch it on the <Link to="/network">network map</Link> and in <Link to="/live">live traffic</Link>.
                </li>
              </ol>
              <AccessExplanation identityId={lab.identityId} serviceId={lab.serviceId} />
            </>
          )}
        </li>
      </ol>
    </section>
  );
}
