import { nameColumn, type ResourcePageSpec } from '../components/ResourcePage';
import type { FieldSpec, Values } from '../components/ResourceForm';
import type { Entity, ResourceName, RoleKind } from '../lib/types';

const tags: FieldSpec = { kind: 'tags', name: 'tags', label: 'Tags' };
const semantic: FieldSpec = {
  kind: 'select',
  name: 'semantic',
  label: 'Attribute semantic',
  options: [
    { value: 'AllOf', label: 'AllOf — an entity must have every #attribute' },
    { value: 'AnyOf', label: 'AnyOf — any one #attribute is enough' },
  ],
};
const rolesHelp = 'Pick an entity by name (@name), a #attribute, or #all for everything.';

/** A side's roles as the core shows them (`<side>Display`: `@id` as `@name`), e.g. "#staff, @laptop-1". */
export function roleNames(e: Entity, side: string): string {
  const shown = e[`${side}Display`] as Array<{ role: string; name: string }> | undefined;
  const roles = (shown ?? []).map((d) => d.name);
  return roles.length ? roles.join(', ') : '';
}
const withRoles =
  (...sides: string[]) =>
  (v: Values) => ({ ...v, ...Object.fromEntries(sides.map((s) => [s, v[s] ?? []])) });

interface RoleSide {
  name: string;
  label: string;
  roleKind: RoleKind;
}

/** The page of one policy kind: name, semantic and its role sides (each with a live match preview), plus extras. */
function policySpec(p: {
  resource: ResourceName;
  title: string;
  singular: string;
  description: string;
  sides: RoleSide[];
  extraColumns?: ResourcePageSpec['columns'];
  extraFields?: FieldSpec[];
  extraInitial?: Values;
}): ResourcePageSpec {
  return {
    resource: p.resource,
    path: p.resource,
    title: p.title,
    singular: p.singular,
    description: p.description,
    columns: [
      nameColumn(p.resource),
      ...(p.extraColumns ?? []),
      { field: 'semantic', label: 'Semantic' },
      ...p.sides.map((side) => ({ field: side.name, label: side.label, render: (e: Entity) => roleNames(e, side.name) })),
    ],
    // each side by name (the raw `@id` roles and their `*Display` pairs are not shown as such)
    properties: p.sides.map((side) => ({ label: side.label, render: (e: Entity) => roleNames(e, side.name) || '—' })),
    hiddenProperties: p.sides.flatMap((side) => [side.name, `${side.name}Display`]),
    defaultSort: { field: 'name', dir: 'asc' },
    fields: [
      { kind: 'text', name: 'name', label: 'Name' },
      ...(p.extraFields ?? []),
      semantic,
      ...p.sides.map((side): FieldSpec => ({ kind: 'roles', name: side.name, label: side.label, roleKind: side.roleKind, help: rolesHelp })),
      tags,
    ],
    createInitial: { ...p.extraInitial, semantic: 'AnyOf', ...Object.fromEntries(p.sides.map((side) => [side.name, []])) },
    toCreateBody: withRoles(...p.sides.map((side) => side.name)),
  };
}

const identitySide: RoleSide = { name: 'identityRoles', label: 'Identity roles', roleKind: 'identity' };
const serviceSide: RoleSide = { name: 'serviceRoles', label: 'Service roles', roleKind: 'service' };
const edgeRouterSide: RoleSide = { name: 'edgeRouterRoles', label: 'Edge router roles', roleKind: 'edge-router' };

export const servicePoliciesSpec = policySpec({
  resource: 'service-policies',
  title: 'Service policies',
  singular: 'service policy',
  description: 'Which identities may dial (use) or bind (host) which services, subject to which posture checks.',
  sides: [identitySide, serviceSide, { name: 'postureCheckRoles', label: 'Posture check roles', roleKind: 'posture-check' }],
  extraColumns: [{ field: 'type', label: 'Type' }],
  extraFields: [{ kind: 'select', name: 'type', label: 'Type' }],
  extraInitial: { type: 'Dial' },
});

export const edgeRouterPoliciesSpec = policySpec({
  resource: 'edge-router-policies',
  title: 'Edge router policies',
  singular: 'edge router policy',
  description: 'Which identities may connect to which edge routers.',
  sides: [identitySide, edgeRouterSide],
});

export const serviceEdgeRouterPoliciesSpec = policySpec({
  resource: 'service-edge-router-policies',
  title: 'Service edge router policies',
  singular: 'service edge router policy',
  description: 'Which services may be reached through which edge routers.',
  sides: [serviceSide, edgeRouterSide],
});
