import { useMutation, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { JwtView } from '../components/JwtPanel';
import { nameColumn, useInvalidateAll, type ResourcePageSpec } from '../components/ResourcePage';
import type { FieldSpec } from '../components/ResourceForm';
import { ErrorBox, Notice, Panel, Spinner } from '../components/Status';
import { readText } from '../lib/files';
import type { Entity } from '../lib/types';
import { useTRPC } from '../trpc';

const tags: FieldSpec = { kind: 'tags', name: 'tags', label: 'Tags' };

function CaVerification({ ca }: { ca: Entity }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const pemId = useId();
  const [pem, setPem] = useState('');
  const verify = useMutation(trpc.enrollment.verifyCa.mutationOptions({ onSuccess: invalidate }));
  if (ca.isVerified) return <Notice kind="success">This CA is verified.</Notice>;
  return (
    <div>
      <p>To prove you hold the CA's key, sign a certificate whose common name is the verification token below with this CA, then paste it here.</p>
      <p>
        Verification token: <code className="token">{String(ca.verificationToken)}</code>
      </p>
      <p className="hint">
        For example:{' '}
        <code>{`openssl req -new -key ca.key -subj "/CN=${String(ca.verificationToken)}" | openssl x509 -req -CA ca.pem -CAkey ca.key -out verify.pem`}</code>
      </p>
      <form className="inline-form" aria-label="Verify CA" onSubmit={(e) => (e.preventDefault(), verify.mutate({ id: ca.id, certPem: pem }))}>
        {verify.error && <ErrorBox error={verify.error} title="Not verified:" />}
        <div className="field">
          <label htmlFor={`${pemId}-file`}>Verification certificate file (PEM)</label>
          <input
            id={`${pemId}-file`}
            type="file"
            accept=".pem,.crt,.cer,application/x-pem-file,text/plain"
            onChange={async (e) => {
              const f = e.target.files?.[0];
              if (f) setPem(await readText(f));
            }}
          />
        </div>
        <div className="field">
          <label htmlFor={pemId}>Or paste the signed verification certificate (PEM)</label>
          <textarea
            id={pemId}
            className="code"
            rows={8}
            value={pem}
            onChange={(e) => setPem(e.target.value)}
            spellCheck={false}
            placeholder="-----BEGIN CERTIFICATE-----"
          />
        </div>
        <button type="submit" disabled={verify.isPending || !pem.trim()}>
          Verify CA
        </button>
      </form>
    </div>
  );
}

function CaJwt({ ca }: { ca: Entity }) {
  const trpc = useTRPC();
  const jwt = useQuery(trpc.enrollment.caJwt.queryOptions({ id: ca.id }));
  if (jwt.isPending) return <Spinner />;
  if (jwt.error) return <ErrorBox error={jwt.error} retry={() => jwt.refetch()} />;
  return <JwtView jwt={jwt.data.jwt} filename={`${ca.name ?? ca.id}.jwt`} what="CA enrollment token" />;
}

export const casSpec: ResourcePageSpec = {
  resource: 'cas',
  path: 'cas',
  title: 'Certificate authorities',
  singular: 'CA',
  description: 'Third-party CAs whose certificates can enroll identities (auto or with a one-time token) and authenticate them.',
  columns: [
    nameColumn('cas'),
    { field: 'isVerified', label: 'Verified' },
    { field: 'isAutoCaEnrollmentEnabled', label: 'Auto enrollment' },
    { field: 'isOttCaEnrollmentEnabled', label: 'OTT enrollment' },
    { field: 'isAuthEnabled', label: 'Authentication' },
    { field: 'createdAt', label: 'Created' },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields: [
    { kind: 'text', name: 'name', label: 'Name' },
    { kind: 'pem', name: 'certPem', label: 'CA certificate (PEM)' },
    { kind: 'checkbox', name: 'isAutoCaEnrollmentEnabled', label: 'Auto enrollment: certificates of this CA create identities' },
    { kind: 'checkbox', name: 'isOttCaEnrollmentEnabled', label: 'One-time-token enrollment with certificates of this CA' },
    { kind: 'checkbox', name: 'isAuthEnabled', label: 'Certificates of this CA may authenticate' },
    { kind: 'attributes', name: 'identityRoles', label: 'Role attributes of identities it enrolls', roleKind: 'identity' },
    { kind: 'text', name: 'identityNameFormat', label: 'Identity name format', placeholder: '[caName]-[commonName]' },
    tags,
  ],
  createInitial: { isAutoCaEnrollmentEnabled: true, isOttCaEnrollmentEnabled: true, isAuthEnabled: true, identityRoles: [] },
  toCreateBody: (v) => ({
    ...v,
    isAutoCaEnrollmentEnabled: !!v.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: !!v.isOttCaEnrollmentEnabled,
    isAuthEnabled: !!v.isAuthEnabled,
    identityRoles: v.identityRoles ?? [],
  }),
  properties: [{ label: 'Fingerprint', render: (e) => <code>{String(e.fingerprint ?? '')}</code> }],
  hiddenProperties: ['fingerprint'],
  panels: (e) => (
    <>
      <Panel title="Verification">
        <CaVerification ca={e} />
      </Panel>
      <Panel title="Enrollment JWT">
        <CaJwt ca={e} />
      </Panel>
    </>
  ),
};

function RouterEnrollment({ router, kind }: { router: Entity; kind: 'edge' | 'transit' }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateAll();
  const reEnroll = useMutation(trpc.enrollment.reEnrollRouter.mutationOptions({ onSuccess: invalidate }));
  return (
    <Panel title="Enrollment">
      {reEnroll.error && <ErrorBox error={reEnroll.error} />}
      {typeof router.enrollmentJwt === 'string' && router.enrollmentJwt ? (
        <JwtView
          jwt={router.enrollmentJwt}
          filename={`${router.name ?? router.id}.jwt`}
          expiresAt={router.enrollmentExpiresAt}
          what="Router enrollment token"
        />
      ) : (
        <p>{router.isVerified ? 'The router has enrolled.' : 'No outstanding enrollment.'}</p>
      )}
      <button type="button" className="secondary" disabled={reEnroll.isPending} onClick={() => reEnroll.mutate({ id: router.id, kind })}>
        Re-enroll (the current certificate stops working)
      </button>
    </Panel>
  );
}

const routerFields: FieldSpec[] = [
  { kind: 'text', name: 'name', label: 'Name' },
  { kind: 'number', name: 'cost', label: 'Cost (0–65535)' },
  { kind: 'checkbox', name: 'noTraversal', label: 'No traversal (never route through it)' },
  { kind: 'checkbox', name: 'disabled', label: 'Disabled' },
];

export const edgeRoutersSpec: ResourcePageSpec = {
  resource: 'edge-routers',
  path: 'edge-routers',
  title: 'Edge routers',
  singular: 'edge router',
  columns: [
    nameColumn('edge-routers'),
    { field: 'roleAttributes', label: 'Role attributes' },
    { field: 'isOnline', label: 'Online' },
    { field: 'isVerified', label: 'Enrolled' },
    { field: 'isTunnelerEnabled', label: 'Tunneler' },
    { field: 'cost', label: 'Cost' },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields: [
    ...routerFields.slice(0, 1),
    { kind: 'attributes', name: 'roleAttributes', label: 'Role attributes', roleKind: 'edge-router' },
    { kind: 'checkbox', name: 'isTunnelerEnabled', label: 'Tunneler enabled' },
    ...routerFields.slice(1),
    tags,
  ],
  createInitial: { roleAttributes: [], isTunnelerEnabled: false, noTraversal: false, disabled: false, cost: 0 },
  panels: (e) => <RouterEnrollment router={e} kind="edge" />,
};

export const routersSpec: ResourcePageSpec = {
  resource: 'routers',
  path: 'routers',
  title: 'Routers',
  singular: 'router',
  description: 'Transit (fabric) routers.',
  columns: [
    nameColumn('routers'),
    { field: 'isOnline', label: 'Online' },
    { field: 'isVerified', label: 'Enrolled' },
    { field: 'cost', label: 'Cost' },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields: [...routerFields, tags],
  createInitial: { noTraversal: false, disabled: false, cost: 0 },
  panels: (e) => <RouterEnrollment router={e} kind="transit" />,
};
