import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { QrCode } from '../components/Qr';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import { downloadText } from '../lib/format';
import { useTRPC } from '../trpc';

function CodeForm({
  label,
  submit,
  busy,
  error,
  onSubmit,
  confirm,
}: {
  label: string;
  submit: string;
  busy: boolean;
  error: unknown;
  onSubmit(code: string): void;
  /** a dangerous action: the button is red and asks this question first */
  confirm?: string;
}) {
  const id = useId();
  const [code, setCode] = useState('');
  const [asking, setAsking] = useState(false);
  return (
    <form
      aria-label={submit}
      className="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (confirm && !asking) return setAsking(true);
        setAsking(false);
        onSubmit(code);
      }}
    >
      {error ? <ErrorBox error={error} /> : null}
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input id={id} inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value.trim())} required />
      </div>
      {asking ? (
        <span className="confirm" role="group" aria-label={confirm}>
          <span>{confirm}</span>
          <button type="submit" className="danger" disabled={busy} autoFocus>
            {`Yes, ${submit.charAt(0).toLowerCase()}${submit.slice(1)}`}
          </button>
          <button type="button" className="secondary" onClick={() => setAsking(false)}>
            Cancel
          </button>
        </span>
      ) : (
        <button type="submit" className={confirm ? 'danger' : undefined} disabled={busy}>
          {submit}
        </button>
      )}
    </form>
  );
}

/** The codes as shown, copied or downloaded: one a line. */
const codesText = (codes: string[]) => codes.join('\n') + '\n';

function RecoveryCodes({ codes }: { codes: string[] }) {
  const [copied, setCopied] = useState<string>();
  return (
    <div className="recovery-codes">
      <p>Recovery codes: each works once instead of a code from the app. Keep them somewhere safe.</p>
      <ul aria-label="Recovery codes" className="code-list">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className="button-row">
        <button
          type="button"
          className="secondary"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(codesText(codes));
              setCopied('Copied the recovery codes.');
            } catch {
              setCopied('The browser did not allow copying: select the codes, or download them.');
            }
          }}
        >
          Copy codes
        </button>
        <button type="button" className="secondary" onClick={() => downloadText('weft-recovery-codes.txt', codesText(codes), 'text/plain')}>
          Download codes (.txt)
        </button>
        {copied && (
          <span className="hint" role="status">
            {copied}
          </span>
        )}
      </div>
    </div>
  );
}

/** Enrolls the signed-in identity in TOTP MFA: provisioning QR code, recovery codes, then a code to verify. */
export function MfaEnrollment({ onDone }: { onDone?(): void }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const status = useQuery(trpc.security.mfa.status.queryOptions());
  const enroll = useMutation(
    trpc.security.mfa.enroll.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.security.mfa.status.queryKey() }) }),
  );
  const verify = useMutation(
    trpc.security.mfa.verify.mutationOptions({
      onSuccess: async () => {
        await qc.invalidateQueries();
        onDone?.();
      },
    }),
  );
  if (status.isPending) return <Spinner />;
  if (status.error) return <ErrorBox error={status.error} retry={() => status.refetch()} />;
  const s = status.data;
  if (!s) {
    return (
      <div>
        {enroll.error && <ErrorBox error={enroll.error} />}
        <button type="button" onClick={() => enroll.mutate()} disabled={enroll.isPending}>
          Start MFA enrollment
        </button>
      </div>
    );
  }
  if (s.isVerified) return <Notice kind="success">MFA is enabled.</Notice>;
  const secret = s.provisioningUrl ? new URL(s.provisioningUrl).searchParams.get('secret') : undefined;
  return (
    <div className="mfa-enrollment">
      <ol className="steps">
        <li>
          <p>Scan this QR code with an authenticator app (or enter the secret by hand).</p>
          {s.provisioningUrl && <QrCode text={s.provisioningUrl} label="MFA provisioning QR code" size={260} />}
          {secret && (
            <p>
              Secret: <code className="secret">{secret}</code>
            </p>
          )}
        </li>
        <li>{s.recoveryCodes && <RecoveryCodes codes={s.recoveryCodes} />}</li>
        <li>
          <CodeForm
            label="Code from the app"
            submit="Verify and enable MFA"
            busy={verify.isPending}
            error={verify.error}
            onSubmit={(code) => verify.mutate({ code })}
          />
        </li>
      </ol>
      <button type="button" className="link-button" onClick={() => enroll.mutate()} disabled={enroll.isPending}>
        Start over with a new secret
      </button>
    </div>
  );
}

export function MfaPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [watching, setWatching] = useState(false);
  // while a set of codes is shown, the count is checked now and then: a code used meanwhile clears the set
  const status = useQuery(trpc.security.mfa.status.queryOptions(undefined, { refetchInterval: watching ? 5_000 : false }));
  const refreshStatus = () => qc.invalidateQueries({ queryKey: trpc.security.mfa.status.queryKey() });
  const codes = useMutation(trpc.security.mfa.recoveryCodes.mutationOptions({ onSuccess: refreshStatus }));
  const regenerate = useMutation(trpc.security.mfa.regenerateRecoveryCodes.mutationOptions({ onSuccess: refreshStatus }));
  const disable = useMutation(trpc.security.mfa.disable.mutationOptions({ onSuccess: () => qc.invalidateQueries() }));
  const left = status.data?.recoveryCodesLeft;
  const made = regenerate.data?.recoveryCodes ?? codes.data?.recoveryCodes;
  // a set shown here is cleared once one of its codes has been used (the core keeps only digests of the unused
  // ones, so which one is unknown: a new set shows them all again)
  const shown = made && left !== undefined && made.length > left ? undefined : made;
  useEffect(() => setWatching(!!shown?.length), [shown?.length]);
  return (
    <Page title="Multi-factor authentication" description="TOTP MFA of the signed-in identity: once enabled, every sign-in asks for a code.">
      {status.isPending ? (
        <Spinner />
      ) : status.error ? (
        <ErrorBox error={status.error} retry={() => status.refetch()} />
      ) : !status.data?.isVerified ? (
        <Panel title="Enroll">
          <MfaEnrollment />
        </Panel>
      ) : (
        <>
          <Notice kind="success">MFA is enabled for this identity.</Notice>
          <Panel title="Recovery codes">
            {left !== undefined && (
              <p role="status">
                {`${left} unused recovery code${left === 1 ? '' : 's'} left.`}
                {made && !shown ? ' A code of the set shown here was used since, so it is hidden: make a new set to see unused codes again.' : ''}
              </p>
            )}
            <p className="hint">
              Recovery codes are stored hashed: they are shown once, when they are made. Make a new set to see codes again (the old ones stop
              working).
            </p>
            <CodeForm
              label="Current code to replace the recovery codes"
              submit="New recovery codes"
              busy={regenerate.isPending}
              error={regenerate.error}
              onSubmit={(code) => regenerate.mutate({ code })}
            />
            <CodeForm
              label="Current code to show codes made through the API and not shown yet"
              submit="Show recovery codes"
              busy={codes.isPending}
              error={codes.error}
              onSubmit={(code) => codes.mutate({ code })}
            />
            {shown && (shown.length ? <RecoveryCodes codes={shown} /> : <Notice kind="info">No recovery codes waiting to be shown.</Notice>)}
          </Panel>
          <Panel title="Disable MFA">
            <p className="hint">Dangerous: without MFA a stolen password is enough to sign in as this identity.</p>
            <CodeForm
              label="Current code (or a recovery code) to disable MFA"
              submit="Disable MFA"
              confirm="Sign-ins will no longer ask for a code. Disable MFA?"
              busy={disable.isPending}
              error={disable.error}
              onSubmit={(code) => disable.mutate({ code })}
            />
          </Panel>
        </>
      )}
    </Page>
  );
}
