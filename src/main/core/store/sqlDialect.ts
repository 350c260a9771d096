/**
 * The few constructs whose SQL differs between the stores, as named helpers: `store.sql` is its store's, and code
 * writes everything else in the SQL both accept (the PostgreSQL store only numbers the `?` parameters). Each helper
 * returns SQL text to put into a statement; its arguments are SQL expressions (trusted: the code's own, never a
 * user's). SQLite's are the constructs as SQLite writes them; PostgreSQL's give the same results there.
 */
export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * `(SELECT value FROM …)`: the elements of a JSON array (a parameter by default), for `x IN ${…}`; `integer` when
   * `x` is an integer column, `number` when it is any number (PostgreSQL compares no text with numbers)
   */
  jsonValues(json?: string, type?: 'text' | 'integer' | 'number'): string;
  /**
   * A FROM item: the elements of a JSON array as rows of one column `value` (text on PostgreSQL: strings unquoted,
   * objects and arrays as JSON text), under `alias`; a scalar is one element, an object's members are its values.
   * `path` ('$.a.b') picks the array inside the JSON first.
   */
  jsonEach(json: string, alias: string, path?: string): string;
  /** the value at `path` ('$.a', '$."b.c"', '$[0]') of JSON text (SQLite: typed as stored; PostgreSQL: as text) */
  jsonExtract(json: string, path: string): string;
  /** the value at `path`, compared as a number (where json_type says it is one) */
  jsonNumber(json: string, path: string): string;
  /** SQLite's json_type at `path`: 'text', 'integer', 'real', 'true', 'false', 'null', 'object', 'array' or NULL */
  jsonType(json: string, path: string): string;
  /** a JSON object as text from `key → SQL expression` pairs (e.g. a trigger's `NEW.id`) */
  jsonObject(members: Readonly<Record<string, string>>): string;
  /** the length of a JSON array (0 for other JSON values, NULL for NULL) */
  jsonArrayLength(json: string): string;
  /** a condition: the text is well-formed JSON */
  jsonValid(text: string): string;
  /** the 1-based position of `needle` in `text` (0: absent), case-sensitive */
  instr(text: string, needle: string): string;
  /** a condition: `text` matches the LIKE pattern, case-insensitively (ASCII), with `escape` (one character) or none */
  like(text: string, pattern: string, escape?: string): string;
  /** a condition: `cond` is false or NULL */
  notTrue(cond: string): string;
  /** a condition (a comparison) as the integer 1 or 0, for sum() and the like */
  asInt(cond: string): string;
  /** the current time as ISO 8601 text in UTC with milliseconds (what the code writes: `Date#toISOString`) */
  now(): string;
  /**
   * An ORDER BY item placing NULLs as SQLite does (first ascending, last descending). `table`: the table `expr`'s
   * column belongs to, if it is one: a NOT NULL column is left as it is, so its indexes still give the order.
   */
  orderBy(expr: string, dir: 'ASC' | 'DESC', table?: string): string;
}

export const SQLITE_SQL: SqlDialect = Object.freeze<SqlDialect>({
  name: 'sqlite',
  jsonValues: (json = '?') => `(SELECT value FROM json_each(${json}))`,
  jsonEach: (json, alias, path) => `json_each(${json}${path ? `, ${literal(path)}` : ''}) AS ${alias}`,
  jsonExtract: (json, path) => `json_extract(${json}, ${literal(path)})`,
  jsonNumber: (json, path) => `json_extract(${json}, ${literal(path)})`,
  jsonType: (json, path) => `json_type(${json}, ${literal(path)})`,
  jsonArrayLength: (json) => `json_array_length(${json})`,
  jsonObject: (members) => `json_object(${pairs(members)})`,
  jsonValid: (text) => `json_valid(${text})`,
  instr: (text, needle) => `instr(${text}, ${needle})`,
  like: (text, pattern, escape) => `${text} LIKE ${pattern}${escape ? ` ESCAPE ${literal(escape)}` : ''}`,
  notTrue: (cond) => `NOT coalesce(${cond}, 0)`,
  asInt: (cond) => cond,
  now: () => `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
  orderBy: (expr, dir) => `${expr} ${dir}`,
});

/**
 * PostgreSQL's: JSON is stored as text and read as `json` (not jsonb: it keeps the text as stored, so an object read
 * out of it is the same text SQLite gives); the weft_* functions are POSTGRES_HELPERS. `notNull(table)`: the NOT NULL
 * columns of a table, as far as the store knows them (undefined: not known, NULLs are placed explicitly).
 */
export function postgresSql(notNull: (table: string) => ReadonlySet<string> | undefined): SqlDialect {
  return {
    name: 'postgres',
    jsonValues: (json = '?', type = 'text') =>
      `(SELECT value${{ text: '', integer: '::bigint', number: '::numeric' }[type]} FROM json_array_elements_text(${asJson(json)}) AS e(value))`,
    jsonEach: (json, alias, path) =>
      `json_array_elements_text(weft_json_elements(${asJson(json)}${path ? ` #> ${pgPath(path)}` : ''})) AS ${alias}(value)`,
    jsonExtract: (json, path) => `(${asJson(json)} #>> ${pgPath(path)})`,
    jsonNumber: (json, path) => `weft_json_number(${asText(json)}, ${pgPath(path)})`,
    jsonType: (json, path) => `weft_json_type(${asText(json)}, ${pgPath(path)})`,
    jsonArrayLength: (json) => `weft_json_array_length(${asText(json)})`,
    jsonObject: (members) => `CAST(json_build_object(${pairs(members)}) AS text)`,
    jsonValid: (text) => `(weft_json_valid(${asText(text)}) <> 0)`,
    instr: (text, needle) => `strpos(${text}, ${needle})`,
    // PostgreSQL's LIKE escapes with a backslash unless told otherwise; SQLite's has no escape character
    like: (text, pattern, escape) => `${text} ILIKE ${pattern} ESCAPE ${literal(escape ?? '')}`,
    notTrue: (cond) => `NOT coalesce(${cond}, false)`,
    asInt: (cond) => `(${cond})::int`,
    now: () => `to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
    orderBy: (expr, dir, table) => {
      const column = /^(?:\w+\.)?"?(\w+)"?$/.exec(expr)?.[1];
      if (table && column && notNull(table)?.has(column)) return `${expr} ${dir}`;
      return `${expr} ${dir} ${dir === 'ASC' ? 'NULLS FIRST' : 'NULLS LAST'}`;
    },
  };
}

const literal = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const pairs = (members: Readonly<Record<string, string>>): string =>
  Object.entries(members)
    .map(([k, v]) => `${literal(k)}, ${v}`)
    .join(', ');
/** A parameter typed (PostgreSQL cannot infer it inside these calls), anything else cast. */
const asJson = (json: string): string => (json === '?' ? 'CAST(? AS json)' : `(${json})::json`);
const asText = (json: string): string => (json === '?' ? 'CAST(? AS text)' : json);

/** `'$.a."b.c"[0]'` → `'{a,"b.c",0}'` (a path for #> and #>>). */
function pgPath(path: string): string {
  if (!path.startsWith('$')) throw new Error(`bad JSON path ${path}`);
  const parts: string[] = [];
  const re = /\.("((?:[^"]|"")*)"|[^.[]+)|\[(\d+)\]/y;
  re.lastIndex = 1;
  while (re.lastIndex < path.length) {
    const m = re.exec(path);
    if (!m) throw new Error(`unsupported JSON path ${path}`);
    parts.push(m[3] ?? m[2] ?? m[1]!);
  }
  return literal(`{${parts.map((p) => `"${p.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`);
}

/**
 * The functions PostgreSQL's helpers call (created by every translated migration script and at start-up: idempotent,
 * so a database migrated by an older Weft gets the helpers added since).
 */
export const POSTGRES_HELPERS = `
CREATE OR REPLACE FUNCTION weft_json_typeof(v json) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE json_typeof(v)
    WHEN 'string' THEN 'text'
    WHEN 'number' THEN CASE WHEN v::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
    WHEN 'boolean' THEN v::text
    ELSE json_typeof(v) END
$$;
CREATE OR REPLACE FUNCTION weft_json_type(j text, path text[]) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT weft_json_typeof(j::json #> path)
$$;
CREATE OR REPLACE FUNCTION weft_json_number(j text, path text[]) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN json_typeof(j::json #> path) = 'number' THEN (j::json #>> path)::numeric END
$$;
CREATE OR REPLACE FUNCTION weft_json_elements(j json) RETURNS json LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN j IS NULL THEN NULL
    WHEN json_typeof(j) = 'array' THEN j
    WHEN json_typeof(j) = 'object' THEN (SELECT coalesce(json_agg(value), '[]'::json) FROM json_each(j))
    ELSE json_build_array(j) END
$$;
CREATE OR REPLACE FUNCTION weft_json_array_length(j text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN j IS NULL THEN NULL WHEN json_typeof(j::json) = 'array' THEN json_array_length(j::json) ELSE 0 END
$$;
CREATE OR REPLACE FUNCTION weft_json_valid(j text) RETURNS integer LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  IF j IS NULL THEN RETURN NULL; END IF;
  PERFORM j::json;
  RETURN 1;
EXCEPTION WHEN others THEN
  RETURN 0;
END
$$;
`;
