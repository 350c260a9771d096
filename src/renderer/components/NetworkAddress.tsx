import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { errorInfo } from '../lib/errors';
import { useTRPC } from '../trpc';

/** 127.0.0.0/8, ::1, localhost: only this machine reaches it (as the core decides, dataPlane/networkAddress.ts). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The controller address an enrollment JWT sends devices to (`iss`), if it can be read. */
export function jwtAddress(jwt: string): string | undefined {
  try {
    const payload = jwt.split('.')[1] ?? '';
    const json = atob(
      payload
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(payload.length / 4) * 4, '='),
    );
    const iss = (JSON.parse(json) as { iss?: unknown }).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

const hostOf = (url: string) => {
  try {
    return new URL(url.replace(/^tls:/, 'https:')).hostname;
  } catch {
    return url;
  }
};

/**
 * Under an enrollment JWT: the address it sends devices to and, when only this machine can reach it, a warning with
 * the fix (advertise an address other devices reach).
 */
export function JwtAddress({ jwt }: { jwt: string }) {
  const iss = jwtAddress(jwt);
  const [changed, setChanged] = useState<string>();
  if (!iss) return null;
  const loopback = isLoopbackHost(hostOf(iss));
  return (
    <div className="jwt-address">
      <p className="hint">
        Devices enroll at <code>{iss}</code>.
      </p>
      {changed && (
        <div className="notice notice-success" role="status">
          {changed}
        </div>
      )}
      {loopback && (
        <div className="notice notice-warning">
          <p>
            <strong>Only this machine can reach {hostOf(iss)}.</strong> A phone or another computer cannot enroll with this token, nor connect through
            the router, until the network advertises an address they reach.
          </p>
          <AdvertiseAddressForm onDone={setChanged} />
        </div>
      )}
    </div>
  );
}

/**
 * Choose one of this machine's addresses (or type another) and advertise it for the API and the built-in router in one
 * step: they listen there too, the data stays, and outstanding enrollment tokens are signed again for it. Shown only
 * to those allowed to see the listeners' addresses.
 */
export function AdvertiseAddressForm({ onDone }: { onDone?(message: string): void }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const id = useId();
  const view = useQuery(trpc.networkAddress.view.queryOptions());
  const advertise = useMutation(trpc.networkAddress.advertise.mutationOptions());
  const [choice, setChoice] = useState<string>();
  const [other, setOther] = useState('');
  if (!view.data) return null;
  const candidates = view.data.candidates;
  const picked = choice ?? candidates[0]?.address ?? 'other';
  const host = picked === 'other' ? other.trim() : picked;
  const error = advertise.error ? errorInfo(advertise.error) : undefined;
  return (
    <form
      aria-label="Advertise an address other devices reach"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          const r = await advertise.mutateAsync({ host });
          await qc.invalidateQueries();
          onDone?.(
            `Devices now reach the API at ${r.api.url}${r.router ? ` and the router at ${r.router.url}` : ''}; enrollment tokens were signed again for it. Weft keeps this address after a restart.`,
          );
        } catch {
          /* shown below */
        }
      }}
    >
      <p className="hint">{`Now advertised: the API at ${view.data.api.url}${view.data.router ? `, the router at ${view.data.router.url}` : ''}.`}</p>
      <fieldset className="address-choice">
        <legend>Address of this machine for other devices</legend>
        {candidates.map((c) => (
          <label key={c.address} className="inline">
            <input type="radio" name={`${id}-host`} value={c.address} checked={picked === c.address} onChange={() => setChoice(c.address)} />
            {`${c.address} (${c.interface})`}
          </label>
        ))}
        <label className="inline">
          <input type="radio" name={`${id}-host`} value="other" checked={picked === 'other'} onChange={() => setChoice('other')} />
          Another address
        </label>
        {picked === 'other' && (
          <div className="field">
            <label htmlFor={`${id}-other`}>Other address (IP)</label>
            <input
              id={`${id}-other`}
              type="text"
              value={other}
              onChange={(e) => setOther(e.target.value)}
              autoComplete="off"
              spellCheck={false}
              aria-invalid={error?.ziti?.cause?.field === 'host' || undefined}
              aria-describedby={error ? `${id}-error` : undefined}
            />
          </div>
        )}
      </fieldset>
      {error && (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error.ziti?.cause ? `${error.ziti.cause.value ?? host} ${error.ziti.cause.reason}` : error.message}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" disabled={advertise.isPending || !host}>
          {advertise.isPending ? 'Applying…' : 'Advertise this address'}
        </button>
      </div>
    </form>
  );
}
