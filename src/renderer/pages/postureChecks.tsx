import { nameColumn, type ResourcePageSpec } from '../components/ResourcePage';
import type { FieldSpec, Values } from '../components/ResourceForm';
import type { Entity } from '../lib/types';

type PostureType = 'OS' | 'PROCESS' | 'PROCESS_MULTI' | 'DOMAIN' | 'MAC' | 'MFA';
const TYPE_LABELS: Record<PostureType, string> = {
  OS: 'OS — operating system and version',
  PROCESS: 'PROCESS — one process running',
  PROCESS_MULTI: 'PROCESS_MULTI — several processes running',
  DOMAIN: 'DOMAIN — Windows domain',
  MAC: 'MAC — network adapter address',
  MFA: 'MFA — multi-factor authentication',
};
/** The type-specific fields of each type (the body carries only those of the check's type). */
const DETAIL_KEYS: Record<PostureType, string[]> = {
  OS: ['operatingSystems'],
  PROCESS: ['process'],
  PROCESS_MULTI: ['semantic', 'processes'],
  DOMAIN: ['domains'],
  MAC: ['macAddresses'],
  MFA: ['timeoutSeconds', 'promptOnWake', 'promptOnUnlock', 'ignoreLegacyEndpoints'],
};
const OS_TYPES = ['Windows', 'WindowsServer', 'Android', 'iOS', 'Linux', 'macOS'];
const osType = (name: string): FieldSpec => ({
  kind: 'select',
  name,
  label: 'Operating system',
  required: true,
  options: OS_TYPES.map((t) => ({ value: t, label: t })),
});
const isType = (type: PostureType) => (v: Values) => v.typeId === type;

const fields: FieldSpec[] = [
  { kind: 'text', name: 'name', label: 'Name' },
  // the update schema takes it, but the core refuses a change of type
  {
    kind: 'select',
    name: 'typeId',
    label: 'Type',
    createOnly: true,
    options: Object.entries(TYPE_LABELS).map(([value, label]) => ({ value, label })),
  },
  {
    kind: 'attributes',
    name: 'roleAttributes',
    label: 'Role attributes',
    roleKind: 'posture-check',
    help: 'Service policies select posture checks by these.',
  },
  // The body schema leaves the type-specific fields below undeclared (the core checks them per type), so what they
  // require, their options and bounds are stated here.
  // OS
  {
    kind: 'repeat',
    name: 'operatingSystems',
    label: 'Operating systems',
    itemLabel: 'Operating system',
    when: isType('OS'),
    help: 'The device must run one of these.',
    fields: [
      osType('type'),
      { kind: 'list', name: 'versions', label: 'Versions (semver ranges; none = any)', placeholder: '>=10.0.19041, then Enter' },
    ],
  },
  // PROCESS
  { ...osType('process.osType'), when: isType('PROCESS') },
  { kind: 'text', name: 'process.path', label: 'Path', required: true, placeholder: '/usr/bin/agent', when: isType('PROCESS') },
  { kind: 'list', name: 'process.hashes', label: 'SHA-512 hashes of the binary (none = any)', when: isType('PROCESS') },
  { kind: 'text', name: 'process.signerFingerprint', label: 'Signer certificate fingerprint', when: isType('PROCESS') },
  // PROCESS_MULTI
  {
    kind: 'radio',
    name: 'semantic',
    label: 'Processes semantic',
    required: true,
    when: isType('PROCESS_MULTI'),
    options: [
      { value: 'AllOf', label: 'AllOf — every process must run' },
      { value: 'AnyOf', label: 'AnyOf — one is enough' },
    ],
  },
  {
    kind: 'repeat',
    name: 'processes',
    label: 'Processes',
    itemLabel: 'Process',
    when: isType('PROCESS_MULTI'),
    fields: [
      osType('osType'),
      { kind: 'text', name: 'path', label: 'Path', required: true },
      { kind: 'list', name: 'hashes', label: 'SHA-512 hashes (none = any)' },
      { kind: 'list', name: 'signerFingerprints', label: 'Signer fingerprints (none = any)' },
    ],
  },
  // DOMAIN, MAC
  { kind: 'list', name: 'domains', label: 'Windows domains', placeholder: 'corp.example.com, then Enter', when: isType('DOMAIN') },
  { kind: 'list', name: 'macAddresses', label: 'MAC addresses', placeholder: '00:11:22:33:44:55, then Enter', when: isType('MAC') },
  // MFA
  { kind: 'number', name: 'timeoutSeconds', label: 'MFA timeout in seconds (-1 = never)', min: -1, when: isType('MFA') },
  { kind: 'checkbox', name: 'promptOnWake', label: 'Prompt for MFA when the device wakes', when: isType('MFA') },
  { kind: 'checkbox', name: 'promptOnUnlock', label: 'Prompt for MFA when the device is unlocked', when: isType('MFA') },
  { kind: 'checkbox', name: 'ignoreLegacyEndpoints', label: 'Ignore legacy endpoints (clients that cannot prompt)', when: isType('MFA') },
  { kind: 'tags', name: 'tags', label: 'Tags' },
];

/** Empty lists and objects are sent as such, so the server's error names the missing part ("must contain…", "process.path"). */
const EMPTY: Record<string, unknown> = { operatingSystems: [], processes: [], domains: [], macAddresses: [], process: {} };
const detailsOf = (type: PostureType, v: Values) => Object.fromEntries((DETAIL_KEYS[type] ?? []).map((k) => [k, v[k] ?? EMPTY[k]]));

function createBody(v: Values) {
  const type = v.typeId as PostureType;
  return { name: v.name, typeId: type, roleAttributes: v.roleAttributes ?? [], tags: v.tags ?? {}, ...detailsOf(type, v) };
}

function editBody(v: Values) {
  const { typeId: _t, ...body } = createBody(v);
  return body;
}

function describe(e: Entity): string {
  switch (e.typeId as PostureType) {
    case 'OS':
      return ((e.operatingSystems ?? []) as Array<{ type: string; versions?: string[] }>)
        .map((o) => `${o.type}${o.versions?.length ? ` ${o.versions.join(' ')}` : ''}`)
        .join(', ');
    case 'PROCESS':
      return String((e.process as { path?: string } | undefined)?.path ?? '');
    case 'PROCESS_MULTI':
      return `${String(e.semantic)}: ${((e.processes ?? []) as Array<{ path: string }>).map((p) => p.path).join(', ')}`;
    case 'DOMAIN':
      return ((e.domains ?? []) as string[]).join(', ');
    case 'MAC':
      return ((e.macAddresses ?? []) as string[]).join(', ');
    case 'MFA':
      return `timeout ${Number(e.timeoutSeconds) < 0 ? 'none' : `${String(e.timeoutSeconds)}s`}${e.promptOnWake ? ', on wake' : ''}${e.promptOnUnlock ? ', on unlock' : ''}`;
    default:
      return '';
  }
}

export const postureChecksSpec: ResourcePageSpec = {
  resource: 'posture-checks',
  path: 'posture-checks',
  title: 'Posture checks',
  singular: 'posture check',
  description: 'Conditions on the client device (OS, processes, domain, MAC addresses, MFA) that service policies can require.',
  columns: [
    nameColumn('posture-checks'),
    { field: 'typeId', label: 'Type' },
    { field: 'details', label: 'Requires', render: describe },
    { field: 'roleAttributes', label: 'Role attributes' },
    { field: 'version', label: 'Version' },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields,
  createInitial: {
    typeId: 'MFA',
    roleAttributes: [],
    timeoutSeconds: -1,
    promptOnWake: false,
    promptOnUnlock: false,
    ignoreLegacyEndpoints: false,
    semantic: 'AllOf',
  },
  toCreateBody: createBody,
  toEditValues: (e) => ({
    name: e.name,
    typeId: e.typeId,
    roleAttributes: e.roleAttributes ?? [],
    tags: e.tags,
    ...detailsOf(e.typeId as PostureType, e),
  }),
  toEditBody: editBody,
  properties: [{ label: 'Requires', render: describe }],
  hiddenProperties: ['operatingSystems', 'processes', 'domains', 'macAddresses'],
};
