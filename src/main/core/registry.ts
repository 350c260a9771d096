import { requireAdminRead, requirePermission } from './permissions';
import { apiSessions } from './auth/apiSessions';
import type { Ctx } from './context';
import { authPolicies, DEFAULT_PRIMARY, DEFAULT_SECONDARY } from './entities/authPolicies';
import { authenticators } from './auth/authenticators';
import { cas } from './entities/cas';
import { configTypes } from './entities/configTypes';
import { configs } from './entities/configs';
import { camelCase } from './entities/define';
import { controllerSettings } from './entities/controllerSettings';
import { controllers } from './entities/controllers';
import { edgeRouterPolicies } from './policy/edgeRouterPolicies';
import { edgeRouters } from './policy/edgeRouters';
import { enrollments } from './enrollment/records';
import { externalJwtSigners } from './auth/externalJwtSigners';
import { identities } from './policy/identities';
import { identityTypes } from './entities/identityTypes';
import { listRelated, listRoleAttributes } from './entities/listings';
import { postureCheckTypes, postureChecks } from './policy/postureChecks';
import { policyTests } from './policy/policyTests';
import { setupKeys } from './enrollment/setupKeys';
import { listResource, type AssociationQuery, type ResourceDef } from './entities/resource';
import { revocations } from './auth/revocations';
import { routers } from './entities/routers';
import { serviceEdgeRouterPolicies } from './policy/serviceEdgeRouterPolicies';
import { servicePolicies } from './policy/servicePolicies';
import { services } from './policy/services';
import { sessions } from './policy/sessions';
import { describeRoleNameProblems, lookupRoleNames } from './policy/roleNames';
import { terminators } from './entities/terminators';
import { notFound } from './errors';
import { auditLog } from './ops/audit';
import { ROLE_KIND_NAMES, type RoleKind } from './kinds';
import { parseRoles, parseSemantic, roleMatchSql } from './query/roles';
import type { ListParams } from './query/list';
import { migrations, type Migration } from './store/migrations/index';

// The registry is the adapters' one way into the entity layer (core/entities, core/query, core/store): the generic
// resource operations, the types' own operations beyond them, the row and list types, and the schemas' JSON form.
export {
  apiSessionCertificates,
  createSessionCertificate,
  deleteSessionCertificate,
  getSessionCertificate,
  listSessionCertificates,
} from './enrollment/apiSessionCertificates';
export { bulkIdentityState } from './auth/lifecycle';
export { BULK_LIMIT, bulkDelete, bulkRoleAttributes } from './entities/bulk';
export { controllerSettings, effectiveSettings } from './entities/controllerSettings';
export { controllers } from './entities/controllers';
export { edgeRouters } from './policy/edgeRouters';
export { listPublicExternalJwtSigners } from './auth/externalJwtSigners';
export { listOpen } from './entities/listings';
export { EXPORT_MAX_ROWS, exportList, type ExportFormat, type ListExport } from './entities/listExport';
export { filterFields, resourceOps, type ApiObject, type ResourceDef } from './entities/resource';
export type { ListParams } from './query/list';
export type { Row, Store } from './store/db';
export { bodyJsonSchema, patchFields, type JsonSchemaObject } from './validation';

export type ResourceOp = 'list' | 'get' | 'create' | 'update' | 'patch' | 'delete';
export type ConsoleWriteOp = 'create' | 'update' | 'patch' | 'delete';

/**
 * What Weft knows about a resource type beyond its declaration (`def`): which generic REST routes serve it, whether
 * `/summary` counts it, what the console offers. Its role kind, associations and links are the declaration's. Every
 * adapter iterates this registry: the REST routes (api/routes), the console's resource router, `/summary`, the role
 * listings and previews, the integrity check of the role attribute index.
 */
export interface RegistryEntry {
  def: ResourceDef;
  /** further URL segments serving the same type (e.g. /transit-routers for /routers) */
  aliases?: string[];
  /**
   * The generic REST routes: Management API operations (default: those the declaration supports, plus list, get
   * and delete; false: none, the type's routes are written by hand) and Client API ones (default none).
   * `cacheable`: list and get replies may be reused (api/replyCache.ts): the declaration presents only what the
   * database holds.
   */
  rest?: { management?: ResourceOp[] | false; client?: ResourceOp[]; cacheable?: boolean };
  /** counted by /summary, under the entity in camelCase */
  summary?: boolean;
  /**
   * The console's generic pages: the writes offered (default: those the declaration supports, plus delete), fields
   * never sent to the browser (e.g. the tokens of other API sessions) and the create form's initial body; false: not
   * in the console.
   */
  console?: { ops?: ConsoleWriteOp[]; redact?: string[]; initial?: Record<string, unknown> } | false;
}

const readOnly = { ops: [] };
export const REGISTRY = {
  // foundation
  identities: { def: identities, rest: { cacheable: true }, summary: true },
  'identity-types': { def: identityTypes, rest: { management: ['list', 'get'], cacheable: true }, console: readOnly },
  'auth-policies': {
    def: authPolicies,
    rest: { cacheable: true },
    summary: true,
    // a new policy starts as the default one: every primary method allowed, no secondary factor
    console: { initial: { primary: DEFAULT_PRIMARY, secondary: DEFAULT_SECONDARY } },
  },
  authenticators: { def: authenticators, summary: true, console: { ops: ['delete'] } },
  'config-types': { def: configTypes, rest: { cacheable: true }, summary: true },
  configs: { def: configs, rest: { cacheable: true }, summary: true },
  services: { def: services, rest: { cacheable: true, client: ['update', 'patch', 'delete'] }, summary: true },
  'api-sessions': {
    def: apiSessions,
    rest: { management: ['list', 'get', 'delete'] },
    summary: true,
    console: { ops: ['delete'], redact: ['token'] },
  },
  controllers: { def: controllers, rest: { management: false }, summary: true, console: readOnly },
  revocations: { def: revocations, rest: { management: ['list', 'get', 'create'] }, console: false },
  // enrollment
  cas: { def: cas, summary: true },
  enrollments: { def: enrollments, rest: { management: ['list', 'get', 'create', 'delete'] }, summary: true, console: { ops: ['create', 'delete'] } },
  'edge-routers': { def: edgeRouters, rest: { cacheable: true }, summary: true },
  routers: { def: routers, aliases: ['transit-routers'], summary: true },
  // policy
  'service-policies': { def: servicePolicies, rest: { cacheable: true }, summary: true },
  'edge-router-policies': { def: edgeRouterPolicies, rest: { cacheable: true }, summary: true },
  'service-edge-router-policies': { def: serviceEdgeRouterPolicies, rest: { cacheable: true }, summary: true },
  'posture-checks': { def: postureChecks, summary: true },
  'posture-check-types': { def: postureCheckTypes, rest: { management: ['list', 'get'] }, console: readOnly },
  terminators: { def: terminators, summary: true },
  // the session token is a credential for dialing: never sent to the browser
  sessions: { def: sessions, rest: { management: ['list', 'get', 'delete'] }, summary: true, console: { ops: ['delete'], redact: ['token'] } },
  // security
  'external-jwt-signers': { def: externalJwtSigners, summary: true },
  'controller-settings': { def: controllerSettings, summary: true },
  // operations (a Weft extension, not in OpenZiti's spec): read-only, administrators and ops readers
  'audit-log': { def: auditLog, rest: { management: ['list', 'get'] }, console: readOnly },
  // saved policy tests (Weft's own, under /weft/): a console page of their own (policy/policyTests.ts)
  'weft/policy-tests': { def: policyTests, console: false },
  // setup keys (Weft's own): made by POST /weft/setup-keys (the key shown once), redeemed on the Client API (enrollment/setupKeys.ts)
  'weft/setup-keys': { def: setupKeys, rest: { management: ['list', 'get', 'update', 'patch', 'delete'] }, console: false },
} satisfies Record<string, RegistryEntry>;

export type ResourceName = keyof typeof REGISTRY;
export const RESOURCE_NAMES = Object.keys(REGISTRY) as [ResourceName, ...ResourceName[]];
const ENTRIES: ReadonlyArray<[string, RegistryEntry]> = Object.entries(REGISTRY);

/** Every schema migration: store/migrations and those registered types declare for their own tables. */
export const SCHEMA_MIGRATIONS: readonly Migration[] = uniqueVersions([...migrations, ...ENTRIES.flatMap(([, e]) => e.def.migrations ?? [])]);

function uniqueVersions(list: Migration[]): Migration[] {
  const seen = new Map<number, string>();
  for (const m of list) {
    if (seen.has(m.version)) throw new Error(`migrations ${seen.get(m.version)} and ${m.name} share version ${m.version}`);
    seen.set(m.version, m.name);
  }
  return list;
}

/** Tables `/summary` counts beyond registered types: MFA enrollments have no resource of their own. */
const SUMMARY_EXTRA: Readonly<Record<string, string>> = { mfas: 'mfas' };

const byEntity = new Map<string, RegistryEntry>(ENTRIES.flatMap(([name, e]) => [name, ...(e.aliases ?? [])].map((n) => [n, e] as const)));

/** The entry of a type by its entity (URL segment) or an alias of it. */
export function entryOf(entity: string): RegistryEntry {
  const e = byEntity.get(entity);
  if (!e) throw new Error(`no registered resource type ${entity}`);
  return e;
}

/** The registered types with their URL segments (aliases included), for adapters that build routes. */
export function registeredTypes(): Array<{ name: string; paths: string[]; entry: RegistryEntry }> {
  return ENTRIES.map(([name, entry]) => ({ name, paths: [name, ...(entry.aliases ?? [])], entry }));
}

/** The declaration of each role kind. */
export const ROLE_KIND_DEFS: Readonly<Record<RoleKind, ResourceDef>> = Object.fromEntries(
  ROLE_KIND_NAMES.map((kind) => {
    const entries = ENTRIES.filter(([, e]) => e.def.roleKind === kind);
    if (entries.length !== 1) throw new Error(`role kind ${kind} must be claimed by exactly one registered type`);
    return [kind, entries[0]![1].def];
  }),
) as Record<RoleKind, ResourceDef>;

/** Distinct role attributes in use by a role kind (`/<kind>-role-attributes`), read with the kind's permission. */
export function listKindRoleAttributes(ctx: Ctx, kind: RoleKind, params: ListParams) {
  return listRoleAttributes(ctx, kind, ROLE_KIND_DEFS[kind].permission, params);
}

/**
 * Which entities of a kind a policy side's roles select (as the roleFilter/roleSemantic of the kind's list): the
 * count and the first `size` names, for the "matches as you type" preview of policy forms.
 */
export async function previewRoles(ctx: Ctx, kind: RoleKind, given: string[], semantic: 'AllOf' | 'AnyOf', size: number) {
  requirePermission(ctx.caller, ROLE_KIND_DEFS[kind].permission, 'read');
  const typed = given.map((r) => r.trim()).filter(Boolean);
  // `@name` matches as it will once saved; a name that matches nothing (or several) is said, and matches nothing
  const names = ctx.roleNames ? await lookupRoleNames(ctx.core.store, kind, typed) : { roles: typed, problems: [] };
  const problem = names.problems.length ? describeRoleNameProblems(kind, names.problems) : undefined;
  const roles = names.roles.filter((r) => !names.problems.some((p) => p.role === r));
  const match = roles.length
    ? roleMatchSql(ctx.core.store.sql, kind, parseRoles(roles, 'roles'), parseSemantic(semantic))
    : { where: '1=0', params: [] };
  const page = await listResource(ctx, ROLE_KIND_DEFS[kind], { limit: size }, match);
  return {
    totalCount: page.meta.pagination.totalCount,
    items: page.data.map((e) => ({ id: String(e.id), name: String(e.name) })),
    ...(problem ? { problem } : {}),
  };
}

/** One association listing (`/<entity>/:id/<name>`), checked for the caller against both types. */
export function listAssociation(ctx: Ctx, parent: ResourceDef, name: string, parentId: string, params: ListParams, query: AssociationQuery) {
  const association = parent.associations?.[name];
  if (!association) throw notFound(`${parent.entity} association`);
  const child = entryOf(association.child).def;
  const view = association.view?.(ctx, parentId, query) ?? ctx;
  return listRelated(view, parent, parentId, child, params, () => association.where(ctx, parentId, query));
}

/** What `/summary` counts: name -> table. */
export const SUMMARY_TABLES: Readonly<Record<string, string>> = Object.fromEntries(
  [...ENTRIES.filter(([, e]) => e.summary).map(([name, e]) => [camelCase(name), e.def.table]), ...Object.entries(SUMMARY_EXTRA)].sort(([a], [b]) =>
    a.localeCompare(b),
  ),
);

/** Resource counts for `/summary`, one count(*) per table. */
export async function summary(ctx: Ctx): Promise<Record<string, number>> {
  requireAdminRead(ctx.caller);
  const out: Record<string, number> = {};
  for (const [name, table] of Object.entries(SUMMARY_TABLES)) {
    out[name] = (await ctx.core.store.getSql<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
  }
  return out;
}
