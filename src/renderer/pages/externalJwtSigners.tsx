import type { ReactNode } from 'react';
import { nameColumn, type ResourcePageSpec } from '../components/ResourcePage';
import type { FieldSpec, Values } from '../components/ResourceForm';
import { Panel } from '../components/Status';
import { formatDate } from '../lib/format';
import type { Entity } from '../lib/types';

type KeySource = 'jwks' | 'cert';
const usesJwks = (v: Values) => v.keySource === 'jwks';
const usesCert = (v: Values) => v.keySource === 'cert';
const enrolls = (v: Values) => !!v.enrollToCertEnabled || !!v.enrollToTokenEnabled;

const fields: FieldSpec[] = [
  { kind: 'text', name: 'name', label: 'Name' },
  { kind: 'checkbox', name: 'enabled', label: 'Enabled (its JWTs are accepted)' },
  { kind: 'text', name: 'issuer', label: 'Issuer (iss)', placeholder: 'https://idp.example.com' },
  { kind: 'text', name: 'audience', label: 'Audience (aud)' },
  // the console's choice between the two key sources (not a body field); the schema has both optional, the core
  // requires exactly one: the page requires the chosen one
  {
    kind: 'radio',
    name: 'keySource',
    label: 'Signing keys',
    required: true,
    help: 'A signer verifies JWTs with exactly one of these: keys fetched from a JWKS URL, or one fixed certificate.',
    options: [
      { value: 'jwks', label: 'JWKS endpoint (keys fetched from a URL)' },
      { value: 'cert', label: 'Certificate (one PEM)' },
    ],
  },
  // optional in the schema (one of the two is): required here once chosen
  {
    kind: 'text',
    name: 'jwksEndpoint',
    label: 'JWKS endpoint URL',
    required: true,
    placeholder: 'https://idp.example.com/.well-known/jwks.json',
    when: usesJwks,
  },
  { kind: 'pem', name: 'certPem', label: 'Signing certificate (PEM)', required: true, when: usesCert },
  { kind: 'text', name: 'kid', label: 'Key ID (kid)', help: 'Optional: the kid JWTs carry.', when: usesCert },
  { kind: 'text', name: 'claimsProperty', label: 'Claim naming the identity', placeholder: 'sub' },
  { kind: 'checkbox', name: 'useExternalId', label: "Match the claim against identities' external ID (otherwise their ID)" },
  {
    kind: 'radio',
    name: 'targetToken',
    label: 'Token to use',
    options: [
      { value: 'ACCESS', label: 'Access token' },
      { value: 'ID', label: 'ID token' },
    ],
  },
  { kind: 'text', name: 'clientId', label: 'OAuth client ID' },
  { kind: 'list', name: 'scopes', label: 'Scopes', placeholder: 'openid, then Enter' },
  { kind: 'text', name: 'externalAuthUrl', label: 'External authentication URL', placeholder: 'https://idp.example.com/authorize' },
  { kind: 'checkbox', name: 'enrollToCertEnabled', label: 'Enroll to a certificate with a JWT of this signer' },
  { kind: 'checkbox', name: 'enrollToTokenEnabled', label: 'Enroll to token authentication with a JWT of this signer' },
  { kind: 'text', name: 'enrollNameClaimsSelector', label: 'Claim for the new identity’s name', placeholder: '/name', when: enrolls },
  {
    kind: 'text',
    name: 'enrollAttributeClaimsSelector',
    label: 'Claim for the new identity’s role attributes',
    placeholder: '/groups',
    when: enrolls,
  },
  { kind: 'ref', name: 'enrollAuthPolicyId', label: 'Auth policy of enrolled identities', resource: 'auth-policies', nullable: true, when: enrolls },
  { kind: 'tags', name: 'tags', label: 'Tags' },
];

const REQUIRED = ['name', 'issuer', 'audience'];
const OPTIONAL = [
  'claimsProperty',
  'useExternalId',
  'targetToken',
  'clientId',
  'scopes',
  'externalAuthUrl',
  'enrollToCertEnabled',
  'enrollToTokenEnabled',
  'enrollNameClaimsSelector',
  'enrollAttributeClaimsSelector',
  'enrollAuthPolicyId',
];

/**
 * The body (create and PATCH alike). Emptied optional fields are sent as null, which the server turns into their
 * defaults; emptied required ones as '' so the server names them. The unused key source is null (a signer
 * switching from certificate to JWKS drops the certificate).
 */
function signerBody(v: Values) {
  const jwks = v.keySource === 'jwks';
  return {
    ...Object.fromEntries(REQUIRED.map((k) => [k, v[k] ?? ''])),
    ...Object.fromEntries(OPTIONAL.map((k) => [k, v[k] ?? null])),
    enabled: !!v.enabled,
    jwksEndpoint: jwks ? (v.jwksEndpoint ?? '') : null,
    certPem: jwks ? null : (v.certPem ?? ''),
    kid: jwks ? null : (v.kid ?? null),
    tags: v.tags ?? {},
  };
}

const keySourceOf = (e: Entity): KeySource => (e.certPem ? 'cert' : 'jwks');

function CertificatePanel({ signer }: { signer: Entity }) {
  const rows: Array<[string, ReactNode]> = [
    ['Fingerprint', <code key="f">{String(signer.fingerprint ?? '')}</code>],
    ['Common name', String(signer.commonName ?? '')],
    ['Valid from', formatDate(signer.notBefore)],
    ['Valid until', formatDate(signer.notAfter)],
  ];
  return (
    <Panel title="Certificate">
      <dl className="properties">
        {rows.map(([label, value]) => (
          <div key={label} className="property">
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <pre className="code">{String(signer.certPem)}</pre>
    </Panel>
  );
}

export const externalJwtSignersSpec: ResourcePageSpec = {
  resource: 'external-jwt-signers',
  path: 'external-jwt-signers',
  title: 'External JWT signers',
  singular: 'external JWT signer',
  description: 'Identity providers whose JWTs authenticate identities (and can enroll new ones). Auth policies choose which signers they allow.',
  columns: [
    nameColumn('external-jwt-signers'),
    { field: 'issuer', label: 'Issuer' },
    { field: 'audience', label: 'Audience' },
    { field: 'enabled', label: 'Enabled' },
    {
      field: 'keySource',
      label: 'Keys',
      render: (e) => (keySourceOf(e) === 'cert' ? `certificate ${String(e.commonName ?? '')}` : 'JWKS'),
    },
    { field: 'targetToken', label: 'Token' },
    { field: 'createdAt', label: 'Created' },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields,
  createInitial: { enabled: true, keySource: 'jwks', claimsProperty: 'sub', targetToken: 'ACCESS', scopes: [], useExternalId: false },
  toCreateBody: signerBody,
  toEditValues: (e) => ({
    ...Object.fromEntries(fields.filter((f) => f.name !== 'keySource').map((f) => [f.name, e[f.name] ?? undefined])),
    keySource: keySourceOf(e),
  }),
  toEditBody: signerBody,
  hiddenProperties: ['fingerprint', 'commonName', 'notBefore', 'notAfter'],
  properties: [{ label: 'Signing keys', render: (e) => (keySourceOf(e) === 'cert' ? 'Certificate' : `JWKS: ${String(e.jwksEndpoint)}`) }],
  panels: (e) => (keySourceOf(e) === 'cert' ? <CertificatePanel signer={e} /> : null),
};
