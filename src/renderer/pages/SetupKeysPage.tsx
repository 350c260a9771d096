import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { ConfirmButton } from '../components/ConfirmButton';
import { JwtView } from '../components/JwtPanel';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import { formatDate } from '../lib/format';
import type { RouterOutputs } from '../lib/types';
import { useTRPC } from '../trpc';

type SetupKey = RouterOutputs['setupKeys']['list'][number];

const inAWeek = () => {
  const d = new Date(Date.now() + 7 * 24 * 3600_000);
  d.setSeconds(0, 0);
  // a datetime-local value is local time without a zone
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

function stateOf(k: SetupKey): { label: string; className: string } {
  if (k.revoked) return { label: 'revoked', className: 'badge badge-off' };
  if (new Date(k.expiresAt).getTime() <= Date.now()) return { label: 'expired', className: 'badge badge-off' };
  if (k.maxUses !== null && k.uses >= k.maxUses) return { label: 'used up', className: 'badge badge-off' };
  return { label: 'active', className: 'badge badge-ok' };
}

/** The key just made: shown this once, as its enrollment JWT (file, QR code) and as the key for the redeem endpoint. */
function NewKeyShown({ name, secret, jwt, expiresAt, apiUrl }: { name: string; secret: string; jwt: string; expiresAt: string; apiUrl?: string }) {
  const keyId = useId();
  const cmdId = useId();
  const url = `${apiUrl ?? 'https://<controller>'}/edge/client/v1/weft/setup-keys/redeem`;
  const command = `curl -s --cacert ca.pem -X POST ${url} -H 'content-type: application/json' -d '{"key":"${secret}"}' | jq -r .data.enrollmentJwt > device.jwt && ziti edge enroll device.jwt -o device.json`;
  return (
    <div className="setup-key-secret" data-testid="setup-key-secret">
      <Notice kind="success">{`Setup key "${name}" made. Copy it now: it is shown only this once.`}</Notice>
      <p className="hint">
        Every device enrolls with the same JWT (<code>ziti edge enroll {name}.jwt</code>, or scan it with a Ziti app): each enrollment makes a new
        Device identity with this key&apos;s attributes, until the key expires, is used up or revoked.
      </p>
      <JwtView jwt={jwt} filename={`${name}.jwt`} expiresAt={expiresAt} what="Setup key enrollment" />
      <div className="field">
        <label htmlFor={keyId}>Setup key</label>
        <input id={keyId} className="code" readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
      </div>
      <div className="field">
        <label htmlFor={cmdId}>Or redeem the key over HTTP, then enroll</label>
        <textarea id={cmdId} className="code" readOnly rows={4} value={command} onFocus={(e) => e.currentTarget.select()} />
        <p className="hint">
          Each redeem makes a new Device identity with this key&apos;s attributes and gives its one-time enrollment JWT, which{' '}
          <code>ziti edge enroll</code> takes. ca.pem: the controller&apos;s CA certificates.
        </p>
      </div>
    </div>
  );
}

function NewKey({ apiUrl }: { apiUrl?: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const ids = { name: useId(), expires: useId(), max: useId(), attrs: useId(), prefix: useId() };
  const [name, setName] = useState('');
  const [expires, setExpires] = useState(inAWeek);
  const [maxUses, setMaxUses] = useState('');
  const [attrs, setAttrs] = useState('');
  const [prefix, setPrefix] = useState('');
  const [made, setMade] = useState<{ name: string; key: string; jwt: string; expiresAt: string }>();
  const create = useMutation(trpc.setupKeys.create.mutationOptions());
  async function submit(e: FormEvent) {
    e.preventDefault();
    setMade(undefined);
    try {
      const at = new Date(expires);
      const r = await create.mutateAsync({
        name,
        expiresAt: Number.isNaN(at.getTime()) ? expires : at.toISOString(),
        maxUses: maxUses.trim() === '' ? null : Number(maxUses),
        roleAttributes: attrs
          .split(',')
          .map((a) => a.trim().replace(/^#/, ''))
          .filter(Boolean),
        identityNamePrefix: prefix.trim() || null,
      });
      setMade({ name, key: r.key, jwt: r.enrollmentJwt, expiresAt: at.toISOString() });
      setName('');
      await qc.invalidateQueries({ queryKey: trpc.setupKeys.list.queryKey() });
    } catch {
      /* shown below */
    }
  }
  // the key made is shown below the form, not in it: its JWT's address notice holds a form of its own
  return (
    <>
      <form className="setup-key-form" aria-label="New setup key" onSubmit={submit}>
        <div className="field">
          <label htmlFor={ids.name}>Name</label>
          <input id={ids.name} value={name} placeholder="office laptops" onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={ids.expires}>Expires</label>
          <input id={ids.expires} type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={ids.max}>Uses allowed (empty: unlimited)</label>
          <input id={ids.max} type="number" min={1} step={1} value={maxUses} onChange={(e) => setMaxUses(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={ids.attrs}>Attributes of the identities it makes (comma separated)</label>
          <input id={ids.attrs} value={attrs} placeholder="office, laptops" onChange={(e) => setAttrs(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={ids.prefix}>Identity name prefix (default: the key&apos;s name)</label>
          <input id={ids.prefix} value={prefix} placeholder="office-pc" onChange={(e) => setPrefix(e.target.value)} />
        </div>
        <div className="form-actions">
          <button type="submit" disabled={create.isPending}>
            {create.isPending ? 'Making…' : 'Make setup key'}
          </button>
        </div>
        {create.error && <ErrorBox error={create.error} title="Not made:" />}
      </form>
      {made && !create.error && <NewKeyShown name={made.name} secret={made.key} jwt={made.jwt} expiresAt={made.expiresAt} apiUrl={apiUrl} />}
    </>
  );
}

function KeyRow({ k }: { k: SetupKey }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const revoke = useMutation(
    trpc.setupKeys.revoke.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.setupKeys.list.queryKey() }) }),
  );
  const state = stateOf(k);
  return (
    <tr data-testid="setup-key" data-state={state.label}>
      <td data-label="Name">{k.name}</td>
      <td data-label="Attributes">{(k.roleAttributes ?? []).map((a) => `#${a}`).join(', ') || '—'}</td>
      <td data-label="Uses">{`${k.uses} of ${k.maxUses ?? 'unlimited'}`}</td>
      <td data-label="Expires">{formatDate(k.expiresAt)}</td>
      <td data-label="State">
        <span className={state.className}>{state.label}</span>
      </td>
      <td data-label="Actions">
        {!k.revoked && (
          <ConfirmButton label="Revoke" confirmLabel={`Revoke ${k.name}`} busy={revoke.isPending} onConfirm={() => revoke.mutate({ id: k.id })} />
        )}
        {revoke.error && <ErrorBox error={revoke.error} title="Not revoked:" />}
      </td>
    </tr>
  );
}

/** Setup keys: reusable, expiring keys a device trades for its own identity with set attributes (OTT enrollment). */
export function SetupKeysPage() {
  const trpc = useTRPC();
  const list = useQuery(trpc.setupKeys.list.queryOptions());
  const address = useQuery(trpc.networkAddress.view.queryOptions());
  return (
    <Page
      title="Setup keys"
      description="Reusable keys that expire: every enrollment with a key's JWT (ziti edge enroll, a Ziti app's QR scan) or redeem of the key (POST /edge/client/v1/weft/setup-keys/redeem) makes a new Device identity with the key's attributes."
    >
      <Panel title="New setup key">
        <NewKey apiUrl={address.data?.api.url} />
      </Panel>
      <Panel title="Setup keys">
        {list.isPending && <Spinner />}
        {list.error && <ErrorBox error={list.error} retry={() => list.refetch()} />}
        {list.data && list.data.length === 0 && <p>No setup keys yet.</p>}
        {list.data && list.data.length > 0 && (
          <div className="table-scroll resource-table">
            <table aria-label="Setup keys">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Attributes</th>
                  <th scope="col">Uses</th>
                  <th scope="col">Expires</th>
                  <th scope="col">State</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((k) => (
                  <KeyRow key={k.id} k={k} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Panel>
    </Page>
  );
}
