import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { z } from 'zod';
import { externalJwtSigners } from '../auth/index';
import type { Ctx } from '../context';
import { authPolicies } from '../entities/authPolicies';
import { cas } from '../entities/cas';
import { configTypes } from '../entities/configTypes';
import { configs } from '../entities/configs';
import { applyCreate, applyUpdate, namesById, present, type ApiObject, type ResourceDef } from '../entities/resource';
import { ApiError, unauthorized, validationError } from '../errors';
import { ROLE_KINDS, type RoleKind } from '../kinds';
import { can } from '../permissions';
import { edgeRouterPolicies, edgeRouters, identities, postureChecks, serviceEdgeRouterPolicies, servicePolicies, services } from '../policy/index';
import type { Row } from '../store/db';

/**
 * The network "as code": the document `ziti ops export` writes and `ziti ops import` reads (OpenZiti v1.7.2,
 * ziti/cmd/ascode): one list per type under its camelCase key, entries without ids or timestamps, references written
 * as `@name` (a policy's `@id` roles become `@name`, a service's configs, a config's type, an identity's auth policy,
 * an auth policy's signers). Weft writes the same fields the CLI does, every list sorted by name and every object's
 * keys sorted, so two exports of the same network are the same bytes; it reads its own files and the CLI's.
 *
 * Import plans by name: an entry whose name is new is created, one whose fields differ from the network's is updated
 * (only the fields the file gives and the type lets change), the rest are unchanged. The whole import runs in one
 * transaction through the generic write path (the write gate: policy index, audit, events): all of it or none of it.
 * A dry run is the same import rolled back, so its plan is exactly what the import would do.
 */

type Doc = Record<string, unknown>;

interface Section {
  key: string;
  def: ResourceDef;
  /** fields the CLI leaves out of its export (besides id, _links, createdAt, updatedAt) */
  drop?: string[];
  /** entries the CLI leaves out (well-known rows every network has) */
  skip?: (item: ApiObject) => boolean;
  /** fills role attributes with [] when absent, as the CLI does */
  roleAttributes?: boolean;
  /** the table has system rows (is_system): left out */
  system?: boolean;
}

/** OpenZiti's (and Weft's) name of a router's own edge router policy: `edge-router-<router id>-system`. */
const SYSTEM_ROUTER_POLICY = /^edge-router-.+-system$/;

/** Config types every network has (OpenZiti's, and Weft's public share type): not exported. */
const WELL_KNOWN_CONFIG_TYPES = ['intercept.v1', 'host.v1', 'host.v2', 'ziti-tunneler-server.v1', 'ziti-tunneler-client.v1', 'svc.proxy.v1'];

/** The sections in the order an import writes them (what an entry references is written before it). */
const SECTIONS: readonly Section[] = [
  // the verification token is a CA's own secret: not part of the model (the CLI writes it)
  { key: 'certificateAuthorities', def: cas, drop: ['verificationToken'] },
  { key: 'configTypes', def: configTypes, skip: (i) => WELL_KNOWN_CONFIG_TYPES.includes(String(i.name)) },
  { key: 'configs', def: configs, drop: ['configTypeId'] },
  { key: 'services', def: services, roleAttributes: true, drop: ['config', 'data', 'postureQueries', 'permissions', 'maxIdleTimeMillis'] },
  { key: 'postureChecks', def: postureChecks, drop: ['version'] },
  {
    key: 'edgeRouters',
    def: edgeRouters,
    roleAttributes: true,
    // (the enrollment token is a credential and the control channel listeners are what the router reports: Weft leaves
    // them out, the CLI writes them)
    drop: [
      'enrollmentToken',
      'ctrlChanListeners',
      'cost',
      'fingerprint',
      'isVerified',
      'isOnline',
      'enrollmentJwt',
      'enrollmentCreatedAt',
      'enrollmentExpiresAt',
      'syncStatus',
      'versionInfo',
      'certPem',
      'supportedProtocols',
    ],
  },
  { key: 'externalJwtSigners', def: externalJwtSigners, drop: ['notBefore', 'notAfter', 'commonName'] },
  { key: 'authPolicies', def: authPolicies, skip: (i) => i.name === 'Default' },
  {
    key: 'identities',
    def: identities,
    // routers' identities come with their routers (the CLI exports them, and imports them as ordinary identities)
    skip: (i) => i.typeId === 'Router',
    roleAttributes: true,
    drop: [
      'defaultHostingCost',
      'defaultHostingPrecedence',
      'hasApiSession',
      'lastSeenAt',
      'serviceHostingPrecedences',
      'enrollment',
      'appData',
      'sdkInfo',
      'disabledAt',
      'disabledUntil',
      'serviceHostingCosts',
      'envInfo',
      'authenticators',
      'type',
      'authPolicyId',
      'hasRouterConnection',
      'hasEdgeRouterConnection',
    ],
  },
  // system policies come with their routers (the CLI exports them, and imports them as ordinary policies)
  { key: 'serviceEdgeRouterPolicies', def: serviceEdgeRouterPolicies, drop: ['isSystem'] },
  { key: 'servicePolicies', def: servicePolicies, drop: ['isSystem'] },
  { key: 'edgeRouterPolicies', def: edgeRouterPolicies, drop: ['isSystem'], system: true, skip: (i) => SYSTEM_ROUTER_POLICY.test(String(i.name)) },
];
export const ASCODE_SECTIONS: readonly string[] = SECTIONS.map((s) => s.key);

/** The policies' role sides: the field, the role kind its `@` names refer to. */
const ROLE_SIDES: Record<string, RoleKind> = {
  identityRoles: 'identity',
  serviceRoles: 'service',
  edgeRouterRoles: 'edge-router',
  postureCheckRoles: 'posture-check',
};

const ALWAYS_DROPPED = ['id', '_links', 'createdAt', 'updatedAt'];

// ---- export --------------------------------------------------------------------------------------------------------

/** The network as one document (every section), stable: lists by name, keys sorted. */
export async function exportNetwork(ctx: Ctx): Promise<Doc> {
  requireExport(ctx);
  return ctx.core.store.read(async () => {
    const out: Doc = {};
    for (const section of [...SECTIONS].sort((a, b) => a.key.localeCompare(b.key))) {
      const where = section.system ? ' WHERE is_system = 0' : '';
      const rows = await ctx.core.store.allSql<Row>(`SELECT * FROM ${section.def.table}${where} ORDER BY name, id`);
      const items = await present(ctx, section.def, rows);
      const entries: Doc[] = [];
      for (const item of items) {
        if (section.skip?.(item)) continue;
        entries.push(sortKeys(await exportEntry(ctx, section, item)) as Doc);
      }
      out[section.key] = entries;
    }
    return out;
  });
}

/** The document as the CLI writes it: JSON with two spaces (`--output-format JSON`), or YAML. */
export function formatNetwork(doc: Doc, format: 'json' | 'yaml'): string {
  return format === 'yaml' ? stringifyYaml(doc, { lineWidth: 0 }) : JSON.stringify(doc, null, 2) + '\n';
}

/** A file's text (JSON or YAML, JSON being YAML too) as a document; a clear error when it is neither. */
export function parseNetwork(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // not JSON: YAML then
  }
  try {
    return parseYaml(text);
  } catch (e) {
    throw validationError('(file)', `neither JSON nor YAML: ${(e as Error).message.split('\n')[0]}`);
  }
}

function requireExport(ctx: Ctx): void {
  if (!can(ctx.caller, 'ops', 'read')) throw unauthorized();
}

async function exportEntry(ctx: Ctx, section: Section, item: ApiObject): Promise<Doc> {
  const m: Doc = { ...item };
  for (const f of [...ALWAYS_DROPPED, ...(section.drop ?? [])]) delete m[f];
  if (section.roleAttributes && m.roleAttributes == null) m.roleAttributes = [];
  const store = ctx.core.store;
  /** `@name` of each id (the id itself when nothing has it), one query for the lot */
  const refs = async (table: string, ids: string[]) => {
    const names = await namesById(store, table, ids);
    return ids.map((id) => '@' + (names.get(id) ?? id));
  };
  const nameOf = async (table: string, id: unknown) => (typeof id === 'string' && id ? (await namesById(store, table, [id])).get(id) : undefined);
  switch (section.key) {
    case 'identities': {
      if (item.disabledUntil) m.disabledUntil = item.disabledUntil;
      m.authPolicy = '@' + ((await nameOf('auth_policies', item.authPolicyId)) ?? 'Default');
      break;
    }
    case 'services': {
      m.configs = (await refs('configs', (item.configs as string[] | null) ?? [])).sort();
      break;
    }
    case 'externalJwtSigners': {
      // Weft's field beyond the CLI's model: the auth policy of identities a signer enrolls, by name
      if (item.enrollAuthPolicyId) m.enrollAuthPolicyId = '@' + ((await nameOf('auth_policies', item.enrollAuthPolicyId)) ?? item.enrollAuthPolicyId);
      break;
    }
    case 'configs': {
      m.configType = '@' + ((await nameOf('config_types', item.configTypeId)) ?? item.configTypeId);
      break;
    }
    case 'authPolicies': {
      const primary = structuredClone(item.primary) as { extJwt?: { allowedSigners?: string[] | null } };
      if (primary.extJwt) primary.extJwt.allowedSigners = await refs('external_jwt_signers', primary.extJwt.allowedSigners ?? []);
      m.primary = primary;
      const secondary = structuredClone(item.secondary) as { requireExtJwtSigner?: string | null };
      if (secondary?.requireExtJwtSigner) {
        secondary.requireExtJwtSigner =
          '@' + ((await nameOf('external_jwt_signers', secondary.requireExtJwtSigner)) ?? secondary.requireExtJwtSigner);
      }
      m.secondary = secondary;
      break;
    }
  }
  for (const side of Object.keys(ROLE_SIDES)) {
    const display = item[`${side}Display`] as Array<{ role: string; name: string }> | undefined;
    if (side in item) m[side] = display ? display.map((d) => d.name) : item[side];
    delete m[`${side}Display`];
  }
  return m;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Doc)[k])]),
    );
  }
  return v;
}

// ---- import --------------------------------------------------------------------------------------------------------

export type PlanAction = 'create' | 'update' | 'unchanged' | 'skip';

export interface PlanEntry {
  section: string;
  name: string;
  action: PlanAction;
  /** the fields an update changes */
  fields?: string[];
  /** why an entry is skipped */
  reason?: string;
}

export interface ImportResult {
  dryRun: boolean;
  /** every entry of the file, in the order the import writes them */
  plan: PlanEntry[];
  counts: Record<PlanAction, number>;
}

class DryRun extends Error {
  constructor(readonly plan: PlanEntry[]) {
    super('dry run');
  }
}

/**
 * Imports a document (already parsed from JSON or YAML): the plan, applied in one transaction unless `dryRun`. Any
 * bad entry (unknown section, missing name, a reference to nothing, a value the type refuses) fails the whole import
 * with a COULD_NOT_VALIDATE error whose field names the entry (`services[2] "web"`); nothing is written.
 */
export async function importNetwork(ctx: Ctx, doc: unknown, opts: { dryRun?: boolean } = {}): Promise<ImportResult> {
  if (ctx.caller.partial || !ctx.caller.isAdmin) throw unauthorized();
  const sections = checkDocument(doc);
  let plan: PlanEntry[];
  try {
    plan = await ctx.core.store.tx(async () => {
      const out: PlanEntry[] = [];
      for (const section of SECTIONS) {
        const entries = sections[section.key] ?? [];
        for (let i = 0; i < entries.length; i++) {
          const entry = entries[i] as Doc;
          const where = `${section.key}[${i}] "${String(entry.name)}"`;
          try {
            out.push({ section: section.key, name: String(entry.name), ...(await importEntry(ctx, section, entry)) });
          } catch (e) {
            throw entryError(where, e);
          }
        }
      }
      if (opts.dryRun) throw new DryRun(out);
      return out;
    });
  } catch (e) {
    if (!(e instanceof DryRun)) throw e;
    plan = e.plan;
  }
  const counts: Record<PlanAction, number> = { create: 0, update: 0, unchanged: 0, skip: 0 };
  for (const p of plan) counts[p.action]++;
  return { dryRun: !!opts.dryRun, plan, counts };
}

function checkDocument(doc: unknown): Record<string, unknown[]> {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw validationError('(root)', 'must be an object of sections', typeof doc);
  const out: Record<string, unknown[]> = {};
  for (const [key, list] of Object.entries(doc as Doc)) {
    if (!ASCODE_SECTIONS.includes(key)) throw validationError(key, `unknown section (known: ${ASCODE_SECTIONS.join(', ')})`, key);
    if (list === null) continue;
    if (!Array.isArray(list)) throw validationError(key, 'must be a list of entries', list);
    const seen = new Set<string>();
    list.forEach((entry, i) => {
      if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw validationError(`${key}[${i}]`, 'must be an object', entry);
      const name = (entry as Doc).name;
      if (typeof name !== 'string' || !name.trim()) throw validationError(`${key}[${i}].name`, 'is required', name);
      if (seen.has(name)) throw validationError(`${key}[${i}] "${name}"`, 'the name appears twice in this section', name);
      seen.add(name);
    });
    out[key] = list;
  }
  return out;
}

/** A failing entry's error, its field prefixed with the entry (`services[2] "web".configs`). */
function entryError(where: string, e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  if (!e.fieldCause) return new ApiError(e.code, e.status, `${where}: ${e.message}`);
  const { field, reason, value } = e.fieldCause;
  return validationError(field && field !== '(root)' ? `${where}.${field}` : where, reason, value);
}

async function idByName(ctx: Ctx, table: string, name: string): Promise<string | undefined> {
  return (await ctx.core.store.getSql<{ id: string }>(`SELECT id FROM ${table} WHERE name = ?`, name))?.id;
}

/** `@name` → the id of that entity of `table` (a missing one is the entry's error, naming the field). */
async function refId(ctx: Ctx, table: string, what: string, field: string, value: unknown): Promise<string> {
  if (typeof value !== 'string' || !value.startsWith('@') || value.length < 2) throw validationError(field, `must be '@<${what} name>'`, value);
  const id = await idByName(ctx, table, value.slice(1));
  if (!id) throw validationError(field, `no ${what} named "${value.slice(1)}"`, value);
  return id;
}

/** The entry as a write body: references resolved to ids. */
async function writeBody(ctx: Ctx, section: Section, entry: Doc): Promise<Doc> {
  const body: Doc = { ...entry };
  for (const f of ALWAYS_DROPPED) delete body[f];
  switch (section.key) {
    case 'configs':
      if ('configType' in body) {
        body.configTypeId = await refId(ctx, 'config_types', 'config type', 'configType', body.configType);
        delete body.configType;
      }
      break;
    case 'services':
      if ('configs' in body) {
        const ids: string[] = [];
        const list = (body.configs as unknown[] | null) ?? [];
        if (!Array.isArray(list)) throw validationError('configs', 'must be a list', list);
        for (const [i, c] of list.entries()) ids.push(await refId(ctx, 'configs', 'config', `configs[${i}]`, c));
        body.configs = ids;
      }
      break;
    case 'externalJwtSigners':
      if (typeof body.enrollAuthPolicyId === 'string' && body.enrollAuthPolicyId.startsWith('@')) {
        body.enrollAuthPolicyId = await refId(ctx, 'auth_policies', 'auth policy', 'enrollAuthPolicyId', body.enrollAuthPolicyId);
      }
      break;
    case 'identities':
      delete body.isDefaultAdmin;
      if ('authPolicy' in body) {
        body.authPolicyId = await refId(ctx, 'auth_policies', 'auth policy', 'authPolicy', body.authPolicy);
        delete body.authPolicy;
      }
      // the type the file names (the CLI's import always makes Default ones)
      if (!body.type) body.type = typeof body.typeId === 'string' && body.typeId ? body.typeId : 'Default';
      delete body.typeId;
      break;
    case 'authPolicies': {
      const primary = structuredClone(body.primary) as { extJwt?: { allowedSigners?: unknown } } | undefined;
      const signers = primary?.extJwt?.allowedSigners;
      if (primary?.extJwt && signers != null) {
        if (!Array.isArray(signers)) throw validationError('primary.extJwt.allowedSigners', 'must be a list', signers);
        const ids: string[] = [];
        for (const [i, s] of signers.entries()) {
          ids.push(await refId(ctx, 'external_jwt_signers', 'external JWT signer', `primary.extJwt.allowedSigners[${i}]`, s));
        }
        primary.extJwt.allowedSigners = ids;
        body.primary = primary;
      }
      const secondary = structuredClone(body.secondary) as { requireExtJwtSigner?: unknown } | undefined;
      if (secondary?.requireExtJwtSigner != null) {
        secondary.requireExtJwtSigner = await refId(
          ctx,
          'external_jwt_signers',
          'external JWT signer',
          'secondary.requireExtJwtSigner',
          secondary.requireExtJwtSigner,
        );
        body.secondary = secondary;
      }
      break;
    }
  }
  for (const [side, kind] of Object.entries(ROLE_SIDES)) {
    if (!(side in body) || body[side] == null) continue;
    const roles = body[side];
    if (!Array.isArray(roles)) throw validationError(side, 'must be a list of roles', roles);
    const out: string[] = [];
    for (const [i, r] of roles.entries()) {
      if (typeof r === 'string' && r.startsWith('@')) out.push('@' + (await refId(ctx, ROLE_KINDS[kind].table, kind, `${side}[${i}]`, r)));
      else out.push(r as string);
    }
    body[side] = out;
  }
  return body;
}

/** The keys a write schema accepts (a union's: any member's). */
function schemaKeys(schema: z.ZodType | undefined): Set<string> {
  const keys = new Set<string>();
  const visit = (s: unknown) => {
    const def = (s as { def?: { type?: string; shape?: object; options?: unknown[]; innerType?: unknown; in?: unknown } })?.def;
    if (!def) return;
    if (def.shape) Object.keys(def.shape).forEach((k) => keys.add(k));
    def.options?.forEach(visit);
    if (def.innerType) visit(def.innerType);
    if (def.in) visit(def.in);
  };
  visit(schema);
  return keys;
}

/** null, '', [] and {} say the same in a file: nothing (OpenZiti writes null for a signer's unset fields, Weft ''). */
function same(a: unknown, b: unknown): boolean {
  const empty = (v: unknown) =>
    v == null || v === '' || (Array.isArray(v) && !v.length) || (typeof v === 'object' && !Object.keys(v as object).length);
  if (empty(a) && empty(b)) return true;
  if (Array.isArray(a) && Array.isArray(b) && a.every((x) => typeof x === 'string') && b.every((x) => typeof x === 'string')) {
    return isDeepStrictEqual([...a].sort(), [...b].sort());
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    // a nested object (auth policy's primary, a posture check's list items...) compares on what the file gives
    return Object.keys(b as Doc).every((k) => same((a as Doc)[k], (b as Doc)[k]));
  }
  return isDeepStrictEqual(a, b);
}

async function importEntry(ctx: Ctx, section: Section, entry: Doc): Promise<Omit<PlanEntry, 'section' | 'name'>> {
  const name = String(entry.name);
  const def = section.def;
  if (section.key === 'identities') {
    // router identities come with their routers; the default admin is the target's own (its attributes follow the file)
    const type = String(entry.typeId ?? (entry.type as { id?: string } | undefined)?.id ?? 'Default');
    if (type.toLowerCase() === 'router') return { action: 'skip', reason: "a router's identity: it comes with its router" };
  }
  if (section.skip?.(entry)) return { action: 'skip', reason: 'made by every network (or by a router) itself' };
  let row: Row | undefined;
  if (section.key === 'identities' && entry.isDefaultAdmin === true) {
    row = await ctx.core.store.getSql<Row>('SELECT * FROM identities WHERE is_default_admin = 1');
  } else {
    row = await ctx.core.store.getSql<Row>(`SELECT * FROM ${def.table} WHERE name = ?`, name);
  }
  if (!row) {
    await applyCreate(ctx, def, await writeBody(ctx, section, entry));
    return { action: 'create' };
  }
  const current = await exportEntry(ctx, section, (await present(ctx, def, [row]))[0]!);
  const patchable = schemaKeys(def.schemas.patch);
  // the mapped fields: a file's reference field and the column it is written to
  const written: Record<string, string> = { configType: 'configTypeId', authPolicy: 'authPolicyId' };
  let fields = Object.keys(entry).filter((k) => !ALWAYS_DROPPED.includes(k) && patchable.has(written[k] ?? k) && !same(current[k], entry[k]));
  if (section.key === 'identities' && row.is_default_admin) fields = fields.filter((k) => k === 'roleAttributes' || k === 'tags');
  if (section.key === 'identities' && row.is_default_admin && entry.name !== current.name) fields = fields.filter((k) => k !== 'name');
  if (!fields.length) return { action: 'unchanged' };
  const body = await writeBody(ctx, section, Object.fromEntries(fields.map((k) => [k, entry[k]])));
  if (section.key === 'identities') delete body.type;
  await applyUpdate(ctx, def, String(row.id), body, 'patch');
  return { action: 'update', fields: fields.sort() };
}
