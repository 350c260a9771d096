import type { z } from 'zod';
import { requirePermission, type PermissionGroup } from '../permissions';
import type { Ctx } from '../context';
import { conflict, duplicateValue, notFound, referencedEntity } from '../errors';
import { newId } from '../ids';
import type { QueryFields, RefTarget } from '../query/compile';
import { pageQuery, type ListParams, type Page } from '../query/list';
import { scalar } from '../query/fields';
import { textIndexChooser, withTextIndexes } from '../query/textIndex';
import { constraintBroken, type Row, type Store } from '../store/db';
import { decode, decodeRow, encode, isDecoded, type Codec, type Decoded, type RowShape } from '../store/rows';
import type { Migration } from '../store/migrations/index';
import { parseInput } from '../validation';
import type { RoleKind } from '../../../shared/roleKinds';
import { roleFilterSql } from '../query/roles';
import { passGate, type GateOp } from './writeGate';

/**
 * One declaration per resource type drives list/get/create/update/patch/delete, filterable fields, links,
 * refs and the serialized shape. Resource modules add only what is special about them through hooks.
 */
export type { Codec };
export interface ColumnSpec {
  column: string;
  codec: Codec;
  /** false: read-only (never written from a request body). */
  write?: boolean;
  /** false: written from bodies but not shown (e.g. an identity's `type`, shown as a ref) */
  shown?: false;
  /**
   * What the API shows while the column is NULL, for fields the OpenZiti spec does not let be null (its go-swagger
   * clients fail on null there): e.g. '' for strings, `undefined` to leave the field out. Without it, null is shown.
   */
  whenNull?: unknown;
}
export interface RefSpec {
  /** column holding the referenced id */
  column: string;
  entity: string;
  table: string;
}
/** A reference filters may follow: the column holding the id, and the type(s) it points into. */
export interface FilterRef {
  column: string;
  entity: string | readonly string[];
}
export type ApiObject = Record<string, unknown>;
export type WriteOp = 'create' | 'update' | 'patch';

export interface ResourceDef {
  /** URL segment and `entity` of refs, e.g. "identities" */
  entity: string;
  table: string;
  permission: PermissionGroup;
  /** API field -> storage column (read back and, unless write:false, written from bodies) */
  columns: Record<string, ColumnSpec>;
  /** the row shape of its table (store/rows.ts): `decodeRow(def.shape, row)` reads a row through the codecs */
  shape: RowShape;
  /** filterable/sortable fields beyond id, createdAt, updatedAt, tags.* */
  fields: QueryFields;
  /** ORDER BY used when the filter has no `sort by` */
  defaultSort?: string;
  /** the role kind of entities with roleAttributes: role_attributes and the policy index follow their writes */
  roleKind?: RoleKind;
  refs?: Record<string, RefSpec>;
  /** the references filters may follow, by name (the refs, and others declared for filtering only) */
  filterRefs?: Record<string, FilterRef>;
  schemas: { create?: z.ZodType; update?: z.ZodType; patch?: z.ZodType };
  /* eslint-disable @typescript-eslint/no-explicit-any -- a write's input is the parsed body of the def's own schemas */
  /** Validate/adjust a write inside its transaction; may return extra column values. */
  beforeWrite?(
    op: WriteOp,
    input: any,
    existing: Row | undefined,
    ctx: Ctx,
  ): Promise<Record<string, unknown> | void> | Record<string, unknown> | void;
  /** After the write gate, in the transaction; `written`: the row as it is now. */
  afterWrite?(op: WriteOp, id: string, input: any, existing: Row | undefined, ctx: Ctx, written: Row): Promise<void> | void;
  /* eslint-enable @typescript-eslint/no-explicit-any */
  beforeDelete?(row: Row, ctx: Ctx): Promise<void> | void;
  afterDelete?(row: Row, ctx: Ctx): Promise<void> | void;
  /** Add computed fields to a page of presented objects (batched: never one query per row). */
  decorate?(items: ApiObject[], rows: Row[], ctx: Ctx): Promise<void> | void;
  /**
   * Listings of related rows, name -> how to select them: each is served at `/<entity>/:id/<name>` and linked from
   * every row (core/registry.ts resolves the child type by its entity).
   */
  associations?: Record<string, Association>;
  /** the migrations creating (and changing) this type's tables, when it declares them itself (store/migrations) */
  migrations?: readonly Migration[];
  /** _links beyond self and the associations, name -> path relative to the API base (e.g. "auth-policies/x") */
  links?(row: Row): Record<string, string>;
  /** Replace a generic write operation (e.g. when it needs async work such as password hashing). */
  handlers?: {
    create?(ctx: Ctx, body: unknown): string | Promise<string>;
    update?(ctx: Ctx, id: string, body: unknown, op: 'update' | 'patch'): void | Promise<void>;
  };
}

/** Query values of an association listing beyond paging and filter (e.g. `policyType`, `configTypes`). */
export type AssociationQuery = Record<string, string | string[] | undefined>;

export interface Association {
  /** the entity (URL segment) of the listed type */
  child: string;
  /** the listed rows (alias t) of one parent, computed after the caller's permission to read both was checked */
  where(ctx: Ctx, parentId: string, query: AssociationQuery): Promise<ListExtra> | ListExtra;
  /** the context the rows are presented in (e.g. one identity's view of services) */
  view?(ctx: Ctx, parentId: string, query: AssociationQuery): Ctx;
}

/** An association selecting `child` rows by an SQL condition with the parent id as its one parameter. */
export const related = (child: string, where: string): Association => ({ child, where: (_ctx, id) => ({ where, params: [id] }) });

export const ref = (entity: string, id: string, name: string | null | undefined) => ({
  _links: { self: { href: `./${entity}/${id}` } },
  entity,
  id,
  name: name ?? undefined,
});

const BASE_FIELDS: QueryFields = {
  id: scalar('string', 't.id'),
  createdAt: scalar('datetime', 't.created_at'),
  updatedAt: scalar('datetime', 't.updated_at'),
};

const fieldsOfDef = new WeakMap<ResourceDef, QueryFields>();

/**
 * Every declared type by its entity: what a reference names. Declarations are facts fixed at load (each
 * defineResource adds its own), the same for every core in the process.
 */
const declared = new Map<string, ResourceDef>();

/** Makes a declaration findable by its entity (defineResource calls it). */
export function declare(def: ResourceDef): ResourceDef {
  declared.set(def.entity, def);
  return def;
}

/**
 * The references a type's filters may follow (`service.name`, `apiSession.identity.name`): its refs and the ones
 * declared for filtering only, into every declared type they may name.
 */
export function filterRefs(def: ResourceDef): (name: string) => RefTarget | undefined {
  return (name) => {
    const r = def.filterRefs && Object.prototype.hasOwnProperty.call(def.filterRefs, name) ? def.filterRefs[name] : undefined;
    if (!r) return undefined;
    const targets = [r.entity]
      .flat()
      .map((entity) => declared.get(entity))
      .filter((t): t is ResourceDef => !!t)
      .map((t) => ({ table: t.table, fields: filterFields(t), tagsSql: 't.tags', refs: filterRefs(t) }));
    return targets.length ? { fk: `t.${r.column}`, targets } : undefined;
  };
}

/** The filterable fields of a resource (string columns with a trigram index marked so: core/query/textIndex.ts). */
export function filterFields(def: ResourceDef): QueryFields {
  let fields = fieldsOfDef.get(def);
  if (!fields) fieldsOfDef.set(def, (fields = withTextIndexes(def.table, { ...BASE_FIELDS, ...def.fields })));
  return fields;
}

// ---- reading --------------------------------------------------------------------------------------

export async function findRow(store: Store, def: ResourceDef, id: string): Promise<Row | undefined> {
  return store.getSql(`SELECT * FROM ${def.table} WHERE id = ?`, id);
}

export async function requireRow(store: Store, def: ResourceDef, id: string): Promise<Row> {
  const row = await findRow(store, def, id);
  if (!row) throw notFound(def.entity);
  return row;
}

/** The row of a type, decoded through its shape (typed for a declared type); 404 when there is none. */
export async function requireDecoded<D extends ResourceDef>(store: Store, def: D, id: string): Promise<Decoded<D['shape']>> {
  return decodeRow(def.shape, await requireRow(store, def, id));
}

/** A def's columns as a list, made once (present() walks it for every row). */
const columnListOf = new WeakMap<ResourceDef, Array<{ field: string; column: string; codec: Codec; nullable: boolean; whenNull: unknown }>>();
function columnList(def: ResourceDef) {
  let list = columnListOf.get(def);
  if (!list) {
    list = Object.entries(def.columns)
      .filter(([, spec]) => spec.shown !== false)
      .map(([field, spec]) => ({
        field,
        column: spec.column,
        codec: spec.codec,
        nullable: !('whenNull' in spec),
        whenNull: spec.whenNull,
      }));
    columnListOf.set(def, list);
  }
  return list;
}

/**
 * Serializes rows into the API shape: base fields, declared columns, refs, links, then the decorate hook. The rows are
 * as stored, or decoded through `def.shape` (store/rows.ts), whose values are taken as they are.
 */
export async function present(ctx: Ctx, def: ResourceDef, rows: Row[]): Promise<ApiObject[]> {
  const refs = Object.entries(def.refs ?? {});
  // the referenced names are looked up together with what `decorate` reads (one round trip on PostgreSQL); the refs
  // are in the items from the start, their names filled in once known
  const refNames = Promise.all(
    refs.map(([, spec]) =>
      namesById(ctx.core.store, spec.table, [...new Set(rows.map((r) => r[spec.column]).filter((v): v is string => typeof v === 'string'))]),
    ),
  );
  const named: Array<{ ref: { name?: string }; refIndex: number; refId: string }> = [];
  const columns = columnList(def);
  const items = rows.map((row) => {
    const id = String(row.id);
    const read = isDecoded(row) ? (_codec: Codec, v: unknown) => v : decode;
    const links: Record<string, { href: string }> = { self: { href: `./${def.entity}/${id}` } };
    for (const name in def.associations) links[name] = { href: `./${def.entity}/${id}/${name}` };
    if (def.links) {
      const extra = def.links(row);
      for (const name in extra) links[name] = { href: `./${extra[name]}` };
    }
    const item: ApiObject = {
      _links: links,
      id,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      tags: read('json', row.tags) ?? {},
    };
    for (const c of columns) {
      const v = read(c.codec, row[c.column]);
      item[c.field] = v === null && !c.nullable ? c.whenNull : v;
    }
    refs.forEach(([field, spec], refIndex) => {
      const refId = row[spec.column];
      if (typeof refId === 'string' && refId) named.push({ ref: (item[field] = ref(spec.entity, refId, undefined)), refIndex, refId });
      else item[field] = null;
    });
    return item;
  });
  const [names] = await Promise.all([refNames, def.decorate?.(items, rows, ctx)]);
  for (const n of named) n.ref.name = names[n.refIndex]!.get(n.refId);
  return items;
}

/** `SELECT id, name FROM table WHERE id IN (...)` for a page's worth of ids. */
export async function namesById(store: Store, table: string, ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!ids.length) return out;
  const rows = await store.allSql<{ id: string; name: string }>(
    `SELECT id, name FROM ${table} WHERE id IN ${store.sql.jsonValues()}`,
    JSON.stringify(ids),
  );
  for (const r of rows) out.set(r.id, r.name);
  return out;
}

export interface ListExtra {
  /** extra SQL condition over alias t (e.g. association listings, roleFilter) */
  where?: string;
  params?: unknown[];
}

/** The roleFilter/roleSemantic restriction of a list of a role kind's entities (ignored for other types). */
function roleRestriction(store: Store, def: ResourceDef, params: ListParams): ListExtra {
  const roles = params.roleFilter === undefined ? [] : Array.isArray(params.roleFilter) ? params.roleFilter : [params.roleFilter];
  return (def.roleKind && roleFilterSql(store.sql, def.roleKind, roles, params.roleSemantic)) || {};
}

/** The count and page statements of a list: compiled ZitiQL, the role filter and an extra restriction. */
export async function listSql(def: ResourceDef, params: ListParams, extra: ListExtra, store: Store) {
  const fields = filterFields(def);
  const options = { tagsSql: 't.tags', refs: filterRefs(def) };
  const { compiled, limit, offset } = pageQuery(params, fields, {
    ...options,
    sql: store.sql,
    ...(params.filter ? { useTextIndex: await textIndexChooser(store, params.filter, fields, options) } : {}),
  });
  const roles = roleRestriction(store, def, params);
  const conds = [compiled.where, extra.where, roles.where].filter((c): c is string => !!c && c !== '1=1');
  // no WHERE at all when unfiltered: lets SQLite answer count(*) from the smallest index
  const where = conds.length ? ` WHERE ${conds.map((c) => `(${c})`).join(' AND ')}` : '';
  const order = compiled.sort.length
    ? [...compiled.sort.map((s) => store.sql.orderBy(s.sql, s.dir, def.table)), 't.id ASC'].join(', ')
    : (def.defaultSort ?? 't.id ASC');
  return {
    countSql: `SELECT count(*) AS n FROM ${def.table} t${where}`,
    pageSql: `SELECT t.* FROM ${def.table} t${where} ORDER BY ${order} LIMIT ? OFFSET ?`,
    args: [...compiled.params, ...(extra.params ?? []), ...(roles.params ?? [])],
    limit,
    offset,
    filterableFields: Object.keys(fields),
  };
}

/** Pages rows in SQL: count and page in two statements, sent together. */
export async function listRows(ctx: Ctx, def: ResourceDef, params: ListParams, extra: ListExtra = {}) {
  const store = ctx.core.store;
  const q = await listSql(def, params, extra, store);
  const [count, rows] = await store.batch([
    { sql: q.countSql, params: q.args },
    { sql: q.pageSql, params: [...q.args, q.limit, q.offset] },
  ]);
  const totalCount = (count![0] as { n: number }).n;
  return { rows, meta: { pagination: { limit: q.limit, offset: q.offset, totalCount }, filterableFields: q.filterableFields } };
}

export async function listResource(ctx: Ctx, def: ResourceDef, params: ListParams, extra?: ListExtra): Promise<Page<ApiObject>> {
  requirePermission(ctx.caller, def.permission, 'read');
  return ctx.core.store.read(async () => {
    const { rows, meta } = await listRows(ctx, def, params, extra);
    return { data: await present(ctx, def, rows), meta };
  });
}

export async function getResource(ctx: Ctx, def: ResourceDef, id: string): Promise<ApiObject> {
  requirePermission(ctx.caller, def.permission, 'read');
  return ctx.core.store.read(async () => (await present(ctx, def, [await requireRow(ctx.core.store, def, id)]))[0]!);
}

// ---- writing --------------------------------------------------------------------------------------

function columnValues(def: ResourceDef, input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, spec] of Object.entries(def.columns)) {
    if (spec.write === false || !(field in input) || input[field] === undefined) continue;
    out[spec.column] = encode(spec.codec, input[field]);
  }
  if (input.tags !== undefined) out.tags = JSON.stringify(input.tags ?? {});
  return out;
}

/** Maps constraint failures to the API's errors; rethrows anything else. */
export function translateConstraint(def: ResourceDef, e: unknown, input?: Record<string, unknown>): never {
  const broken = constraintBroken(e);
  if (broken?.kind === 'unique') {
    const column = broken.column;
    const field = Object.entries(def.columns).find(([, s]) => s.column === column)?.[0] ?? column ?? 'unknown';
    const value = input?.[field];
    throw duplicateValue(def.entity, field, value);
  }
  if (broken?.kind === 'foreign-key') {
    throw referencedEntity(`the ${def.entity} is referenced by other entities`);
  }
  throw e;
}

/** Inserts a row of `def`'s table; returns it as stored (defaults and triggers' changes included). */
export async function insertRow(ctx: Ctx, def: ResourceDef, values: Record<string, unknown>, input?: Record<string, unknown>): Promise<Row> {
  try {
    const names = Object.keys(values);
    return (await ctx.core.store.getSql<Row>(
      `INSERT INTO ${def.table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')}) RETURNING *`,
      ...Object.values(values),
    ))!;
  } catch (e) {
    translateConstraint(def, e, input);
  }
}

export async function createResource(ctx: Ctx, def: ResourceDef, body: unknown): Promise<string> {
  requirePermission(ctx.caller, def.permission, 'create');
  return applyCreate(ctx, def, body);
}

/**
 * Create without the permission check, for callers that authorised the operation themselves. `system` is for Weft's own writes: a fixed id and columns no request body may
 * set (e.g. `is_default_admin`, `is_system`), written with the row in the same transaction and hooks.
 */
export async function applyCreate(ctx: Ctx, def: ResourceDef, body: unknown, system: SystemColumns = {}): Promise<string> {
  if (!def.schemas.create) throw conflict('METHOD_NOT_ALLOWED', 'create is not supported');
  return writeCreate(ctx, def, parseInput(def.schemas.create, body) as Record<string, unknown>, system);
}

/**
 * A row no request body makes (Dial/Bind sessions, enrollment records): its columns as Weft computed them, written by
 * the same create path (id, timestamps, tags, constraint errors, the type's hooks).
 */
export async function applySystemCreate(ctx: Ctx, def: ResourceDef, system: SystemColumns & { tags?: object }): Promise<string> {
  return writeCreate(ctx, def, system.tags ? { tags: system.tags } : {}, system);
}

interface SystemColumns {
  id?: string;
  columns?: Record<string, unknown>;
}

async function writeCreate(ctx: Ctx, def: ResourceDef, input: Record<string, unknown>, system: SystemColumns): Promise<string> {
  const store = ctx.core.store;
  return store.tx(async () => {
    const id = system.id ?? (input.id as string | undefined) ?? newId();
    const extra = (await def.beforeWrite?.('create', input, undefined, ctx)) ?? {};
    const now = ctx.core.clock.now().toISOString();
    const row = await insertRow(
      ctx,
      def,
      { id, created_at: now, updated_at: now, tags: '{}', ...columnValues(def, input), ...extra, ...system.columns },
      input,
    );
    const written = await gate(ctx, def, 'create', id, undefined, input, row);
    await def.afterWrite?.('create', id, input, undefined, ctx, written!);
    return id;
  });
}

export async function updateResource(ctx: Ctx, def: ResourceDef, id: string, body: unknown, op: 'update' | 'patch'): Promise<void> {
  requirePermission(ctx.caller, def.permission, 'update');
  await applyUpdate(ctx, def, id, body, op);
}

/** Update without the permission check, for callers that authorised the operation themselves. */
export async function applyUpdate(ctx: Ctx, def: ResourceDef, id: string, body: unknown, op: 'update' | 'patch'): Promise<void> {
  const schema = def.schemas[op];
  if (!schema) throw conflict('METHOD_NOT_ALLOWED', `${op} is not supported`);
  const store = ctx.core.store;
  // the row is read in the transaction that writes it: what the hooks compare with is what is replaced
  await store.tx(async () => {
    const existing = await requireRow(store, def, id);
    const input = parseInput(schema, body) as Record<string, unknown>;
    const extra = (await def.beforeWrite?.(op, input, existing, ctx)) ?? {};
    const values = { ...columnValues(def, input), ...extra, updated_at: ctx.core.clock.now().toISOString() };
    try {
      const names = Object.keys(values);
      await store.runSql(`UPDATE ${def.table} SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE id = ?`, ...Object.values(values), id);
    } catch (e) {
      translateConstraint(def, e, input);
    }
    const written = await gate(ctx, def, op, id, existing, input);
    await def.afterWrite?.(op, id, input, existing, ctx, written!);
  });
}

export async function deleteResource(ctx: Ctx, def: ResourceDef, id: string): Promise<void> {
  requirePermission(ctx.caller, def.permission, 'delete');
  await applyDelete(ctx, def, id);
}

/** Delete without the permission check, for callers that authorised the operation themselves. */
export async function applyDelete(ctx: Ctx, def: ResourceDef, id: string): Promise<void> {
  const store = ctx.core.store;
  await store.tx(async () => {
    const row = await requireRow(store, def, id);
    await def.beforeDelete?.(row, ctx);
    try {
      await store.runSql(`DELETE FROM ${def.table} WHERE id = ?`, id);
    } catch (e) {
      translateConstraint(def, e);
    }
    await gate(ctx, def, 'delete', id, row);
    await def.afterDelete?.(row, ctx);
  });
}

/**
 * The write gate: what every write of a resource does in its transaction, after the row is written (the core's
 * subscribers, then the request's own), with the row as it was and as it is now, and the body it was given.
 */
async function gate(
  ctx: Ctx,
  def: ResourceDef,
  op: GateOp,
  id: string,
  before: Row | undefined,
  input?: Record<string, unknown>,
  /** the row as written, when the write returned it */
  written?: Row,
): Promise<Row | undefined> {
  const after = op === 'delete' ? undefined : (written ?? (await ctx.core.store.getSql<Row>(`SELECT * FROM ${def.table} WHERE id = ?`, id)));
  const write = { ctx, def, op, id, before, after, input };
  await passGate(ctx.core.writeSubscribers, write);
  if (ctx.onWrite) await ctx.onWrite(write);
  return after;
}

/** The operations an adapter exposes for a resource: the generic ones unless the declaration overrides them. */
export function resourceOps(def: ResourceDef) {
  return {
    list: (ctx: Ctx, params: ListParams, extra?: ListExtra) => listResource(ctx, def, params, extra),
    get: (ctx: Ctx, id: string) => getResource(ctx, def, id),
    create: async (ctx: Ctx, body: unknown): Promise<string> =>
      def.handlers?.create ? def.handlers.create(ctx, body) : createResource(ctx, def, body),
    update: async (ctx: Ctx, id: string, body: unknown, op: 'update' | 'patch'): Promise<void> =>
      def.handlers?.update ? def.handlers.update(ctx, id, body, op) : updateResource(ctx, def, id, body, op),
    delete: (ctx: Ctx, id: string) => deleteResource(ctx, def, id),
  };
}
