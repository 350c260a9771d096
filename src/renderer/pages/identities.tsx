import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { JwtView } from '../components/JwtPanel';
import { RefSelect } from '../components/inputs';
import { enrollmentExpired, ReissueEnrollment } from '../components/ReissueEnrollment';
import { ConfirmButton, nameColumn, useInvalidateAll, type ResourcePageSpec } from '../components/ResourcePage';
import { ResourceTable } from '../components/ResourceTable';
import { ErrorBox, Notice, Panel } from '../components/Status';
import type { FieldSpec, Values } from '../components/ResourceForm';
import { zitiString } from '../../shared/console';
import { formatDate } from '../lib/format';
import type { Entity } from '../lib/types';
import { useTRPC } from '../trpc';

type Enrollment = { id: string; jwt: string; expiresAt: string; username?: string; ca?: { name?: string } };
const METHOD_LABELS: Record<string, string> = {
  ott: 'One-time token (certificate)',
  updb: 'Username and password',
  ottca: 'One-time token with a CA',
};

const fields: FieldSpec[] = [
  { kind: 'text', name: 'name', label: 'Name' },
  { kind: 'select', name: 'type', label: 'Type' },
  { kind: 'checkbox', name: 'isAdmin', label: 'Administrator (full access to the management API and this console)' },
  {
    kind: 'attributes',
    name: 'roleAttributes',
    label: 'Role attributes',
    roleKind: 'identity',
    help: 'Policies select identities by these (#attribute).',
  },
  { kind: 'ref', name: 'authPolicyId', label: 'Auth policy', resource: 'auth-policies' },
  { kind: 'text', name: 'externalId', label: 'External ID' },
  // the console's choice of enrollment (not a body field): becomes `enrollment` on create
  {
    kind: 'radio',
    name: 'enrollmentMethod',
    label: 'Enrollment',
    createOnly: true,
    options: [{ value: 'none', label: 'None' }, ...Object.entries(METHOD_LABELS).map(([value, label]) => ({ value, label }))],
  },
  { kind: 'text', name: 'enrollment.updb', label: 'Username to enroll with', when: (v) => v.enrollmentMethod === 'updb' },
  {
    kind: 'ref',
    name: 'enrollment.ottca',
    label: 'CA that signs the certificate',
    resource: 'cas',
    when: (v) => v.enrollmentMethod === 'ottca',
  },
  { kind: 'tags', name: 'tags', label: 'Tags' },
];

function identityBody(v: Values) {
  const { enrollmentMethod, enrollment, ...rest } = v as Values & { enrollmentMethod?: string; enrollment?: { updb?: string; ottca?: string } };
  const body: Values = { ...rest, isAdmin: !!rest.isAdmin, roleAttributes: rest.roleAttributes ?? [] };
  if (enrollmentMethod === 'ott') body.enrollment = { ott: true };
  if (enrollmentMethod === 'updb') body.enrollment = { updb: enrollment?.updb ?? '' };
  if (enrollmentMethod === 'ottca') body.enrollment = { ottca: enrollment?.ottca ?? '' };
  return body;
}

function EnrollmentPanel({ identity }: { identity: Entity }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const refresh = useMutation(trpc.identities.refreshEnrollment.mutationOptions({ onSuccess: invalidate }));
  const remove = useMutation(trpc.resources.delete.mutationOptions({ onSuccess: invalidate }));
  const create = useMutation(trpc.identities.createEnrollment.mutationOptions({ onSuccess: invalidate }));
  const [method, setMethod] = useState<'ott' | 'updb' | 'ottca'>('ott');
  const [username, setUsername] = useState('');
  const [caId, setCaId] = useState<string | null>(null);
  const methodId = useId();
  const userId = useId();
  const caSelectId = useId();
  const enrollments = Object.entries((identity.enrollment ?? {}) as Record<string, Enrollment>);
  const error = refresh.error ?? remove.error ?? create.error;
  return (
    <Panel title="Enrollment">
      {error && <ErrorBox error={error} />}
      {enrollments.map(([m, e]) => (
        <div key={m} className="enrollment">
          <h3>
            {METHOD_LABELS[m] ?? m}
            {e.username ? ` — username ${e.username}` : ''}
            {e.ca?.name ? ` — CA ${e.ca.name}` : ''}
          </h3>
          <ReissueEnrollment enrollmentId={e.id} expiresAt={e.expiresAt} />
          <JwtView jwt={e.jwt} filename={`${identity.name ?? identity.id}.jwt`} expiresAt={e.expiresAt} what="Enrollment token" />
          <div className="button-row">
            {!enrollmentExpired(e.expiresAt) && (
              <button type="button" className="secondary" disabled={refresh.isPending} onClick={() => refresh.mutate({ id: e.id, minutes: 180 })}>
                Refresh (new JWT, valid 3 hours)
              </button>
            )}
            <ConfirmButton
              label="Delete enrollment"
              confirmLabel={`Delete the ${m} enrollment`}
              onConfirm={() => remove.mutate({ resource: 'enrollments', id: e.id })}
            />
          </div>
        </div>
      ))}
      {!enrollments.length && (
        <form
          className="inline-form"
          aria-label="New enrollment"
          onSubmit={(ev) => {
            ev.preventDefault();
            create.mutate({
              identityId: identity.id,
              method,
              minutes: 180,
              ...(method === 'updb' ? { username } : {}),
              ...(method === 'ottca' ? { caId: caId ?? '' } : {}),
            });
          }}
        >
          <p>
            No outstanding enrollment
            {(identity.authenticators as object | undefined) && Object.keys(identity.authenticators as object).length
              ? ' (the identity has enrolled).'
              : '.'}
          </p>
          <div className="field">
            <label htmlFor={methodId}>Method</label>
            <select id={methodId} value={method} onChange={(e) => setMethod(e.target.value as typeof method)}>
              {Object.entries(METHOD_LABELS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </div>
          {method === 'updb' && (
            <div className="field">
              <label htmlFor={userId}>Username</label>
              <input id={userId} value={username} onChange={(e) => setUsername(e.target.value)} />
            </div>
          )}
          {method === 'ottca' && (
            <div className="field">
              <label htmlFor={caSelectId}>CA</label>
              <RefSelect id={caSelectId} label="CA" resource="cas" value={caId} onChange={setCaId} />
            </div>
          )}
          <button type="submit" disabled={create.isPending}>
            Create enrollment
          </button>
        </form>
      )}
    </Panel>
  );
}

const infoOf = (v: unknown) => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
const words = (...parts: unknown[]) => parts.filter((p) => typeof p === 'string' && p).join(' ');

/** The OS an SDK reported at its last login (`envInfo`): "linux 6.1.0 (amd64)". */
export function osOf(envInfo: unknown): string {
  const e = infoOf(envInfo);
  return words(e.os, e.osRelease || e.osVersion, e.arch ? `(${String(e.arch)})` : '');
}

/** The SDK an identity last logged in with (`sdkInfo`): "ziti-sdk-golang v1.2.3". */
export function sdkOf(sdkInfo: unknown): string {
  const s = infoOf(sdkInfo);
  return words(s.type, s.version);
}

function StatusPanel({ identity }: { identity: Entity }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const disable = useMutation(trpc.identities.disable.mutationOptions({ onSuccess: invalidate }));
  const enable = useMutation(trpc.identities.enable.mutationOptions({ onSuccess: invalidate }));
  const resetMfa = useMutation(trpc.identities.resetMfa.mutationOptions({ onSuccess: invalidate }));
  const minutesId = useId();
  const [minutes, setMinutes] = useState(0);
  const error = disable.error ?? enable.error ?? resetMfa.error;
  return (
    <Panel title="Status">
      {error && <ErrorBox error={error} />}
      {identity.disabled ? (
        <div className="button-row">
          <Notice kind="warning">
            {identity.disabledUntil ? `Disabled until ${formatDate(identity.disabledUntil)}.` : 'Disabled until enabled again.'}
          </Notice>
          <button type="button" onClick={() => enable.mutate({ id: identity.id })} disabled={enable.isPending}>
            Enable
          </button>
        </div>
      ) : (
        <form
          className="inline-form"
          aria-label="Disable identity"
          onSubmit={(e) => (e.preventDefault(), disable.mutate({ id: identity.id, durationMinutes: minutes }))}
        >
          <div className="field">
            <label htmlFor={minutesId}>Disable for minutes (0 = until enabled)</label>
            <input id={minutesId} type="number" min={0} value={minutes} onChange={(e) => setMinutes(Math.max(0, Number(e.target.value) || 0))} />
          </div>
          <button type="submit" className="danger" disabled={disable.isPending || !!identity.isDefaultAdmin}>
            Disable
          </button>
          {identity.isDefaultAdmin ? <span className="hint">The default admin cannot be disabled.</span> : null}
        </form>
      )}
      <p>
        {identity.isMfaEnabled ? 'MFA is enabled. ' : 'MFA is not enabled. '}
        {identity.isMfaEnabled ? (
          <ConfirmButton label="Reset MFA" confirmLabel={`Remove MFA of ${identity.name}`} onConfirm={() => resetMfa.mutate({ id: identity.id })} />
        ) : null}
      </p>
    </Panel>
  );
}

export const identitiesSpec: ResourcePageSpec = {
  resource: 'identities',
  path: 'identities',
  title: 'Identities',
  singular: 'identity',
  columns: [
    nameColumn('identities'),
    { field: 'type', label: 'Type', render: (e) => String(e.typeId ?? '') },
    { field: 'roleAttributes', label: 'Role attributes' },
    { field: 'isAdmin', label: 'Admin' },
    {
      field: 'enrollment',
      label: 'Enrollment',
      render: (e) =>
        Object.keys((e.enrollment ?? {}) as object).join(', ') || (Object.keys((e.authenticators ?? {}) as object).length ? 'enrolled' : '—'),
    },
    { field: 'disabled', label: 'Disabled' },
    { field: 'isMfaEnabled', label: 'MFA' },
    {
      field: 'hasApiSession',
      label: 'Online',
      render: (e) => {
        const state = e.hasApiSession ? 'Online' : 'Offline';
        return e.lastSeenAt ? <span title={`Last seen ${formatDate(e.lastSeenAt)}`}>{state}</span> : state;
      },
    },
    { field: 'lastSeenAt', label: 'Last seen' },
    { field: 'envInfo', label: 'OS', render: (e) => osOf(e.envInfo) },
    { field: 'sdkInfo', label: 'SDK', render: (e) => sdkOf(e.sdkInfo) },
    { field: 'createdAt', label: 'Created' },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields,
  createInitial: { type: 'User', isAdmin: false, roleAttributes: [], authPolicyId: 'default', enrollmentMethod: 'ott' },
  toCreateBody: identityBody,
  toEditValues: (e) => ({
    name: e.name,
    type: e.typeId,
    isAdmin: e.isAdmin,
    roleAttributes: e.roleAttributes ?? [],
    authPolicyId: e.authPolicyId,
    externalId: e.externalId ?? undefined,
    tags: e.tags,
  }),
  toEditBody: identityBody,
  properties: [
    { label: 'Auth policy', render: (e) => (e.authPolicy as { name?: string } | null)?.name ?? '' },
    {
      label: 'Online',
      render: (e) => `${e.hasApiSession ? 'Online' : 'Offline'}${e.lastSeenAt ? `, last seen ${formatDate(e.lastSeenAt)}` : ''}`,
    },
    { label: 'OS', render: (e) => osOf(e.envInfo) || '—' },
    { label: 'SDK', render: (e) => sdkOf(e.sdkInfo) || '—' },
  ],
  // shown by name above
  hiddenProperties: ['authPolicyId'],
  panels: (e) => (
    <>
      <EnrollmentPanel identity={e} />
      <StatusPanel identity={e} />
      <Panel title="Authenticators">
        <ResourceTable
          resource="authenticators"
          label="Authenticators"
          compact
          fixedFilter={`identityId = ${zitiString(e.id)}`}
          columns={[
            { field: 'method', label: 'Method' },
            { field: 'username', label: 'Username' },
            { field: 'fingerprint', label: 'Certificate fingerprint' },
            { field: 'createdAt', label: 'Created' },
          ]}
        />
      </Panel>
    </>
  ),
};
