import { DeleteEntityButton } from '../components/DeleteEntityButton';
import { nameColumn, type ResourcePageSpec } from '../components/ResourcePage';
import type { FieldSpec } from '../components/ResourceForm';
import type { Entity } from '../lib/types';
import { Link } from '../router';
import { IdNames } from '../components/RefLink';

const tags: FieldSpec = { kind: 'tags', name: 'tags', label: 'Tags' };
const refName = (field: string) => (e: Entity) => (e[field] as { name?: string } | null)?.name ?? '';

export const authPoliciesSpec: ResourcePageSpec = {
  resource: 'auth-policies',
  path: 'auth-policies',
  title: 'Auth policies',
  singular: 'auth policy',
  description: 'Which primary login methods identities may use, password rules and lockout, and the secondary factors they need.',
  columns: [
    nameColumn('auth-policies'),
    {
      field: 'updb',
      label: 'Password',
      render: (e) => ((e.primary as { updb?: { allowed?: boolean } })?.updb?.allowed ? 'allowed' : 'no'),
    },
    {
      field: 'cert',
      label: 'Certificate',
      render: (e) => ((e.primary as { cert?: { allowed?: boolean } })?.cert?.allowed ? 'allowed' : 'no'),
    },
    {
      field: 'totp',
      label: 'Requires TOTP',
      render: (e) => ((e.secondary as { requireTotp?: boolean })?.requireTotp ? 'Yes' : 'No'),
    },
    { field: 'createdAt', label: 'Created' },
  ],
  fields: [
    { kind: 'text', name: 'name', label: 'Name' },
    { kind: 'checkbox', name: 'primary.updb.allowed', label: 'Allow username/password logins' },
    { kind: 'number', name: 'primary.updb.minPasswordLength', label: 'Minimum password length' },
    { kind: 'checkbox', name: 'primary.updb.requireSpecialChar', label: 'Passwords need a special character' },
    { kind: 'checkbox', name: 'primary.updb.requireNumberChar', label: 'Passwords need a digit' },
    { kind: 'checkbox', name: 'primary.updb.requireMixedCase', label: 'Passwords need mixed case' },
    { kind: 'number', name: 'primary.updb.maxAttempts', label: 'Failed attempts before lockout (0 = never)' },
    { kind: 'number', name: 'primary.updb.lockoutDurationMinutes', label: 'Lockout minutes (0 = until enabled)' },
    { kind: 'checkbox', name: 'primary.cert.allowed', label: 'Allow certificate logins' },
    { kind: 'checkbox', name: 'primary.cert.allowExpiredCerts', label: 'Accept expired client certificates' },
    { kind: 'checkbox', name: 'primary.extJwt.allowed', label: 'Allow external JWT logins' },
    { kind: 'refs', name: 'primary.extJwt.allowedSigners', label: 'Allowed JWT signers (none = any)', resource: 'external-jwt-signers' },
    { kind: 'checkbox', name: 'secondary.requireTotp', label: 'Require TOTP (MFA)' },
    {
      kind: 'ref',
      name: 'secondary.requireExtJwtSigner',
      label: 'Require a JWT of this signer as second factor',
      resource: 'external-jwt-signers',
      nullable: true,
    },
    tags,
  ],
};

export const configTypesSpec: ResourcePageSpec = {
  resource: 'config-types',
  path: 'config-types',
  title: 'Config types',
  singular: 'config type',
  description: 'A config type is a JSON schema; configs of the type are validated against it and their forms are generated from it.',
  columns: [nameColumn('config-types'), { field: 'target', label: 'Target' }, { field: 'createdAt', label: 'Created' }],
  defaultSort: { field: 'name', dir: 'asc' },
  fields: [
    { kind: 'text', name: 'name', label: 'Name' },
    { kind: 'select', name: 'target', label: 'Target' },
    { kind: 'json', name: 'schema', label: 'JSON schema', rows: 14 },
    tags,
  ],
  createInitial: { target: 'service', schema: { type: 'object', properties: {} } },
};

export const configsSpec: ResourcePageSpec = {
  resource: 'configs',
  path: 'configs',
  title: 'Configs',
  singular: 'config',
  columns: [
    nameColumn('configs'),
    { field: 'configTypeId', label: 'Config type', render: refName('configType') },
    { field: 'createdAt', label: 'Created' },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields: [
    { kind: 'text', name: 'name', label: 'Name' },
    // data of another type would be sent without being shown: choosing a type starts its data afresh
    { kind: 'ref', name: 'configTypeId', label: 'Config type', resource: 'config-types', clears: ['data'] },
    { kind: 'schemaData', name: 'data', label: 'Data', typeField: 'configTypeId' },
    tags,
  ],
  toEditValues: (e) => ({ name: e.name, configTypeId: e.configTypeId, data: e.data, tags: e.tags }),
  toEditBody: ({ configTypeId: _t, ...rest }) => rest,
  toCreateBody: (v) => ({ ...v, data: v.data ?? {} }),
  properties: [{ label: 'Config type', render: (e) => <Link to={`/config-types/${e.configTypeId as string}`}>{refName('configType')(e)}</Link> }],
  panels: (e) => (
    <section className="panel" aria-label="Data">
      <h2>Data</h2>
      <pre className="code">{JSON.stringify(e.data, null, 2)}</pre>
    </section>
  ),
};

export const servicesSpec: ResourcePageSpec = {
  resource: 'services',
  path: 'services',
  title: 'Services',
  singular: 'service',
  columns: [
    nameColumn('services'),
    { field: 'roleAttributes', label: 'Role attributes' },
    { field: 'encryptionRequired', label: 'Encryption required' },
    { field: 'terminatorStrategy', label: 'Terminator strategy' },
    { field: 'createdAt', label: 'Created' },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields: [
    { kind: 'text', name: 'name', label: 'Name' },
    // the update schema takes it, but the core refuses a change (read-only after create)
    { kind: 'checkbox', name: 'encryptionRequired', label: 'End-to-end encryption required', createOnly: true },
    { kind: 'attributes', name: 'roleAttributes', label: 'Role attributes', roleKind: 'service' },
    { kind: 'refs', name: 'configs', label: 'Configs (one per config type)', resource: 'configs' },
    { kind: 'text', name: 'terminatorStrategy', label: 'Terminator strategy', placeholder: 'smartrouting' },
    { kind: 'number', name: 'maxIdleTimeMillis', label: 'Max idle time (ms, 0 = none)' },
    tags,
  ],
  createInitial: { encryptionRequired: true, roleAttributes: [], configs: [] },
  toCreateBody: (v) => ({ ...v, encryptionRequired: !!v.encryptionRequired }),
  properties: [{ label: 'Configs', render: (e) => <IdNames resource="configs" ids={(e.configs as string[] | undefined) ?? []} /> }],
  // configs by name above; permissions and postureQueries are what a client's own view says (an admin's read
  // carries placeholders there)
  hiddenProperties: ['configs', 'permissions', 'postureQueries'],
};

export const apiSessionsSpec: ResourcePageSpec = {
  resource: 'api-sessions',
  path: 'api-sessions',
  title: 'API sessions',
  singular: 'API session',
  description: 'Logins to the controller APIs and this console. Ending a session signs its client out.',
  columns: [
    {
      field: 'identity',
      label: 'Identity',
      render: (e) => <Link to={`/identities/${e.identityId as string}`}>{refName('identity')(e)}</Link>,
    },
    { field: 'ipAddress', label: 'IP address' },
    { field: 'isMfaRequired', label: 'MFA', render: (e) => (e.isMfaRequired ? (e.isMfaComplete ? 'passed' : 'pending') : '—') },
    { field: 'createdAt', label: 'Started' },
    { field: 'lastActivityAt', label: 'Last activity' },
  ],
  defaultSort: { field: 'createdAt', dir: 'desc' },
  rowActions: (e) => (
    <DeleteEntityButton
      resource="api-sessions"
      id={e.id}
      label="End"
      confirmLabel={`End the API session of ${(e.identity as { name?: string } | null)?.name ?? e.identityId}`}
    />
  ),
};
