/**
 * Compiles ZitiQL (see ./zitiql) to an SQL WHERE expression plus ORDER BY / OFFSET / LIMIT parts, for the store whose
 * helpers (`sql`) it is given.
 *
 * Safety: field names only ever map through `QueryFields` (own properties), tag keys are validated identifiers,
 * and every literal goes into `params`; no filter text reaches the SQL.
 *
 * Null semantics follow OpenZiti: a comparison with a missing value is false, and negations (`!=`, `not ...`)
 * are its complement, so `name != "x"` and `not name = "x"` both match rows whose name is NULL. In SQL this
 * means positive predicates may yield NULL (treated as false) and every negation is `sql.notTrue(p)` (SQLite's
 * `NOT coalesce(p, 0)`).
 */
import { SQLITE_SQL, type SqlDialect } from '../store/sqlDialect';
import { parseZitiQl, QueryError, type BoolExpr, type Literal } from './zitiql';

export { QueryError } from './zitiql';

export type FieldType = 'string' | 'number' | 'boolean' | 'datetime';

/** A single-valued field. `sql` is an SQL expression over the main table aliased `t`, e.g. "t.name". */
export interface ScalarField {
  kind: 'scalar';
  type: FieldType;
  sql: string;
  sortable?: boolean /* default true */;
  /** a trigram index over this (string) column that `contains` / `icontains` may use (core/query/textIndex.ts) */
  text?: TextIndex;
}

/**
 * An FTS5 trigram table (case-folding, external content) indexing a column: `fts MATCH '{column} : "needle"'`
 * yields the rowids (`rowid` is the SQL of the main row's rowid) of every row whose folded value holds the folded
 * needle, a superset of `contains` and `icontains` matches, which are then re-checked exactly.
 */
export interface TextIndex {
  fts: string;
  column: string;
  rowid: string;
}

/** Where the values of a set field live. All SQL here is trusted (written by code, never by users). */
export type SetSource =
  /** rows `(ownerColumn, valueColumn)` of `table`, restricted by `where`; `rowId` is the main row's id expression */
  | { kind: 'table'; table: string; ownerColumn: string; valueColumn: string; where?: string; rowId: string }
  /** a column (expression) holding a JSON array of values */
  | { kind: 'json'; columnSql: string };

/** A multi-valued field (e.g. roleAttributes); build it with setFromTable() or setFromJsonArray(). */
export interface SetField {
  kind: 'set';
  /** type of each element */
  type: FieldType;
  source: SetSource;
}

export type QueryFields = Record<string, ScalarField | SetField>;

/**
 * A reference to rows of other types (`fk`: the SQL of the referencing column over the main row, alias `t`): a
 * field `<ref>.<field>` (and `<ref>.<ref>.<field>` …) compares the referenced row's field, as OpenZiti resolves
 * `service.name` or `apiSession.identity.name`. Compiled to `fk IN (SELECT id FROM target WHERE …)`, so the
 * target's indexes serve it and rows are still paged by the main query.
 */
export interface RefTarget {
  fk: string;
  /** the types it may point into (a terminator's router is an edge router or a transit router) */
  targets: ReadonlyArray<{ table: string; fields: QueryFields; tagsSql?: string; refs?: (name: string) => RefTarget | undefined }>;
}

/** One key of a structured sort: a field name as ZitiQL's `sort by` takes it (including `tags.<key>`). */
export interface SortKey {
  field: string;
  dir: 'asc' | 'desc';
}

export interface CompileOptions {
  /** the store's SQL helpers (`store.sql`); default: SQLite's */
  sql?: SqlDialect;
  /** SQL expression of a JSON object column holding tags, e.g. "t.tags"; enables `tags.<key>`. */
  tagsSql?: string;
  /**
   * Whether to use a field's trigram index for a needle (of at least 3 characters, which the index needs): false for a
   * scan, true to match the whole needle, or the needle's trigrams to match (the rarest few: candidates are re-checked
   * with the exact predicate, and a long needle's common trigrams would cost more than they narrow). Default: true. A
   * store-backed chooser (textIndex.ts) scans for needles most rows contain and picks the rarest trigrams otherwise.
   */
  useTextIndex?: (index: TextIndex, needle: string) => boolean | readonly string[];
  /** The sort when the filter has no `sort by` of its own (which wins); validated like `sort by`. */
  sort?: SortKey[];
  /** The references `<name>.<field>` may follow (none: no such fields). */
  refs?: (name: string) => RefTarget | undefined;
}

export interface CompiledQuery {
  /** SQL boolean expression ("1=1" when no condition); only `?` placeholders for values */
  where: string;
  /** positional values for the `?`s, in order (booleans as 1/0, datetimes as ISO strings) */
  params: unknown[];
  /** from `sort by`, else from the `sort` option; empty when neither (ORDER BY items: `store.sql.orderBy`) */
  sort: Array<{ sql: string; dir: 'ASC' | 'DESC' }>;
  skip?: number;
  limit?: number | 'none';
}

const SQL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A set field backed by a side table, compiled to uncorrelated `rowId IN (SELECT ownerColumn FROM table WHERE ...)`
 * subqueries so an index on (…where columns, valueColumn, ownerColumn) serves anyOf/allOf lookups.
 * e.g. setFromTable({ table: 'role_attributes', ownerColumn: 'entity_id', valueColumn: 'attr',
 *                     where: "entity_type = 'identity'" })
 * `ownerColumn` values must not be NULL. `rowId` defaults to "t.id"; `type` (of the elements) to 'string'.
 */
export function setFromTable(opts: {
  table: string;
  ownerColumn: string;
  valueColumn: string;
  where?: string;
  rowId?: string;
  type?: FieldType;
}): SetField {
  for (const name of [opts.table, opts.ownerColumn, opts.valueColumn]) {
    if (!SQL_NAME.test(name)) throw new Error(`setFromTable: invalid SQL name ${JSON.stringify(name)}`);
  }
  const { table, ownerColumn, valueColumn, where, rowId = 't.id', type = 'string' } = opts;
  return { kind: 'set', type, source: { kind: 'table', table, ownerColumn, valueColumn, where, rowId } };
}

/** A set field stored as a JSON array in a column of the main table, e.g. setFromJsonArray('t.role_attributes'). */
export function setFromJsonArray(columnSql: string, type: FieldType = 'string'): SetField {
  return { kind: 'set', type, source: { kind: 'json', columnSql } };
}

/** Parses and compiles a ZitiQL filter. Blank or absent filters match everything. Throws QueryError. */
export function compileFilter(filter: string | undefined, fields: QueryFields, options: CompileOptions = {}): CompiledQuery {
  const q = parseZitiQl(filter ?? '');
  const c = new Compiler(fields, options);
  const where = q.filter ? c.expr(q.filter) : sql('1=1');
  const sort = q.sort.length
    ? q.sort.map((s) => ({ sql: c.sortSql(s.field, s.pos), dir: s.dir }))
    : (options.sort ?? []).map((s) => ({ sql: c.sortSql(s.field), dir: s.dir === 'desc' ? ('DESC' as const) : ('ASC' as const) }));
  return {
    where: where.sql,
    params: where.params,
    sort,
    ...(q.skip !== undefined && { skip: q.skip }),
    ...(q.limit !== undefined && { limit: q.limit }),
  };
}

// ---- internals ------------------------------------------------------------------------------------

interface Sql {
  sql: string;
  params: unknown[];
}
const sql = (text: string, ...params: unknown[]): Sql => ({ sql: text, params });
/** Concatenates fragments and literal SQL text, keeping params in order. */
function cat(...parts: Array<Sql | string>): Sql {
  const out = sql('');
  for (const p of parts) {
    if (typeof p === 'string') out.sql += p;
    else {
      out.sql += p.sql;
      for (const v of p.params) out.params.push(v);
    }
  }
  return out;
}

function joinBalanced(parts: Sql[], op: string): Sql {
  if (parts.length === 1) return parts[0]!;
  const mid = parts.length >> 1;
  return cat('(', joinBalanced(parts.slice(0, mid), op), op, joinBalanced(parts.slice(mid), op), ')');
}
/** Longer `in` lists travel as one JSON parameter (SQLite limits the number of parameters of a statement). */
const IN_LIST_PARAMS = 50;

type Comparison = Extract<BoolExpr, { kind: 'compare' | 'in' | 'between' }>;
type Resolved =
  | { kind: 'scalar'; field: ScalarField }
  | { kind: 'set'; field: SetField }
  | { kind: 'tag'; key: string }
  | { kind: 'ref'; ref: RefTarget; rest: string };

/** References followed at most this deep (a.b.c.d.field). */
const MAX_REF_DEPTH = 4;

const LITERAL_KIND: Record<FieldType, Literal['kind']> = { string: 'string', number: 'number', boolean: 'bool', datetime: 'datetime' };
const ORDERING = new Set(['<', '<=', '>', '>=']);

function param(lit: Literal): unknown {
  switch (lit.kind) {
    case 'bool':
      return lit.value ? 1 : 0;
    case 'null':
      return null;
    default:
      return lit.value;
  }
}

class Compiler {
  private readonly d: SqlDialect;

  constructor(
    private readonly fields: QueryFields,
    private readonly options: CompileOptions,
    /** how many references deep this compiler is (its main row is aliased r<depth>, or t at 0) */
    private readonly depth = 0,
  ) {
    this.d = options.sql ?? SQLITE_SQL;
  }

  /** `p` is false or NULL */
  private negate(p: Sql): Sql {
    return sql(this.d.notTrue(p.sql), ...p.params);
  }

  resolve(name: string, pos?: number): Resolved {
    if (Object.prototype.hasOwnProperty.call(this.fields, name)) {
      const field = this.fields[name];
      return field.kind === 'set' ? { kind: 'set', field } : { kind: 'scalar', field };
    }
    if (this.options.tagsSql && name.startsWith('tags.')) {
      const key = name.slice(5);
      // already guaranteed by the lexer; re-checked because the key is inlined into a JSON path literal
      if (/^[A-Za-z0-9_.-]+$/.test(key)) return { kind: 'tag', key };
    }
    const dot = name.indexOf('.');
    const ref = dot > 0 && this.depth < MAX_REF_DEPTH ? this.options.refs?.(name.slice(0, dot)) : undefined;
    if (ref) return { kind: 'ref', ref, rest: name.slice(dot + 1) };
    throw new QueryError(`unknown field "${name}"`, pos);
  }

  /** A compiler for the rows a reference points into, aliased one level deeper. */
  private inside(target: RefTarget['targets'][number]): { compiler: Compiler; alias: string } {
    const alias = `r${this.depth + 1}`;
    const options: CompileOptions = {
      sql: this.d,
      ...(target.tagsSql ? { tagsSql: aliased(target.tagsSql, alias) } : {}),
      ...(this.options.useTextIndex ? { useTextIndex: this.options.useTextIndex } : {}),
      ...(target.refs ? { refs: (n: string) => aliasedRef(target.refs!(n), alias) } : {}),
    };
    return { compiler: new Compiler(aliasedFields(target.fields, alias), options, this.depth + 1), alias };
  }

  /** A condition on a referenced row (`node` names the field without the reference): the rows whose reference holds it. */
  private viaRef(ref: RefTarget, node: BoolExpr): Sql {
    const selects = ref.targets.map((target) => {
      const { compiler, alias } = this.inside(target);
      return cat(`SELECT ${alias}.id FROM ${target.table} ${alias} WHERE `, compiler.expr(node));
    });
    return cat(`${ref.fk} IN (`, ...selects.flatMap((s, i) => (i ? [' UNION ALL ', s] : [s])), ')');
  }

  /** SQL of a sort key: a sortable scalar field, a tag, or such a field of a referenced row. */
  sortSql(name: string, pos?: number): string {
    const r = this.resolve(name, pos);
    if (r.kind === 'ref') {
      const values = r.ref.targets.map((target) => {
        const { compiler, alias } = this.inside(target);
        return `(SELECT ${compiler.sortSql(r.rest, pos)} FROM ${target.table} ${alias} WHERE ${alias}.id = ${r.ref.fk})`;
      });
      return values.length === 1 ? values[0]! : `coalesce(${values.join(', ')})`;
    }
    if (r.kind === 'tag') return this.tagValue(r.key);
    if (r.kind === 'set') throw new QueryError(`cannot sort by set field "${name}"`, pos);
    if (r.field.sortable === false) throw new QueryError(`field "${name}" is not sortable`, pos);
    return r.field.sql;
  }

  /** SQL of a tag's value; the path is inlined (not a param) so expression indexes on it can be used. */
  tagValue(key: string, number = false): string {
    return (number ? this.d.jsonNumber : this.d.jsonExtract)(this.options.tagsSql!, `$."${key}"`);
  }
  private tagType(key: string): string {
    return this.d.jsonType(this.options.tagsSql!, `$."${key}"`);
  }

  expr(e: BoolExpr): Sql {
    switch (e.kind) {
      case 'and':
      case 'or': {
        // a chain of one operator (thousands of terms in a long filter) is compiled in a loop and joined as a
        // balanced tree, so neither this recursion nor SQLite's expression depth grows with its length
        const terms: Sql[] = [];
        let cur: BoolExpr = e;
        while (cur.kind === e.kind) {
          terms.push(this.expr(cur.left));
          cur = cur.right;
        }
        terms.push(this.expr(cur));
        return joinBalanced(terms, ` ${e.kind.toUpperCase()} `);
      }
      case 'not':
        return this.negate(this.expr(e.expr));
      case 'const':
        return sql(e.value ? '1=1' : '1=0');
      case 'symbol': {
        const r = this.resolve(e.name, e.pos);
        if (r.kind === 'ref') return this.viaRef(r.ref, { ...e, name: r.rest });
        if (r.kind === 'tag') return sql(`${this.tagType(r.key)} = 'true'`);
        if (r.kind === 'scalar' && r.field.type === 'boolean') return sql(`${r.field.sql} = 1`);
        const what = r.kind === 'set' ? 'a set field' : `a ${r.field.type} field`;
        throw new QueryError(`"${e.name}" is ${what}, not a condition; compare it with a value`, e.pos);
      }
      case 'isEmpty': {
        const r = this.resolve(e.field, e.pos);
        if (r.kind === 'ref') return this.viaRef(r.ref, { ...e, field: r.rest });
        return this.isEmpty(this.setField(e.field, e.pos, 'isEmpty'));
      }
      default:
        return this.comparison(e);
    }
  }

  private setField(name: string, pos: number, fn: string): SetField {
    const r = this.resolve(name, pos);
    if (r.kind !== 'set') throw new QueryError(`${fn}() needs a set field, but "${name}" is not one`, pos);
    return r.field;
  }

  private comparison(e: Comparison): Sql {
    const lhs = e.lhs;
    if (lhs.kind === 'setFn') {
      const r = this.resolve(lhs.field, lhs.pos);
      if (r.kind === 'ref') return this.viaRef(r.ref, { ...e, lhs: { ...lhs, field: r.rest } });
      const set = this.setField(lhs.field, lhs.pos, lhs.fn);
      rejectNull(e, `${lhs.fn}(${lhs.field})`);
      if (lhs.fn === 'count') return this.count(set, e, `count(${lhs.field})`);
      const pred = (value: string) => predicate(this.d, value, set.type, e, `elements of "${lhs.field}"`);
      return lhs.fn === 'anyOf' ? this.anyOf(set, pred) : this.allOf(set, pred);
    }
    const r = this.resolve(lhs.name, lhs.pos);
    if (r.kind === 'ref') return this.viaRef(r.ref, { ...e, lhs: { ...lhs, name: r.rest } });
    if (r.kind === 'set') {
      throw new QueryError(`"${lhs.name}" is a set field; use anyOf(), allOf(), count() or isEmpty()`, lhs.pos);
    }
    const nullTest = e.kind === 'compare' && e.value.kind === 'null' ? (e.op === '=' ? ' IS NULL' : ' IS NOT NULL') : undefined;
    if (r.kind === 'scalar') {
      if (nullTest) return sql(r.field.sql + nullTest);
      return this.indexedContains(r.field, e) ?? predicate(this.d, r.field.sql, r.field.type, e, `field "${lhs.name}"`);
    }
    const value = this.tagValue(r.key);
    if (nullTest) return sql(value + nullTest);
    return this.tagComparison(r.key, value, e, lhs.name);
  }

  /**
   * `contains` / `icontains` on an indexed field: the index narrows the rows to its candidates, the exact predicate
   * decides (so case rules, NULLs and every character mean what they mean without the index). Negations are not
   * narrowed (they hold for most rows). Needles under 3 characters have no trigram: undefined, a scan. SQLite: the
   * field's FTS5 table through `rowid IN (… MATCH …)`; PostgreSQL: a LIKE / ILIKE its pg_trgm index serves.
   */
  private indexedContains(field: ScalarField, e: Comparison): Sql | undefined {
    if (!field.text || e.kind !== 'compare' || (e.op !== 'contains' && e.op !== 'icontains')) return undefined;
    const needle = e.value.kind === 'number' ? e.value.text : e.value.kind === 'string' ? e.value.value : undefined;
    if (needle === undefined || [...needle].length < 3) return undefined;
    const ix = field.text;
    const use = this.options.useTextIndex ? this.options.useTextIndex(ix, needle) : true;
    if (use === false || (use !== true && !use.length)) return undefined;
    if (this.d.name === 'postgres') {
      // pg_trgm's GIN index on the column (migration 018) serves LIKE / ILIKE with the needle's own %, _ and \ escaped
      const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      return cat(
        `(${field.sql} ${e.op === 'icontains' ? 'ILIKE' : 'LIKE'} ? ESCAPE '\\' AND `,
        sql('', pattern),
        predicate(this.d, field.sql, field.type, e, ''),
        ')',
      );
    }
    if (!SQL_NAME.test(ix.fts) || !SQL_NAME.test(ix.column)) throw new Error(`invalid text index ${ix.fts}.${ix.column}`);
    const phrase = (text: string) => `"${text.replace(/"/g, '""')}"`;
    const match = `{${ix.column}} : ${use === true ? phrase(needle) : `(${use.map(phrase).join(' AND ')})`}`;
    return cat(
      `(${ix.rowid} IN (SELECT rowid FROM ${ix.fts} WHERE ${ix.fts} MATCH ?) AND `,
      sql('', match),
      predicate(this.d, field.sql, field.type, e, ''),
      ')',
    );
  }

  /** Tags are untyped: the literal picks the comparison, and json_type() keeps e.g. `true` from matching 1. */
  private tagComparison(key: string, value: string, e: Comparison, name: string): Sql {
    const lit = e.kind === 'compare' ? e.value : e.kind === 'in' ? e.values[0] : e.lower;
    const jsonType = this.tagType(key);
    const negated = e.kind === 'compare' && (e.op === '!=' || e.op.startsWith('not '));
    const positive: Comparison = negated ? { ...e, op: e.op === '!=' ? '=' : (e.op.slice(4) as 'contains' | 'icontains') } : e;
    let guarded: Sql;
    if (lit.kind === 'bool') {
      guarded = sql(`${jsonType} = ?`, lit.value ? 'true' : 'false');
    } else if (lit.kind === 'datetime') {
      throw new QueryError(`tags cannot be compared with datetimes`, lit.pos);
    } else {
      const contains = positive.kind === 'compare' && positive.op.endsWith('contains');
      const guard = contains ? "('text', 'integer', 'real')" : lit.kind === 'string' ? "('text')" : "('integer', 'real')";
      const type = contains ? 'string' : lit.kind === 'string' ? 'string' : 'number';
      // a number is compared as one (as text, '10' < '9')
      const tag = type === 'number' ? this.tagValue(key, true) : value;
      guarded = cat(`(${jsonType} IN ${guard} AND `, predicate(this.d, tag, type, positive, `tag "${name}"`), ')');
    }
    return negated ? this.negate(guarded) : guarded;
  }

  private anyOf(set: SetField, pred: (value: string) => Sql): Sql {
    const s = set.source;
    if (s.kind === 'json') return cat(`EXISTS (SELECT 1 FROM ${this.d.jsonEach(s.columnSql, 'je')} WHERE `, pred('je.value'), ')');
    return cat(`${s.rowId} IN (`, this.ownersWhere(s, pred(s.valueColumn)), ')');
  }

  /** Non-empty, and no element fails the predicate. */
  private allOf(set: SetField, pred: (value: string) => Sql): Sql {
    const s = set.source;
    if (s.kind === 'json') {
      return cat(
        `(${this.d.jsonArrayLength(s.columnSql)} > 0 AND NOT EXISTS (SELECT 1 FROM ${this.d.jsonEach(s.columnSql, 'je')} WHERE `,
        this.negate(pred('je.value')),
        '))',
      );
    }
    // one grouped scan: owners (so non-empty) none of whose values fails the predicate
    const p = pred(s.valueColumn);
    return cat(
      `${s.rowId} IN (`,
      this.ownersWhere(s),
      ` GROUP BY ${s.ownerColumn} HAVING min(coalesce(`,
      sql(this.d.asInt(p.sql), ...p.params),
      ', 0)) = 1)',
    );
  }

  private isEmpty(set: SetField): Sql {
    const s = set.source;
    if (s.kind === 'json') return sql(`coalesce(${this.d.jsonArrayLength(s.columnSql)}, 0) = 0`);
    return cat(`${s.rowId} NOT IN (`, this.ownersWhere(s), ')');
  }

  private count(set: SetField, e: Comparison, desc: string): Sql {
    const s = set.source;
    if (s.kind === 'json') return predicate(this.d, `coalesce(${this.d.jsonArrayLength(s.columnSql)}, 0)`, 'number', e, desc);
    // Owners with a matching count, found by one grouped scan; owners with no rows at all have count 0,
    // so they are added when the condition holds for 0.
    const grouped = cat(
      `${s.rowId} IN (`,
      this.ownersWhere(s),
      ` GROUP BY ${s.ownerColumn} HAVING `,
      predicate(this.d, 'count(*)', 'number', e, desc),
      ')',
    );
    return holdsForZero(e) ? cat(`(${s.rowId} NOT IN (`, this.ownersWhere(s), ') OR ', grouped, ')') : grouped;
  }

  /** `SELECT owner FROM table WHERE <source where> AND <cond>` */
  private ownersWhere(s: Extract<SetSource, { kind: 'table' }>, cond?: Sql): Sql {
    const select = `SELECT ${s.ownerColumn} FROM ${s.table}`;
    if (!cond) return sql(s.where ? `${select} WHERE (${s.where})` : select);
    return cat(`${select} WHERE `, s.where ? `(${s.where}) AND ` : '', cond);
  }
}

/** SQL written over the main row's alias `t`, moved onto `alias` (the fields' SQL is the code's own, never a user's). */
const aliased = (text: string, alias: string): string => text.replace(/\bt\./g, `${alias}.`);

function aliasedFields(fields: QueryFields, alias: string): QueryFields {
  const out: QueryFields = {};
  for (const [name, f] of Object.entries(fields)) {
    if (f.kind === 'scalar') {
      out[name] = { ...f, sql: aliased(f.sql, alias), ...(f.text ? { text: { ...f.text, rowid: aliased(f.text.rowid, alias) } } : {}) };
    } else {
      const s = f.source;
      out[name] = {
        ...f,
        source: s.kind === 'json' ? { kind: 'json', columnSql: aliased(s.columnSql, alias) } : { ...s, rowId: aliased(s.rowId, alias) },
      };
    }
  }
  return out;
}

function aliasedRef(ref: RefTarget | undefined, alias: string): RefTarget | undefined {
  return ref && { ...ref, fk: aliased(ref.fk, alias) };
}

function rejectNull(e: Comparison, what: string): void {
  if (e.kind === 'compare' && e.value.kind === 'null') throw new QueryError(`${what} cannot be compared with null`, e.value.pos);
}

/** SQL for comparing the value expression `x` (of `type`) per a non-null comparison node. */
function predicate(d: SqlDialect, x: string, type: FieldType, e: Comparison, desc: string): Sql {
  const check = (lit: Literal) => {
    if (lit.kind !== LITERAL_KIND[type]) {
      throw new QueryError(
        `${desc} ${type === 'boolean' ? 'is' : 'is a'} ${type} and cannot be compared with a ${lit.kind === 'bool' ? 'boolean' : lit.kind}`,
        lit.pos,
      );
    }
    return param(lit);
  };
  if (e.kind === 'in') {
    const values = e.values.map(check);
    if (values.length > IN_LIST_PARAMS) {
      return sql(`${x} IN ${d.jsonValues('?', type === 'number' || type === 'boolean' ? 'number' : 'text')}`, JSON.stringify(values));
    }
    return sql(`${x} IN (${values.map(() => '?').join(', ')})`, ...values);
  }
  if (e.kind === 'between') {
    if (type !== 'number' && type !== 'datetime') throw new QueryError(`between needs a number or datetime, but ${desc} is ${type}`, e.lower.pos);
    // OpenZiti's between includes the lower bound and excludes the upper one.
    return sql(`(${x} >= ? AND ${x} < ?)`, check(e.lower), check(e.upper));
  }
  const { op, value } = e;
  if (op.endsWith('contains')) {
    if (type !== 'string') throw new QueryError(`${op} needs a string, but ${desc} is ${type}`, value.pos);
    const needle = value.kind === 'number' ? value.text : check(value);
    const found = op.endsWith('icontains') ? d.instr(`lower(${x})`, 'lower(?)') : d.instr(x, '?');
    return sql(op.startsWith('not ') ? `coalesce(${found}, 0) = 0` : `${found} > 0`, needle);
  }
  if (ORDERING.has(op) && type === 'boolean') throw new QueryError(`${desc} is boolean and only supports = and !=`, value.pos);
  const v = check(value);
  return sql(op === '!=' ? `${x} IS DISTINCT FROM ?` : `${x} ${op} ?`, v);
}

/** Whether a count comparison (positive form; `not in`/`not between` are wrapped by `not`) holds for 0. */
function holdsForZero(e: Comparison): boolean {
  const num = (lit: Literal) => (lit.kind === 'number' ? lit.value : NaN);
  if (e.kind === 'in') return e.values.some((v) => num(v) === 0);
  if (e.kind === 'between') return num(e.lower) <= 0 && 0 < num(e.upper);
  const n = num(e.value);
  switch (e.op) {
    case '=':
      return n === 0;
    case '!=':
      return n !== 0;
    case '<':
      return 0 < n;
    case '<=':
      return 0 <= n;
    case '>':
      return 0 > n;
    case '>=':
      return 0 >= n;
    default:
      return false;
  }
}
