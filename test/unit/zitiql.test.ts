import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compileFilter,
  QueryError,
  setFromJsonArray,
  setFromTable,
  type CompiledQuery,
  type QueryFields,
  type RefTarget,
} from '../../src/main/core/query/compile';
import { pageQuery } from '../../src/main/core/query/list';
import { scalar } from '../../src/main/core/query/fields';
import { parseZitiQl } from '../../src/main/core/query/zitiql';

const fields: QueryFields = {
  id: { kind: 'scalar', type: 'string', sql: 't.id' },
  name: { kind: 'scalar', type: 'string', sql: 't.name' },
  cost: { kind: 'scalar', type: 'number', sql: 't.cost' },
  isAdmin: { kind: 'scalar', type: 'boolean', sql: 't.is_admin' },
  createdAt: { kind: 'scalar', type: 'datetime', sql: 't.created_at' },
  secret: { kind: 'scalar', type: 'string', sql: 't.name', sortable: false },
  roleAttributes: setFromTable({
    table: 'role_attributes',
    ownerColumn: 'entity_id',
    valueColumn: 'attr',
    where: "entity_type = 'identity'",
  }),
  attrs: setFromJsonArray('t.attrs'),
};
const opts = { tagsSql: 't.tags' };

// id, name, cost, is_admin, created_at, tags, attributes (both in the JSON column and in role_attributes)
const ROWS: Array<[string, string | null, number | null, number | null, string | null, object, string[]]> = [
  ['a', 'alpha', 10, 1, '2024-01-01T00:00:00.000Z', { env: 'prod', tier: 1, on: true }, ['red', 'blue']],
  ['b', 'Beta', 20.5, 0, '2024-06-15T12:30:00.000Z', { env: 'dev', tier: 2, on: false, note: null }, ['red']],
  ['c', 'gamma ray', -5, 0, '2025-01-01T00:00:00.500Z', { env: 'Prod', tier: '1' }, []],
  ['d', null, null, null, null, {}, ['green']],
  ['e', 'quo"te\\', 0, 1, '2023-12-31T23:59:59.999Z', { 'k-1.x': 'dash', tier: 1.5 }, []],
];

let db: Database.Database;
beforeAll(() => {
  db = new Database(':memory:');
  db.exec(`
    CREATE TABLE t (id TEXT PRIMARY KEY, name TEXT, cost REAL, is_admin INTEGER, created_at TEXT,
                    tags TEXT NOT NULL DEFAULT '{}', attrs TEXT NOT NULL DEFAULT '[]');
    CREATE INDEX t_name ON t(name);
    CREATE TABLE role_attributes (entity_type TEXT NOT NULL, attr TEXT NOT NULL, entity_id TEXT NOT NULL,
                                  PRIMARY KEY (entity_type, attr, entity_id)) WITHOUT ROWID;`);
  const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)');
  const role = db.prepare('INSERT INTO role_attributes VALUES (?, ?, ?)');
  for (const [id, name, cost, admin, created, tags, attrs] of ROWS) {
    insert.run(id, name, cost, admin, created, JSON.stringify(tags), JSON.stringify(attrs));
    for (const a of attrs) role.run('identity', a, id);
  }
  role.run('service', 'red', 'c'); // another entity type: must never count
});
afterAll(() => db.close());

function run(q: CompiledQuery): string[] {
  const order = q.sort.length ? q.sort.map((s) => `${s.sql} ${s.dir}`).join(', ') : 't.id';
  const limit = q.limit === undefined || q.limit === 'none' ? -1 : q.limit;
  const sql = `SELECT t.id FROM t AS t WHERE ${q.where} ORDER BY ${order} LIMIT ${limit} OFFSET ${q.skip ?? 0}`;
  return db
    .prepare(sql)
    .pluck()
    .all(...q.params) as string[];
}
const ids = (filter: string | undefined) => run(compileFilter(filter, fields, opts));
const ALL = ['a', 'b', 'c', 'd', 'e'];

function table(cases: Array<[string, string[]]>) {
  it.each(cases)('%s', (filter, expected) => expect(ids(filter)).toEqual(expected));
}

describe('no condition', () => {
  it('treats absent, empty and blank filters as match-all', () => {
    for (const f of [undefined, '', '   ', ' \t\n ']) {
      expect(compileFilter(f, fields)).toEqual({ where: '1=1', params: [], sort: [] });
      expect(ids(f)).toEqual(ALL);
    }
  });
  table([
    ['true', ALL],
    ['TRUE', ALL],
    ['false', []],
    ['true and false', []],
    ['false or true', ALL],
  ]);
});

describe('strings', () => {
  table([
    ['name = "alpha"', ['a']],
    ['name="alpha"', ['a']],
    ['  name  =\n"alpha"\t', ['a']],
    ['\'name\' = "alpha"', ['a']],
    ['name != "alpha"', ['b', 'c', 'd', 'e']], // NULL name counts as "not alpha", as in OpenZiti
    ['name < "b"', ['a', 'b']], // binary collation: "Beta" < "alpha"
    ['name <= "alpha"', ['a', 'b']],
    ['name > "alpha"', ['c', 'e']],
    ['name >= "gamma"', ['c', 'e']],
    ['name in ["alpha", "Beta", "zzz"]', ['a', 'b']],
    ['name IN ["alpha"]', ['a']],
    ['name not in ["alpha"]', ['b', 'c', 'd', 'e']],
    ['name NOT IN ["alpha", "Beta"]', ['c', 'd', 'e']],
    ['name contains "a"', ['a', 'b', 'c']],
    ['name contains "A"', []],
    ['name contains ""', ['a', 'b', 'c', 'e']],
    ['name icontains "A"', ['a', 'b', 'c']],
    ['name ICONTAINS "BETA"', ['b']],
    ['name not contains "a"', ['d', 'e']],
    ['name not icontains "ALPHA"', ['b', 'c', 'd', 'e']],
    ['name contains 5', []],
    ['name = "quo\\"te\\\\"', ['e']],
    ['name contains "\\""', ['e']],
    ['name = "a\\nb\\t\\r\\f"', []],
    ['name = null', ['d']],
    ['name != NULL', ['a', 'b', 'c', 'e']],
    ["name = \"x' OR '1'='1\"", []],
  ]);
});

describe('numbers', () => {
  table([
    ['cost = 10', ['a']],
    ['cost = 10.0', ['a']],
    ['cost = 2.05e1', ['b']],
    ['cost = -5', ['c']],
    ['cost = -5E0', ['c']],
    ['cost != 10', ['b', 'c', 'd', 'e']],
    ['cost > 0', ['a', 'b']],
    ['cost >= 0', ['a', 'b', 'e']],
    ['cost < 0', ['c']],
    ['cost <= -5', ['c']],
    ['cost<=-5', ['c']],
    ['cost in [10, 0]', ['a', 'e']],
    ['cost in [20.5]', ['b']],
    ['cost not in [10]', ['b', 'c', 'd', 'e']],
    // between includes the lower and excludes the upper bound (OpenZiti semantics)
    ['cost between 0 and 10', ['e']],
    ['cost between 0 and 20.5', ['a', 'e']],
    ['cost BETWEEN -5 AND 0', ['c']],
    ['cost not between 0 and 10', ['a', 'b', 'c', 'd']],
    ['cost = null', ['d']],
  ]);
});

describe('booleans', () => {
  table([
    ['isAdmin = true', ['a', 'e']],
    ['isAdmin = false', ['b', 'c']],
    ['isAdmin != true', ['b', 'c', 'd']],
    ['isAdmin != FALSE', ['a', 'd', 'e']],
    ['isAdmin', ['a', 'e']],
    ['not isAdmin', ['b', 'c', 'd']],
    ['NOT NOT isAdmin', ['a', 'e']],
    ['isAdmin = null', ['d']],
  ]);
});

describe('datetimes', () => {
  table([
    ['createdAt = datetime(2024-01-01T00:00:00Z)', ['a']],
    ['createdAt = datetime(2024-01-01T01:00:00+01:00)', ['a']],
    ['createdAt = datetime(2023-12-31T19:00:00-05:00)', ['a']],
    ['createdAt = datetime( 2025-01-01T00:00:00.5Z )', ['c']],
    ['createdAt = datetime(2025-01-01T00:00:00.500999Z)', ['c']],
    ['createdAt <= datetime(2023-12-31t23:59:59.999z)', ['e']],
    ['createdAt > datetime(2024-01-01T00:00:00Z)', ['b', 'c']],
    ['createdAt >= datetime(2024-01-01T00:00:00.000Z)', ['a', 'b', 'c']],
    ['createdAt < datetime(2024-01-01T00:00:00Z)', ['e']],
    ['createdAt != datetime(2024-01-01T00:00:00Z)', ['b', 'c', 'd', 'e']],
    ['createdAt in [datetime(2024-06-15T12:30:00Z), datetime(2023-12-31T23:59:59.999Z)]', ['b', 'e']],
    ['createdAt between datetime(2024-01-01T00:00:00Z) and datetime(2025-01-01T00:00:00.500Z)', ['a', 'b']],
    ['createdAt not between datetime(2024-01-01T00:00:00Z) and datetime(2025-01-01T00:00:00.500Z)', ['c', 'd', 'e']],
    ['createdAt = null', ['d']],
  ]);
  it('binds datetimes as ISO strings with milliseconds and booleans as 1/0', () => {
    const q = compileFilter('isAdmin = true and createdAt > datetime(2024-01-01T01:00:00+01:00)', fields);
    expect(q.params).toEqual([1, '2024-01-01T00:00:00.000Z']);
  });
});

describe('boolean logic', () => {
  table([
    ['name = "alpha" or name = "Beta"', ['a', 'b']],
    ['name = "alpha" and cost = 10', ['a']],
    ['name = "alpha" or name = "Beta" and cost > 100', ['a']],
    ['name = "alpha" Or name = "Beta" AnD cost > 100', ['a']],
    // OpenZiti's parser gives and/or one precedence and nests to the right: a and (b or c)
    ['name = "alpha" and cost = 10 or name = "Beta"', ['a']],
    ['(name = "alpha" and cost = 10) or name = "Beta"', ['a', 'b']],
    ['((name = "alpha"))', ['a']],
    ['( name = "alpha" or name = "Beta" ) and ( isAdmin = true )', ['a']],
    // `not` covers everything after it, as in OpenZiti: not (alpha and cost = 10)
    ['not name = "alpha" and cost = 10', ['b', 'c', 'd', 'e']],
    ['not (isAdmin) and cost > 0', ['b', 'c', 'd', 'e']], // not (isAdmin and cost > 0)
    ['(not isAdmin) and cost > 0', ['b']],
    ['not (name = "alpha")', ['b', 'c', 'd', 'e']], // NULL name included
    ['not cost < 0', ['a', 'b', 'd', 'e']],
    ['not name contains "a"', ['d', 'e']],
    ['true and name = "alpha"', ['a']],
  ]);
  it('parses like OpenZiti', () => {
    const shape = (f: string) => JSON.stringify(parseZitiQl(f).filter, (k, v) => (k === 'pos' || k === 'lhs' || k === 'value' ? undefined : v));
    expect(shape('a = 1 and b = 2 or c = 3')).toBe(shape('a = 1 and (b = 2 or c = 3)'));
    expect(shape('a = 1 or b = 2 and c = 3')).toBe(shape('a = 1 or (b = 2 and c = 3)'));
    expect(shape('not a = 1 or b = 2')).toBe(shape('not (a = 1 or b = 2)'));
  });
});

describe.each(['roleAttributes', 'attrs'])('set functions on %s', (f) => {
  table([
    [`anyOf(${f}) = "red"`, ['a', 'b']],
    [`ANYOF(${f}) = "red"`, ['a', 'b']],
    [`anyOf(${f}) != "red"`, ['a', 'd']], // some element is not red
    [`not anyOf(${f}) = "red"`, ['c', 'd', 'e']],
    [`anyOf(${f}) in ["green", "blue"]`, ['a', 'd']],
    [`anyOf(${f}) not in ["red"]`, ['c', 'd', 'e']], // not (anyOf in ...), as OpenZiti
    [`anyOf(${f}) contains "lu"`, ['a']],
    [`anyOf(${f}) < "c"`, ['a']],
    [`allOf(${f}) = "red"`, ['b']],
    [`allOf(${f}) != "green"`, ['a', 'b']],
    [`allOf(${f}) contains "e"`, ['a', 'b', 'd']],
    [`allOf(${f}) icontains "R"`, ['b', 'd']],
    [`allOf(${f}) in ["red", "blue"]`, ['a', 'b']],
    [`count(${f}) = 0`, ['c', 'e']],
    [`count(${f}) = 2`, ['a']],
    [`count(${f}) > 0`, ['a', 'b', 'd']],
    [`count(${f}) < 2`, ['b', 'c', 'd', 'e']],
    [`count(${f}) != 1`, ['a', 'c', 'e']],
    [`count(${f}) in [0, 2]`, ['a', 'c', 'e']],
    [`count(${f}) not in [0]`, ['a', 'b', 'd']],
    [`count(${f}) between 1 and 2`, ['b', 'd']],
    [`count(${f}) between 0 and 1`, ['c', 'e']],
    [`isEmpty(${f})`, ['c', 'e']],
    [`not isEmpty(${f})`, ['a', 'b', 'd']],
    [`anyOf(${f}) = "red" and isAdmin`, ['a']],
    [`(not isEmpty(${f})) and count(${f}) = 1 sort by id desc`, ['d', 'b']],
    // `not` reaches to the end in OpenZiti: not (isEmpty and count = 1)
    [`not isEmpty(${f}) and count(${f}) = 1`, ALL],
  ]);
});

describe('tags', () => {
  table([
    ['tags.env = "prod"', ['a']],
    ['tags.env != "prod"', ['b', 'c', 'd', 'e']],
    ['tags.env contains "ro"', ['a', 'c']],
    ['tags.env icontains "PROD"', ['a', 'c']],
    ['tags.env not icontains "PROD"', ['b', 'd', 'e']],
    ['tags.env in ["dev", "Prod"]', ['b', 'c']],
    ['tags.env not in ["dev"]', ['a', 'c', 'd', 'e']],
    ['tags.env > "a"', ['a', 'b']],
    ['tags.env = null', ['d', 'e']],
    ['tags.env != null', ['a', 'b', 'c']],
    ['tags.note = null', ALL],
    ['tags.tier = 1', ['a']], // the string "1" does not equal the number 1
    ['tags.tier = "1"', ['c']],
    ['tags.tier > 1', ['b', 'e']],
    ['tags.tier < "z"', ['c']],
    ['tags.tier between 1 and 2', ['a', 'e']],
    ['tags.tier in [2, 1.5]', ['b', 'e']],
    ['tags.tier contains 1', ['a', 'c', 'e']],
    ['tags.on = true', ['a']],
    ['tags.on = false', ['b']],
    ['tags.on != true', ['b', 'c', 'd', 'e']],
    ['tags.on', ['a']],
    ['not tags.on', ['b', 'c', 'd', 'e']],
    ['tags.tier = true', []],
    ['tags.k-1.x = "dash"', ['e']],
    ['\'tags.k-1.x\' = "dash"', ['e']],
    ['sort by tags.tier desc', ['c', 'b', 'e', 'a', 'd']], // SQLite orders text above numbers
  ]);
});

describe('sort, skip, limit', () => {
  table([
    ['sort by cost', ['d', 'c', 'e', 'a', 'b']], // NULL first, as SQLite orders ascending
    ['sort by cost desc', ['b', 'a', 'e', 'c', 'd']],
    ['sort by isAdmin desc, name asc', ['a', 'e', 'b', 'c', 'd']],
    ['sort by isAdmin DESC,name', ['a', 'e', 'b', 'c', 'd']],
    ['true sort by name limit 2', ['d', 'b']],
    ['sort by id skip 1 limit 2', ['b', 'c']],
    ['SORT BY id DESC SKIP 1 LIMIT 1', ['d']],
    ['isAdmin = false skip 1', ['c']],
    ['skip 3', ['d', 'e']],
    ['limit 1', ['a']],
    ['limit none', ALL],
  ]);
  it('returns the parts', () => {
    expect(compileFilter('name = "x" sort by name desc, cost skip 10 limit none', fields)).toEqual({
      where: 't.name = ?',
      params: ['x'],
      sort: [
        { sql: 't.name', dir: 'DESC' },
        { sql: 't.cost', dir: 'ASC' },
      ],
      skip: 10,
      limit: 'none',
    });
    expect(compileFilter('limit 5', fields)).toEqual({ where: '1=1', params: [], sort: [], limit: 5 });
    expect(compileFilter('limit -1', fields).limit).toBe('none'); // OpenZiti's encoding of none
  });
});

describe('structured sort (ListParams.sort, the console column sort)', () => {
  const sorted = (filter: string | undefined, sort: Array<{ field: string; dir: 'asc' | 'desc' }>) =>
    run(compileFilter(filter, fields, { ...opts, sort }));
  it('orders like `sort by`, with the filter, skip and limit', () => {
    expect(sorted(undefined, [{ field: 'cost', dir: 'desc' }])).toEqual(ids('sort by cost desc'));
    expect(
      sorted('', [
        { field: 'isAdmin', dir: 'desc' },
        { field: 'name', dir: 'asc' },
      ]),
    ).toEqual(['a', 'e', 'b', 'c', 'd']);
    expect(sorted('isAdmin = false limit 1', [{ field: 'name', dir: 'desc' }])).toEqual(['c']);
    expect(sorted('skip 1 limit 2', [{ field: 'tags.tier', dir: 'desc' }])).toEqual(['b', 'e']);
    expect(compileFilter('name = "x"', fields, { sort: [{ field: 'name', dir: 'desc' }] }).sort).toEqual([{ sql: 't.name', dir: 'DESC' }]);
  });
  it('loses to a `sort by` in the filter, which is then not checked', () => {
    expect(sorted('sort by cost', [{ field: 'cost', dir: 'desc' }])).toEqual(['d', 'c', 'e', 'a', 'b']);
    expect(sorted('name = "sort by x" or true sort by id desc', [{ field: 'nope', dir: 'asc' }])).toEqual(['e', 'd', 'c', 'b', 'a']);
  });
  it.each([
    ['nope', /unknown field "nope"/],
    ['constructor', /unknown field/],
    ['tags.', /unknown field/],
    ["tags.x'", /unknown field/],
    ['roleAttributes', /cannot sort by set field/],
    ['secret', /not sortable/],
  ])('rejects %s as `sort by` does', (field, message) => {
    expect(() => compileFilter(undefined, fields, { ...opts, sort: [{ field, dir: 'asc' }] })).toThrow(message);
    expect(() => compileFilter(undefined, fields, { ...opts, sort: [{ field, dir: 'asc' }] })).toThrow(QueryError);
  });
  it('reports a bad filter before the sort', () => {
    expect(() => compileFilter('name =', fields, { sort: [{ field: 'nope', dir: 'asc' }] })).toThrow(/expected a value/);
  });
  it('is applied by pageQuery, whose errors are INVALID_FILTER (400)', () => {
    const page = pageQuery({ sort: [{ field: 'name', dir: 'asc' }], limit: 2 }, fields, { tagsSql: 't.tags' });
    expect(page).toMatchObject({ limit: 2, offset: 0, compiled: { sort: [{ sql: 't.name', dir: 'ASC' }] } });
    expect(pageQuery({ filter: 'sort by cost desc', sort: [{ field: 'name', dir: 'asc' }] }, fields).compiled.sort).toEqual([
      { sql: 't.cost', dir: 'DESC' },
    ]);
    for (const field of ['nope', 'secret', 'roleAttributes']) {
      expect(() => pageQuery({ sort: [{ field, dir: 'asc' }] }, fields)).toThrow(
        expect.objectContaining({ code: 'INVALID_FILTER', status: 400, message: expect.stringMatching(/^invalid filter: /) }),
      );
    }
  });
});

describe('generated SQL', () => {
  it('keeps simple comparisons index-friendly and set lookups uncorrelated', () => {
    expect(compileFilter('name = "alpha"', fields).where).toBe('t.name = ?');
    const plan = (filter: string) => {
      const q = compileFilter(filter, fields);
      return (db.prepare(`EXPLAIN QUERY PLAN SELECT t.id FROM t AS t WHERE ${q.where}`).all(...q.params) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join('\n');
    };
    expect(plan('name = "alpha"')).toMatch(/USING (COVERING )?INDEX t_name/);
    const roles = plan('anyOf(roleAttributes) = "red"');
    expect(roles).toMatch(/SEARCH role_attributes USING PRIMARY KEY/);
    expect(roles).not.toMatch(/CORRELATED/);
    expect(compileFilter('anyOf(roleAttributes) = "red"', fields).where).toBe(
      "t.id IN (SELECT entity_id FROM role_attributes WHERE (entity_type = 'identity') AND attr = ?)",
    );
  });
});

describe('errors', () => {
  const bad: Array<[string, RegExp?]> = [
    // unknown fields, including Object.prototype names
    ['nope = 1', /unknown field "nope"/],
    ['constructor = 1', /unknown field/],
    ['toString = "x"', /unknown field/],
    ['hasOwnProperty', /unknown field/],
    ['t.name = "x"', /unknown field/],
    ['Name = "alpha"', /unknown field/],
    // type mismatches
    ['name > 3', /cannot be compared with a number/],
    ['name = 3'],
    ['cost = "x"', /number and cannot be compared with a string/],
    ['cost contains "1"', /contains needs a string/],
    ['cost icontains "1"'],
    ['cost in ["a"]'],
    ['isAdmin = 1'],
    ['isAdmin in [1]'],
    ['createdAt = "2024-01-01T00:00:00Z"'],
    ['createdAt > 5'],
    ['createdAt between 1 and 2'],
    ['name between 1 and 2', /between needs a number or datetime/],
    ['name', /not a condition/],
    ['cost and isAdmin', /not a condition/],
    ['roleAttributes', /set field/],
    ['roleAttributes = "red"', /set field/],
    ['anyOf(name) = "x"', /needs a set field/],
    ['count(name) > 1'],
    ['isEmpty(cost)'],
    ['anyOf(roleAttributes) = 1'],
    ['anyOf(roleAttributes) = null', /null/],
    ['count(roleAttributes) = null', /null/],
    ['count(roleAttributes) = "x"'],
    ['count(roleAttributes) contains "1"'],
    ['tags.env = datetime(2024-01-01T00:00:00Z)', /datetimes/],
    // sort
    ['sort by roleAttributes', /cannot sort by set field/],
    ['sort by secret', /not sortable/],
    ['sort by nope', /unknown field/],
    ['sort by anyOf(attrs)'],
    ['sort by', /expected a field name to sort by/],
    ['sort name'],
    // syntax
    ['name', /not a condition/],
    ['name =', /expected a value/],
    ['name = "x', /unterminated string/],
    ['name = "x\\q"', /invalid escape/],
    ['name = "tab\there"', /control character/],
    ['= "x"'],
    ['name == "x"'],
    ['name <> "x"'],
    ["name = 'x'"],
    ['name = x'],
    ['name in []'],
    ['name in ["a", 1]', /one kind of value/],
    ['name in "a"'],
    ['isAdmin in [true]'],
    ['(name = "x"', /expected "\)"/],
    ['name = "x")', /expected end of filter/],
    ['name = "x" and', /expected a condition/],
    ['name = "x" or or name = "y"'],
    ['not'],
    ['()'],
    ['isEmpty(attrs) = false'],
    ['anyOf(attrs)'],
    ['count(from attrs where x = 1) > 1', /not supported/],
    ['name icontains 5'],
    ['cost < null'],
    ['isAdmin < true'],
    ['cost between 1 and datetime(2024-01-01T00:00:00Z)'],
    ['cost between 1 or 2'],
    ['createdAt = datetime(2024-13-01T00:00:00Z)', /invalid datetime/],
    ['createdAt = datetime(2024-02-30T00:00:00Z)', /invalid datetime/],
    ['createdAt = datetime(2024-01-01T24:00:00Z)', /invalid datetime/],
    ['createdAt = datetime(2024-01-01)', /malformed datetime/],
    ['createdAt = datetime("2024-01-01T00:00:00Z")', /malformed datetime/],
    ['createdAt = datetime(2024-01-01T00:00:00)', /malformed datetime/],
    ['createdAt = datetime(2024-01-01T00:00:00Z', /malformed datetime/],
    ['cost = 01', /whitespace/],
    ['cost = 1.'],
    ['cost = .5'],
    ['cost = 1e999', /out of range/],
    ['cost = 1and isAdmin', /whitespace/],
    ['createdAt > datetime(2023-10-02T21:08:58.577Z)sort by name', /whitespace/],
    ['limit', /number after limit/],
    ['limit x'],
    ['limit 1.5', /non-negative integer/],
    ['skip -1', /non-negative integer/],
    ['limit 1 skip 1', /expected end of filter/],
    ['limit none sort by name'],
    ['name = "x" limit 1 extra'],
    ['_x = 1'],
    ['tags. = 1'],
    // injection attempts
    ['name = "x" ; drop table t', /unexpected character ";"/],
    ['name = "x") or 1=1 --'],
    ['name = "x" or 1=1'],
    ['name = "x" -- comment'],
    ['name = "x" /* c */'],
    ['sort by name; drop table t'],
    ['sort by name, (select 1)'],
    ["tags.env') = 1 --"],
    ['tags.a"b = 1'],
    ["tags.a'b = 1"],
  ];
  it.each(bad)('%s', (filter, message) => {
    let err: unknown;
    try {
      compileFilter(filter, fields, opts);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(QueryError);
    if (message) expect((err as Error).message).toMatch(message);
  });
  it('reports where the problem is', () => {
    expect(() => compileFilter('name = "alpha" and cost = "x"', fields)).toThrow(/at position 26/);
    expect(() => compileFilter('name = "alpha" and nope = 1', fields)).toThrow(/unknown field "nope" at position 19/);
    try {
      compileFilter('name = "x', fields);
    } catch (e) {
      expect((e as QueryError).position).toBe(7);
    }
  });
  it('treats tags as unknown fields without tagsSql', () => {
    expect(() => compileFilter('tags.env = "prod"', fields)).toThrow(/unknown field "tags.env"/);
  });
  it('never puts literal text into SQL', () => {
    const evil = `x'); DROP TABLE t; --`;
    const q = compileFilter(`name = "${evil}" or tags.env in ["${evil}"] or anyOf(attrs) contains "${evil}"`, fields, opts);
    expect(q.where).not.toContain('DROP');
    expect(q.params).toEqual([evil, evil, evil]);
    expect(run(q)).toEqual([]);
    expect(ids('true')).toEqual(ALL);
  });
});

describe('set field constructors', () => {
  it('reject invalid SQL names', () => {
    expect(() => setFromTable({ table: 'x; drop', ownerColumn: 'a', valueColumn: 'b' })).toThrow();
  });
});

describe('references (service.name, apiSession.identity.name)', () => {
  const identityFields: QueryFields = { name: scalar('string', 't.name'), isAdmin: scalar('boolean', 't.is_admin') };
  const refs = (name: string): RefTarget | undefined =>
    name === 'apiSession'
      ? { fk: 't.api_session_id', targets: [{ table: 'api_sessions', fields: { token: scalar('string', 't.token') }, refs: apiSessionRefs }] }
      : name === 'router'
        ? {
            fk: 't.router_id',
            targets: [
              { table: 'edge_routers', fields: identityFields },
              { table: 'routers', fields: identityFields },
            ],
          }
        : undefined;
  const apiSessionRefs = (name: string): RefTarget | undefined =>
    name === 'identity' ? { fk: 't.identity_id', targets: [{ table: 'identities', fields: identityFields, tagsSql: 't.tags' }] } : undefined;
  const q = (filter: string) => compileFilter(filter, { name: scalar('string', 't.name') }, { refs });

  it('compiles a referenced field to an indexed IN over the referenced table, chains included', () => {
    expect(q('apiSession.identity.name = "eve"')).toMatchObject({
      where: 't.api_session_id IN (SELECT r1.id FROM api_sessions r1 WHERE r1.identity_id IN (SELECT r2.id FROM identities r2 WHERE r2.name = ?))',
      params: ['eve'],
    });
    expect(q('router.name contains "x"').where).toBe(
      't.router_id IN (SELECT r1.id FROM edge_routers r1 WHERE instr(r1.name, ?) > 0 UNION ALL SELECT r1.id FROM routers r1 WHERE instr(r1.name, ?) > 0)',
    );
    expect(q('not apiSession.identity.isAdmin').where).toMatch(/^NOT coalesce\(t.api_session_id IN \(.*r2.is_admin = 1\)\), 0\)$/);
    expect(q('apiSession.identity.tags.env = "prod"').params).toEqual(['prod']);
    expect(q('sort by apiSession.identity.name desc').sort).toEqual([
      {
        sql: '(SELECT (SELECT r2.name FROM identities r2 WHERE r2.id = r1.identity_id) FROM api_sessions r1 WHERE r1.id = t.api_session_id)',
        dir: 'DESC',
      },
    ]);
  });

  it('refuses what the referenced type does not have, and references it does not declare', () => {
    expect(() => q('apiSession.identity.nope = "x"')).toThrow(/unknown field "nope"/);
    expect(() => q('service.name = "x"')).toThrow(/unknown field "service.name"/);
    expect(() => compileFilter('apiSession.token = "x"', {})).toThrow(/unknown field "apiSession.token"/);
  });
});
