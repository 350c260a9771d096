import { nameColumn, type ResourcePageSpec } from '../components/ResourcePage';
import type { FieldSpec, Values } from '../components/ResourceForm';

const tags: FieldSpec = { kind: 'tags', name: 'tags', label: 'Tags' };
const semantic: FieldSpec = {
  kind: 'select', name: 'semantic', label: 'Attribute semantic', required: true,
  options: [{ value: 'AllOf', label: 'AllOf — an entity must have every #attribute' }, { value: 'AnyOf', label: 'AnyOf — any one #attribute is enough' }],
};
const rolesHelp = '#attribute selects by role attribute, @id one entity, #all everything.';
const withRoles = (...sides: string[]) => (v: Values) => ({ ...v, ...Object.fromEntries(sides.map((s) => [s, v[s] ?? []])) });

export const servicePoliciesSpec: ResourcePageSpec = {
  resource: 'service-policies',
  path: 'service-policies',
  title: 'Service policies',
  singular: 'service policy',
  description: 'Which identities may dial (use) or bind (host) which services, subject to which posture checks.',
  columns: [
    nameColumn('service-policies'),
    { field: 'type', label: 'Type' },
    { field: 'semantic', label: 'Semantic' },
    { field: 'identityRoles', label: 'Identity roles', sortable: false },
    { field: 'serviceRoles', label: 'Service roles', sortable: false },
    { field: 'postureCheckRoles', label: 'Posture check roles', sortable: false },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields: [
    { kind: 'text', name: 'name', label: 'Name', required: true },
    { kind: 'select', name: 'type', label: 'Type', required: true, options: [{ value: 'Dial', label: 'Dial' }, { value: 'Bind', label: 'Bind' }] },
    semantic,
    { kind: 'roles', name: 'identityRoles', label: 'Identity roles', roleKind: 'identity', help: rolesHelp },
    { kind: 'roles', name: 'serviceRoles', label: 'Service roles', roleKind: 'service', help: rolesHelp },
    { kind: 'roles', name: 'postureCheckRoles', label: 'Posture check roles', roleKind: 'posture-check', help: rolesHelp },
    tags,
  ],
  createInitial: { type: 'Dial', semantic: 'AnyOf', identityRoles: [], serviceRoles: [], postureCheckRoles: [] },
  toCreateBody: withRoles('identityRoles', 'serviceRoles', 'postureCheckRoles'),
};

export const edgeRouterPoliciesSpec: ResourcePageSpec = {
  resource: 'edge-router-policies',
  path: 'edge-router-policies',
  title: 'Edge router policies',
  singular: 'edge router policy',
  description: 'Which identities may connect to which edge routers.',
  columns: [
    nameColumn('edge-router-policies'),
    { field: 'semantic', label: 'Semantic' },
    { field: 'identityRoles', label: 'Identity roles', sortable: false },
    { field: 'edgeRouterRoles', label: 'Edge router roles', sortable: false },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields: [
    { kind: 'text', name: 'name', label: 'Name', required: true },
    semantic,
    { kind: 'roles', name: 'identityRoles', label: 'Identity roles', roleKind: 'identity', help: rolesHelp },
    { kind: 'roles', name: 'edgeRouterRoles', label: 'Edge router roles', roleKind: 'edge-router', help: rolesHelp },
    tags,
  ],
  createInitial: { semantic: 'AnyOf', identityRoles: [], edgeRouterRoles: [] },
  toCreateBody: withRoles('identityRoles', 'edgeRouterRoles'),
};

export const serviceEdgeRouterPoliciesSpec: ResourcePageSpec = {
  resource: 'service-edge-router-policies',
  path: 'service-edge-router-policies',
  title: 'Service edge router policies',
  singular: 'service edge router policy',
  description: 'Which services may be reached through which edge routers.',
  columns: [
    nameColumn('service-edge-router-policies'),
    { field: 'semantic', label: 'Semantic' },
    { field: 'serviceRoles', label: 'Service roles', sortable: false },
    { field: 'edgeRouterRoles', label: 'Edge router roles', sortable: false },
  ],
  defaultSort: { field: 'name', dir: 'asc' },
  fields: [
    { kind: 'text', name: 'name', label: 'Name', required: true },
    semantic,
    { kind: 'roles', name: 'serviceRoles', label: 'Service roles', roleKind: 'service', help: rolesHelp },
    { kind: 'roles', name: 'edgeRouterRoles', label: 'Edge router roles', roleKind: 'edge-router', help: rolesHelp },
    tags,
  ],
  createInitial: { semantic: 'AnyOf', serviceRoles: [], edgeRouterRoles: [] },
  toCreateBody: withRoles('serviceRoles', 'edgeRouterRoles'),
};
