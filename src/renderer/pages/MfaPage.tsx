import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { QrCode } from '../components/Qr';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import { useTRPC } from '../trpc';

function CodeForm({
  label,
  submit,
  busy,
  error,
  onSubmit,
}: {
  label: string;
  submit: string;
  busy: boolean;
  error: unknown;
  onSubmit(code: string): void;
}) {
  const id = useId();
  const [code, setCode] = useState('');
  return (
    <form aria-label={submit} className="inline-form" onSubmit={(e) => (e.preventDefault(), onSubmit(code))}>
      {error ? <ErrorBox error={error} /> : null}
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input id={id} inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value.trim())} required />
      </div>
      <button type="submit" disabled={busy}>
        {submit}
      </button>
    </form>
  );
}

function RecoveryCodes({ codes }: { codes: string[] }) {
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
  const status = useQuery(trpc.security.mfa.status.queryOptions());
  const codes = useMutation(trpc.security.mfa.recoveryCodes.mutationOptions());
  const regenerate = useMutation(trpc.security.mfa.regenerateRecoveryCodes.mutationOptions());
  const disable = useMutation(trpc.security.mfa.disable.mutationOptions({ onSuccess: () => qc.invalidateQueries() }));
  const shown = regenerate.data?.recoveryCodes ?? codes.data?.recoveryCodes;
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
            <CodeForm
              label="Current code (or a recovery code) to disable MFA"
              submit="Disable MFA"
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
