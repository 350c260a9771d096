import { z } from 'zod';
import type { Ctx } from '../context';
import { ROLE_KINDS, type RoleKind } from '../../../shared/roleKinds';
import type { FieldType, QueryFields, ScalarField, SetField } from '../query/compile';
import { scalar } from '../query/fields';
import { roleAttributesField } from '../query/roleFields';
import type { Row } from '../store/db';
import type { ColumnCodec, Decoded, Json, NullableJson, RowShape, Stored } from '../store/rows';
import { attributesSchema, tagsSchema } from './common';
import { declare, type ApiObject, type Codec, type ColumnSpec, type FilterRef, type RefSpec, type ResourceDef, type WriteOp } from './resource';

/**
 * One field of a resource type, stated once: its column, body schema, ZitiQL filter, PUT default and PATCH-null
 * rule. `defineResource` derives the columns, the filterable fields, the create/PUT/PATCH schemas and the null
 * rules from these, and types the hooks' input and rows.
 */
export interface FieldDef {
  codec: Codec;
  /** storage column; default: the field name in snake_case; false: a body-only field (for the hooks) */
  column?: string | false;
  /** the body schema of a non-null value; absent: read-only (never written from a body) */
  schema?: z.ZodType;
  /** true: create and PUT require it (null in a PATCH leaves it); 'create': only create requires it and PUT never resets it */
  required?: boolean | 'create';
  /** only create bodies carry it */
  createOnly?: boolean;
  /** bodies may send null, meaning `zero` */
  nullable?: boolean;
  /** what PUT gives the field when omitted and what null stands for; undefined: PUT leaves an omitted field */
  zero?: unknown;
  /** what an omitted field means in a PUT: 'zero' (the default where `zero` is given) or 'leave' (null still stands for `zero`) */
  putOmitted?: 'zero' | 'leave';
  /** what null means in a PATCH: 'zero' (the default for nullable fields) or 'leave' (the default otherwise) */
  patchNull?: 'leave' | 'zero';
  /** filterable and sortable in ZitiQL: true = a scalar of the codec's type over the column, or a field of its own */
  filter?: true | ScalarField | SetField;
  /** false: written from bodies but not shown (e.g. an identity's `type`, shown as a ref) */
  shown?: boolean;
  /** what the API shows while the column is NULL (ColumnSpec.whenNull) */
  whenNull?: unknown;
  /** the column is NOT NULL though bodies need not give it (read-only or defaulted): rows type it non-null */
  notNull?: true;
}

type Fields = Record<string, FieldDef>;

type Snake<S extends string> = S extends `${infer C}${infer R}` ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${Snake<R>}` : S;
type ColumnOf<K extends string, F extends FieldDef> = F['column'] extends string ? F['column'] : F['column'] extends false ? never : Snake<K>;
/** A field's column codec (store/rows.ts): nullable unless required or notNull; JSON typed by its body schema. */
type CodecOf<F extends FieldDef> = F['required'] extends true | 'create' ? Strict<F> : F['notNull'] extends true ? Strict<F> : Loose<F>;
type Strict<F extends FieldDef> = F['codec'] extends 'json' ? (F['schema'] extends z.ZodType<infer T> ? Json<T> : 'json') : F['codec'];
type Loose<F extends FieldDef> = F['codec'] extends 'json' ? (F['schema'] extends z.ZodType<infer T> ? NullableJson<T> : 'json?') : `${F['codec']}?`;

/** The row shape of a declared type's table: the common columns and each field's column by its codec. */
export type ShapeOf<F extends Fields> = { id: 'string'; created_at: 'datetime'; updated_at: 'datetime'; tags: Json<Record<string, unknown>> } & {
  [K in keyof F & string as ColumnOf<K, F[K]>]: CodecOf<F[K]>;
};

/** A row of a declared type as stored (what the hooks get): its declared columns typed, anything else (system columns) unknown. */
export type RowOf<F extends Fields> = Stored<ShapeOf<F>> & Row;
/** A row of a declared type decoded through its codecs (`decodeRow(def.shape, row)`). */
export type DecodedOf<F extends Fields> = Decoded<ShapeOf<F>>;

/** A declared type: its runtime declaration with its row shape typed. */
export type Declared<F extends Fields, K = undefined> = ResourceDef & { readonly shape: ShapeOf<F> & RoleShape<K> & RowShape };
/** The role_attributes column a role kind's declaration adds. */
type RoleShape<K> = [K] extends [RoleKind] ? { role_attributes: NullableJson<string[]> } : unknown;

/** A parsed write body: every writable field (null only where the PATCH-null rule keeps it), tags, roleAttributes. */
export type InputOf<F extends Fields> = {
  -readonly [K in keyof F as F[K]['schema'] extends z.ZodType ? K : never]?: F[K]['schema'] extends z.ZodType<infer T> ? T | null : never;
} & { tags?: Record<string, unknown> | null; roleAttributes?: string[] | null };

export interface ResourceDeclaration<F extends Fields> {
  entity: string;
  table: string;
  permission: ResourceDef['permission'];
  fields: F;
  /** entities with role attributes: adds `roleAttributes`, keeps role_attributes and the policy index in step */
  roleKind?: RoleKind;
  /** the rules of the implicit `tags` field, e.g. `{ putOmitted: 'leave' }` for a PUT that keeps omitted tags */
  tags?: Pick<FieldDef, 'putOmitted'>;
  /** filterable fields that are not fields of the body or the reply (aliases, computed values) */
  filters?: QueryFields;
  defaultSort?: string;
  refs?: Record<string, RefSpec>;
  /** references filters may follow beyond `refs` (which they always may), e.g. a terminator's router */
  filterRefs?: Record<string, FilterRef>;
  /** bodies whose shape depends on their content (e.g. a posture check's type): replace derived schemas */
  schemas?: Partial<ResourceDef['schemas']>;
  /** false: no create/update/patch bodies at all (read-only or written by the core only) */
  writable?: boolean;
  beforeWrite?(
    op: WriteOp,
    input: InputOf<F>,
    existing: RowOf<F> | undefined,
    ctx: Ctx,
  ): Promise<Record<string, unknown> | void> | Record<string, unknown> | void;
  /** After the write gate, in the transaction; `written`: the row as it is now. */
  afterWrite?(op: WriteOp, id: string, input: InputOf<F>, existing: RowOf<F> | undefined, ctx: Ctx, written: RowOf<F>): Promise<void> | void;
  beforeDelete?(row: RowOf<F>, ctx: Ctx): Promise<void> | void;
  afterDelete?(row: RowOf<F>, ctx: Ctx): Promise<void> | void;
  decorate?(items: ApiObject[], rows: RowOf<F>[], ctx: Ctx): Promise<void> | void;
  links?(row: RowOf<F>): Record<string, string>;
  associations?: ResourceDef['associations'];
  /** the migrations of this type's own tables (see store/migrations: one version sequence) */
  migrations?: ResourceDef['migrations'];
  handlers?: ResourceDef['handlers'];
}

const FILTER_TYPE: Partial<Record<Codec, FieldType>> = { string: 'string', int: 'number', bool: 'boolean', datetime: 'datetime' };
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** A column or URL segment as an API name: role_attributes → roleAttributes, edge-routers → edgeRouters. */
export const camelCase = (name: string) => name.replace(/[-_](\w)/g, (_m, c: string) => c.toUpperCase());

/** The implicit fields of every type (tags) and of types with role attributes. */
const TAGS: FieldDef = { codec: 'json', schema: tagsSchema, nullable: true, zero: {} };
const roleAttributes = (kind: RoleKind): FieldDef => ({
  codec: 'json',
  schema: attributesSchema.unwrap(),
  nullable: true,
  zero: [],
  filter: roleAttributesField(kind),
});

/** Derives a resource type's runtime declaration (`ResourceDef`) from its fields. */
export function defineResource<const F extends Fields, K extends RoleKind | undefined = undefined>(
  d: ResourceDeclaration<F> & { roleKind?: K },
): Declared<F, K> {
  if (d.roleKind && ROLE_KINDS[d.roleKind].table !== d.table) {
    throw new Error(`${d.entity}: role kind ${d.roleKind} lives in table ${ROLE_KINDS[d.roleKind].table}, not ${d.table}`);
  }
  const fields: Fields = { ...d.fields, ...(d.roleKind && { roleAttributes: roleAttributes(d.roleKind) }) };
  const columns: Record<string, ColumnSpec> = {};
  const shape: Record<string, ColumnCodec> = { id: 'string', created_at: 'datetime', updated_at: 'datetime', tags: 'json' };
  const filters: QueryFields = {};
  const create: Record<string, z.ZodType> = {};
  const update: Record<string, z.ZodType> = {};
  const patch: Record<string, z.ZodType> = {};
  for (const [name, f] of Object.entries(fields)) {
    const column = f.column === undefined ? snake(name) : f.column;
    if (column !== false) {
      columns[name] = {
        column,
        codec: f.codec,
        write: !!f.schema,
        ...(f.shown === false && { shown: false }),
        ...('whenNull' in f && { whenNull: f.whenNull }),
      };
      shape[column] = f.required || f.notNull ? f.codec : `${f.codec}?`;
      if (f.filter === true) filters[name] = scalar(FILTER_TYPE[f.codec]!, `t.${column}`);
    }
    if (f.filter && f.filter !== true) filters[name] = f.filter;
    if (!f.schema) continue;
    const given = f.nullable ? f.schema.nullable() : f.schema;
    create[name] = f.required ? given : given.optional();
    if (f.createOnly) continue;
    update[name] = f.required === true ? given : given.optional();
    patch[name] = f.schema.nullable().optional();
  }
  for (const r of Object.values(d.refs ?? {})) shape[r.column] ??= 'string?';
  const tags = TAGS.schema!.nullable().optional();
  const writable = d.writable !== false;
  const normalize = nullRules({ ...fields, tags: { ...TAGS, ...d.tags } });
  const { beforeWrite } = d;
  return declare({
    entity: d.entity,
    table: d.table,
    permission: d.permission,
    roleKind: d.roleKind,
    columns,
    shape,
    fields: { ...filters, ...d.filters },
    defaultSort: d.defaultSort,
    refs: d.refs,
    filterRefs: {
      ...Object.fromEntries(Object.entries(d.refs ?? {}).map(([name, r]) => [name, { column: r.column, entity: r.entity }])),
      ...d.filterRefs,
    },
    schemas: writable
      ? {
          create: z.object({ ...create, tags }),
          update: z.object({ ...update, tags }),
          patch: z.object({ ...patch, tags }),
          ...d.schemas,
        }
      : { ...d.schemas },
    async beforeWrite(op, input, existing, ctx) {
      normalize(op, input);
      return beforeWrite?.(op, input as InputOf<F>, existing as RowOf<F>, ctx);
    },
    afterWrite: d.afterWrite as ResourceDef['afterWrite'],
    beforeDelete: d.beforeDelete as ResourceDef['beforeDelete'],
    afterDelete: d.afterDelete as ResourceDef['afterDelete'],
    decorate: d.decorate as ResourceDef['decorate'],
    links: d.links as ResourceDef['links'],
    associations: d.associations,
    migrations: d.migrations,
    handlers: d.handlers,
  }) as Declared<F, K>;
}

/**
 * The null and PUT rules of a type's fields as one function over a parsed body: null stands for the zero value
 * (or, in a PATCH of a required or non-nullable field, for "leave it"); PUT gives omitted optional fields their zero
 * (unless they say `putOmitted: 'leave'`).
 */
function nullRules(fields: Fields): (op: WriteOp, input: Record<string, unknown>) => void {
  const writable = Object.entries(fields).filter(([, f]) => f.schema);
  return (op, input) => {
    for (const [name, f] of writable) {
      const v = input[name];
      if (v === null) {
        const leave = op === 'patch' ? (f.patchNull ?? (f.required || !f.nullable ? 'leave' : 'zero')) === 'leave' : f.zero === undefined;
        if (leave) delete input[name];
        else input[name] = f.zero;
      } else if (v === undefined && op === 'update' && !f.required && !f.createOnly && f.zero !== undefined && f.putOmitted !== 'leave') {
        input[name] = f.zero;
      }
    }
  };
}
