import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/main/core/store/migrations/index';
import { ddlToPostgres, toPostgres, UntranslatableSqlError, type DdlSchema } from '../../src/main/core/store/postgresDialect';
import { postgresSql, SQLITE_SQL, type SqlDialect } from '../../src/main/core/store/sqlDialect';
import { startPostgres, type PostgresServer } from '../support/postgres';

/**
 * The SQL both stores run: every migration (but 008, SQLite's FTS5) applied to a real PostgreSQL (its DDL translated),
 * a representative set of the statements the code runs PREPAREd against both schemas, and the helpers for the
 * constructs the dialects write differently (store.sql) checked on the same data in both databases.
 */

const TEXT_SEARCH = 8;

/** The migration scripts for one store: SQLite's as written, PostgreSQL's translated (or native). */
function migrationScripts(dialect: 'sqlite' | 'postgres', skip: number[]): string[] {
  const out: string[] = [];
  const schema: DdlSchema = new Map();
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (skip.includes(m.version)) continue;
    const exec = (script: string) => out.push(dialect === 'postgres' ? ddlToPostgres(script, schema) : script);
    m.up({ dialect, sql: dialect === 'postgres' ? PG : SQLITE_SQL, exec, native: (script: string) => out.push(script) });
  }
  return out;
}

/** PostgreSQL's helpers, knowing the NOT NULL columns the test reads from the catalogue */
const notNull = new Map<string, Set<string>>();
const PG = postgresSql((table) => notNull.get(table));

/** int8 (count(*), BIGINT columns) as JS numbers and booleans as 1/0, as the store reads them */
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? Number : oid === 16 ? (v: string) => (v === 't' ? 1 : 0) : pg.types.getTypeParser(oid, format),
};

let server: PostgresServer;
let client: pg.Client;
let sqlite: Database.Database;

beforeAll(async () => {
  server = await startPostgres();
  client = new pg.Client({ connectionString: await server.createDatabase(), types });
  await client.connect();
  for (const script of migrationScripts('postgres', [TEXT_SEARCH])) await client.query(script);
  const cols = await client.query<{ t: string; c: string }>(
    "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public' AND is_nullable = 'NO'",
  );
  for (const r of cols.rows) notNull.set(r.t, (notNull.get(r.t) ?? new Set()).add(r.c));
  sqlite = new Database(':memory:');
  sqlite.pragma('foreign_keys = ON');
  for (const script of migrationScripts('sqlite', [])) sqlite.exec(script);
}, 120_000);

afterAll(async () => {
  await client?.end();
  await server?.stop();
  sqlite?.close();
});

/** A statement as the code writes it: the same text for both, or made with each store's helpers. */
type Statement = string | ((sql: SqlDialect) => string);
const text = (statement: Statement, d: SqlDialect) => (typeof statement === 'string' ? statement : statement(d));

/** Runs a statement on both databases (as each store runs it: PostgreSQL's with its parameters numbered). */
async function both(sql: Statement, ...params: unknown[]): Promise<{ sqlite: unknown[]; pg: unknown[] }> {
  const st = sqlite.prepare(text(sql, SQLITE_SQL));
  const lite = st.reader ? st.all(...params) : (st.run(...params), []);
  const r = await client.query(toPostgres(text(sql, PG)), params);
  return { sqlite: lite, pg: r.rows };
}
/** Same rows (values compared as text: JSON array elements are text on PostgreSQL). */
async function same(sql: Statement, ...params: unknown[]): Promise<unknown[]> {
  const r = await both(sql, ...params);
  const norm = (rows: unknown[]) =>
    rows.map((row) => Object.fromEntries(Object.entries(row as object).map(([k, v]) => [k, v === null ? null : String(v)])));
  expect(norm(r.pg)).toEqual(norm(r.sqlite));
  return r.pg;
}
const write = async (sql: Statement, ...params: unknown[]) => void (await both(sql, ...params));

describe('schema', () => {
  it('has the tables and columns of the SQLite schema (FTS tables aside), with the same types', async () => {
    const lite: Record<string, Record<string, string>> = {};
    const tables = sqlite
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%'")
      .all() as { name: string }[];
    for (const { name } of tables) {
      const cols = sqlite.prepare(`PRAGMA table_info("${name}")`).all() as { name: string; type: string }[];
      lite[name] = Object.fromEntries(
        cols.map((c) => [c.name, { INTEGER: 'bigint', TEXT: 'text', REAL: 'double precision', BLOB: 'bytea' }[c.type] ?? c.type]),
      );
    }
    const { rows } = await client.query<{ t: string; c: string; type: string; collation: string | null }>(
      `SELECT table_name AS t, column_name AS c, data_type AS type, collation_name AS collation FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const pgTables: Record<string, Record<string, string>> = {};
    for (const r of rows) (pgTables[r.t] ??= {})[r.c] = r.type;
    expect(pgTables).toEqual(lite);
    expect(rows.filter((r) => r.type === 'text' && r.collation !== 'C')).toEqual([]);
  });

  it('assigns INTEGER PRIMARY KEY ids (the rowid) when none is given', async () => {
    await write("INSERT INTO role_classes (kind, key) VALUES ('identity', 'k-auto')");
    const r = await both("SELECT id FROM role_classes WHERE key = 'k-auto'");
    expect(typeof (r.pg[0] as { id: number }).id).toBe('number');
    await write("DELETE FROM role_classes WHERE key = 'k-auto'");
  });

  it('writes ISO timestamps where a migration calls strftime', async () => {
    const { rows } = await client.query("SELECT created_at FROM controller_settings WHERE id = 'global'");
    expect(rows[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

/** Statements as the code writes them (collected from the test suite), one per construct. */
const REPRESENTATIVE = (d: SqlDialect): string[] => [
  'SELECT t.* FROM identities t WHERE (t.name = ?) ORDER BY t.name ASC LIMIT ? OFFSET ?',
  `SELECT t.* FROM api_sessions t ORDER BY ${d.orderBy('t.created_at', 'DESC', 'api_sessions')}, t.id ASC LIMIT ? OFFSET ?`,
  `SELECT count(*) AS n FROM service_policies t WHERE (EXISTS (SELECT 1 FROM ${d.jsonEach('t.identity_roles', 'je')} WHERE je.value = ?))`,
  `SELECT count(*) AS n FROM identities t WHERE (t.id IN (SELECT entity_id FROM role_attributes WHERE (entity_type = 'identity') GROUP BY entity_id HAVING min(coalesce(${d.asInt('attr = ?')}, 0)) = 1))`,
  `SELECT t.id FROM identities t WHERE ${d.notTrue(`${d.instr('lower(t.name)', 'lower(?)')} > 0`)} ORDER BY t.id`,
  `SELECT count(*) AS n FROM identities t WHERE (${d.notTrue(`(${d.instr('t.name', '?')} > 0 AND t.is_admin = ?)`)})`,
  'SELECT count(*) AS n FROM audit_log t WHERE ((t.source = ? AND t.action IS DISTINCT FROM ?))',
  `SELECT count(*) AS n FROM identities t WHERE ((${d.jsonType('t.tags', '$."team"')} IN ('text') AND ${d.jsonExtract('t.tags', '$."team"')} = ?))`,
  `SELECT t.* FROM identities t WHERE ((${d.jsonType('t.tags', '$."n"')} IN ('integer', 'real') AND ${d.jsonNumber('t.tags', '$."n"')} >= ?)) ORDER BY t.name ASC LIMIT ? OFFSET ?`,
  `SELECT name FROM identities WHERE name = ? OR (${d.like('name', '?', '\\')} AND length(name) = ?)`,
  `INSERT INTO policy_side_roles (kind, role_type, value, policy_id) SELECT ?, ?, value, ? FROM ${d.jsonEach('?', 'e')} WHERE true ON CONFLICT DO NOTHING`,
  `INSERT INTO role_class_attrs (class_id, attr) SELECT ?, value FROM ${d.jsonEach('?', 'e')}`,
  'INSERT INTO identity_router_access (identity_class, router_class, n) SELECT a.class_id, b.class_id, ? FROM class_policies a JOIN class_policies b ON b.policy_id = a.policy_id AND b.kind = ? WHERE a.policy_id = ? AND a.kind = ? ON CONFLICT (identity_class, router_class) DO UPDATE SET n = identity_router_access.n + excluded.n',
  `INSERT INTO service_access (identity_class, service_class, dial, bind) SELECT ?, b.class_id, sum(${d.asInt("p.type = 'Dial'")}), sum(${d.asInt("p.type = 'Bind'")}) FROM class_policies a JOIN service_policies p ON p.id = a.policy_id JOIN class_policies b ON b.policy_id = a.policy_id AND b.kind = ? WHERE a.class_id = ? GROUP BY b.class_id`,
  `INSERT INTO class_service_changes (class_id, changed_at) SELECT CAST(value AS BIGINT), ? FROM ${d.jsonEach('?', 'e')} WHERE CAST(value AS BIGINT) IN (SELECT id FROM role_classes) AND true ON CONFLICT (class_id) DO UPDATE SET changed_at = excluded.changed_at`,
  'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
  'UPDATE api_sessions SET mfa_failures = mfa_failures + 1 WHERE id = ? RETURNING mfa_failures AS n',
  `WITH pairs(ic, sc) AS (SELECT CAST(${d.jsonExtract('e.value', '$[0]')} AS BIGINT), CAST(${d.jsonExtract('e.value', '$[1]')} AS BIGINT) FROM ${d.jsonEach('?', 'e')}) SELECT * FROM ( SELECT p.ic, p.sc, r.*, row_number() OVER (PARTITION BY p.ic, p.sc ORDER BY r.is_online DESC, r.name, r.id) AS rn FROM pairs p JOIN identity_router_access ia ON ia.identity_class = p.ic JOIN service_router_access sa ON sa.service_class = p.sc AND sa.router_class = ia.router_class JOIN role_class_members m ON m.class_id = ia.router_class JOIN edge_routers r ON r.id = m.entity_id) AS x WHERE rn <= ? ORDER BY ic, sc, rn`,
  `SELECT count(*) AS n FROM (SELECT DISTINCT m.class_id FROM identities t JOIN role_class_members m ON m.kind = 'identity' AND m.entity_id = t.id WHERE t.id IN (SELECT entity_id FROM role_attributes WHERE entity_type = ? AND attr IN ${d.jsonValues()})) AS c`,
  `SELECT count(*) AS n FROM (SELECT DISTINCT attr FROM role_attributes WHERE entity_type = ?) t WHERE ${d.instr('t.attr', '?')} > 0`,
  `SELECT id, kind, key, member_count FROM role_classes WHERE id IN ${d.jsonValues('?', 'integer')} AND kind IN ('identity', 'service', 'edge-router')`,
  `SELECT DISTINCT identity_class AS c FROM service_access WHERE service_class IN ${d.jsonValues('?', 'integer')}`,
  `SELECT t.* FROM services t WHERE ((SELECT class_id FROM role_class_members WHERE kind = 'service' AND entity_id = t.id) IN ${d.jsonValues('?', 'integer')}) ORDER BY t.name ASC LIMIT ? OFFSET ?`,
  `DELETE FROM sessions AS s WHERE s.identity_id IN ${d.jsonValues()} AND NOT EXISTS ( SELECT 1 FROM role_class_members im JOIN role_class_members sm ON sm.kind = 'service' AND sm.entity_id = s.service_id JOIN service_access a ON a.identity_class = im.class_id AND a.service_class = sm.class_id WHERE im.kind = 'identity' AND im.entity_id = s.identity_id AND (CASE s.type WHEN 'Dial' THEN a.dial ELSE a.bind END) > 0)`,
  "SELECT r.* FROM edge_routers r WHERE (SELECT class_id FROM role_class_members WHERE kind = 'edge-router' AND entity_id = r.id) IN ( SELECT router_class FROM identity_router_access WHERE identity_class = ? INTERSECT SELECT router_class FROM service_router_access WHERE service_class = ?) ORDER BY r.is_online DESC, r.name, r.id LIMIT ?",
  `SELECT id, role_attributes FROM "identities" WHERE NOT ${d.jsonValid('role_attributes')} LIMIT 1001`,
  `SELECT p.id, p.primary_json, p.secondary_json FROM auth_policies p WHERE EXISTS (SELECT 1 FROM ${d.jsonEach('p.primary_json', 'j', '$.extJwt.allowedSigners')} WHERE NOT EXISTS (SELECT 1 FROM external_jwt_signers s WHERE s.id = j.value)) OR (${d.jsonExtract('p.secondary_json', '$.requireExtJwtSigner')} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM external_jwt_signers s WHERE s.id = ${d.jsonExtract('p.secondary_json', '$.requireExtJwtSigner')})) LIMIT 1001`,
  `SELECT * FROM mfas WHERE NOT ${d.like('secret', "'v1:%'")} OR (recovery_codes <> '[]' AND NOT ${d.like('recovery_codes', `'["h1:%'`)})`,
  `SELECT c.id, c.name FROM configs c WHERE c.config_type_id = 'svc-proxy-v1' AND ${d.jsonExtract('c.data', '$.token')} = ? AND c.id <> ? LIMIT 1`,
  'DELETE FROM posture_failures WHERE identity_id = ? AND id NOT IN (SELECT id FROM posture_failures WHERE identity_id = ? ORDER BY id DESC LIMIT ?)',
  `SELECT count(*) AS n FROM services t WHERE coalesce(${d.jsonArrayLength('t.configs')}, 0) = 0`,
  'SELECT CASE WHEN t.cost > ? THEN t.cost ELSE ? END AS c, coalesce(t.hostname, ?) AS h, t.disabled = 1 AS d FROM edge_routers t WHERE t.disabled = 1 AND t.no_traversal = 0',
];

describe('statements', () => {
  it('PREPARE against the migrated schema, on both', async () => {
    const failures: string[] = [];
    for (const [i, sql] of REPRESENTATIVE(PG).entries()) {
      const text = toPostgres(sql);
      try {
        await client.query(`PREPARE rep${i} AS ${text}`);
      } catch (e) {
        failures.push(`${(e as Error).message}\n  ${text}`);
      }
    }
    for (const sql of REPRESENTATIVE(SQLITE_SQL)) {
      try {
        sqlite.prepare(sql);
      } catch (e) {
        failures.push(`${(e as Error).message}\n  ${sql}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses what only SQLite has, by name', () => {
    for (const [sql, what] of [
      ['PRAGMA table_info("identities")', 'PRAGMA'],
      ['SELECT created_at, rowid FROM audit_log ORDER BY rowid DESC', 'rowid'],
      ['SELECT rowid FROM services_fts WHERE services_fts MATCH ?', 'rowid'],
      ["SELECT name FROM sqlite_master WHERE type = 'table'", 'sqlite_master'],
      ['SELECT total_changes() AS n', 'total_changes()'],
    ]) {
      expect(() => toPostgres(sql!)).toThrow(UntranslatableSqlError);
      expect(() => toPostgres(sql!)).toThrow(`${what} has no PostgreSQL translation`);
    }
  });

  it('number parameters in order, leaving ? in literals, identifiers and comments alone, and nothing else changed', () => {
    expect(toPostgres('SELECT \'?\', "a?" FROM t -- why?\nWHERE a = ? AND b = ?')).toBe('SELECT \'?\', "a?" FROM t -- why?\nWHERE a = $1 AND b = $2');
    const sql = "SELECT count(*), t.a IS NOT ? FROM t WHERE t.b LIKE 'x%' /* ? */ ORDER BY t.c";
    expect(toPostgres(sql)).toBe(sql.replace('IS NOT ?', 'IS NOT $1'));
  });
});

describe('meaning, compared with SQLite on the same data', () => {
  beforeAll(async () => {
    const now = '2026-01-02T03:04:05.678Z';
    await write("INSERT INTO identity_types (id, name, created_at, updated_at) VALUES ('default', 'Default', ?, ?)", now, now);
    await write(
      "INSERT INTO auth_policies (id, name, primary_json, secondary_json, created_at, updated_at) VALUES ('default', 'Default', '{}', '{}', ?, ?)",
      now,
      now,
    );
    const identity = (id: string, name: string, disabled: number, disabledAt: string | null, tags: string, externalId: string | null) =>
      write(
        `INSERT INTO identities (id, name, type_id, auth_policy_id, disabled, disabled_at, tags, external_id, created_at, updated_at)
         VALUES (?, ?, 'default', 'default', ?, ?, ?, ?, ?, ?)`,
        id,
        name,
        disabled,
        disabledAt,
        tags,
        externalId,
        now,
        now,
      );
    await identity('i1', 'Alice', 0, null, '{"team":"red","n":5}', null);
    await identity('i2', 'bob', 1, '2026-01-01T00:00:00.000Z', '{"team":"blue","n":10}', 'x');
    await identity('i3', 'dave%', 0, '2026-01-03T00:00:00.000Z', '{"n":9.5}', 'y');
    await identity('i4', 'carol_x', 1, null, '{"n":"7"}', null);
  });

  it('orderBy places NULLs first ascending and last descending, leaving NOT NULL columns to their indexes', async () => {
    const by = (expr: string, dir: 'ASC' | 'DESC', table?: string) => (d: SqlDialect) => d.orderBy(expr, dir, table);
    await same((d) => `SELECT id FROM identities ORDER BY ${by('disabled_at', 'ASC', 'identities')(d)}, id`);
    await same((d) => `SELECT id FROM identities ORDER BY ${by('disabled_at', 'DESC', 'identities')(d)}, id DESC`);
    await same((d) => `SELECT id, row_number() OVER (ORDER BY ${by('disabled_at', 'DESC')(d)}, id) AS n FROM identities ORDER BY id`);
    // a NOT NULL column keeps PostgreSQL's default placement, so that its (unique) index can still give the order
    expect(PG.orderBy('t.name', 'DESC', 'identities')).toBe('t.name DESC');
    expect(PG.orderBy('t.disabled_at', 'ASC', 'identities')).toBe('t.disabled_at ASC NULLS FIRST');
    expect(PG.orderBy('t.name', 'ASC')).toBe('t.name ASC NULLS FIRST');
    expect(SQLITE_SQL.orderBy('t.disabled_at', 'DESC', 'identities')).toBe('t.disabled_at DESC');
    await same((d) => `SELECT t.id FROM identities t ORDER BY ${by('t.name', 'DESC', 'identities')(d)}`);
  });

  it('like is case-insensitive, with the ESCAPE given or none', async () => {
    await same((d) => `SELECT name FROM identities WHERE ${d.like('name', '?', '\\')} ORDER BY name`, 'DAVE\\%');
    await same((d) => `SELECT name FROM identities WHERE ${d.like('name', '?')} ORDER BY name`, 'ali%');
    await same((d) => `SELECT name FROM identities WHERE NOT ${d.like('name', "'%_x'")} ORDER BY name`);
    await same((d) => `SELECT name FROM identities WHERE ${d.like('name', '?')} ORDER BY name`, '%\\%');
  });

  it('jsonEach and jsonValues: elements, aliased, over literals, columns and parameters', async () => {
    await same((d) => `SELECT e.value FROM ${d.jsonEach(`'["a","b"]'`, 'e')} ORDER BY e.value`);
    await same((d) => `SELECT je.value FROM ${d.jsonEach('?', 'je')} ORDER BY je.value`, '["b","a"]');
    await same((d) => `SELECT value FROM ${d.jsonEach('?', 'e')} WHERE value IN (SELECT id FROM identities) ORDER BY value`, '["i2","nope","i1"]');
    await same((d) => `SELECT count(*) AS n FROM ${d.jsonEach('NULL', 'e')}`);
    await same((d) => `SELECT value FROM ${d.jsonEach(`'[{"a":1},[2]]'`, 'e')} ORDER BY value`);
    await same((d) => `SELECT t.id, e.value FROM identities t, ${d.jsonEach('t.tags', 'e')} ORDER BY t.id, e.value`);
    await same((d) => `SELECT e.value FROM ${d.jsonEach(`'{"a":{"b":["x","y"]}}'`, 'e', '$.a.b')} ORDER BY e.value`);
    await same((d) => `SELECT id FROM identities WHERE id IN ${d.jsonValues()} ORDER BY id`, '["i1","i3","nope"]');
    await same((d) => `SELECT count(*) AS n FROM identities WHERE length(id) IN ${d.jsonValues('?', 'integer')}`, '[2,5]');
  });

  it('compares JSON tags as SQLite does (numbers as numbers, json_type names)', async () => {
    const tag = (key: string, d: SqlDialect) => d.jsonExtract('t.tags', `$."${key}"`);
    const type = (key: string, d: SqlDialect) => d.jsonType('t.tags', `$."${key}"`);
    const num = (key: string, d: SqlDialect) => d.jsonNumber('t.tags', `$."${key}"`);
    await same((d) => `SELECT t.id FROM identities t WHERE (${type('n', d)} IN ('integer', 'real') AND ${num('n', d)} > ?) ORDER BY t.id`, 6);
    await same(
      (d) =>
        `SELECT t.id FROM identities t WHERE (${type('n', d)} IN ('integer', 'real') AND (${num('n', d)} >= ? AND ${num('n', d)} < ?)) ORDER BY t.id`,
      6,
      10,
    );
    await same((d) => `SELECT t.id FROM identities t WHERE (${type('team', d)} IN ('text') AND ${tag('team', d)} = ?) ORDER BY t.id`, 'red');
    await same((d) => `SELECT t.id, ${type('n', d)} AS ty, ${type('nope', d)} AS none FROM identities t ORDER BY t.id`);
    await same((d) => `SELECT t.id FROM identities t WHERE ${d.instr(`lower(${tag('team', d)})`, 'lower(?)')} > 0 ORDER BY t.id`, 'RE');
    await same((d) => `SELECT t.id, ${d.jsonArrayLength("'[1,2]'")} AS a, ${d.jsonArrayLength('t.tags')} AS o FROM identities t ORDER BY t.id`);
    await same((d) => `SELECT ${d.jsonValid("'{'")} AS bad, ${d.jsonValid("'[]'")} AS good`);
  });

  it('booleans: selected they are integers; asInt and notTrue make values and conditions of them', async () => {
    const rows = await same('SELECT id, disabled = 1 AS d, EXISTS (SELECT 1 FROM identities WHERE id = t.id) AS e FROM identities t ORDER BY id');
    expect(typeof (rows[0] as { d: unknown }).d).toBe('number');
    await same('SELECT id FROM identities t WHERE t.disabled = 1 ORDER BY id');
    await same((d) => `SELECT sum(${d.asInt('disabled = 1')}) AS s, min(coalesce(${d.asInt('name = ?')}, 0)) AS m FROM identities`, 'bob');
    await same((d) => `SELECT id FROM identities t WHERE ${d.notTrue(`${d.instr('t.name', '?')} > 0`)} ORDER BY id`, 'o');
    await same((d) => `SELECT id FROM identities t WHERE ${d.notTrue('t.external_id = ?')} ORDER BY id`, 'x');
  });

  it('IS DISTINCT FROM, a typed ? IS NULL and CASE instead of max/min of several', async () => {
    await same('SELECT id FROM identities WHERE external_id IS DISTINCT FROM ? ORDER BY id', 'x');
    await same('SELECT id FROM identities WHERE (CAST(? AS TEXT) IS NULL OR external_id = ?) ORDER BY id', null, 'x');
    await same(
      'SELECT CASE WHEN length(name) > ? THEN length(name) ELSE ? END AS a, coalesce(external_id, ?) AS c FROM identities ORDER BY id',
      5,
      5,
      '-',
    );
  });

  it('the time: now() writes ISO 8601 in UTC with milliseconds', async () => {
    const r = await both((d) => `SELECT ${d.now()} AS t`);
    for (const rows of [r.sqlite, r.pg]) expect((rows[0] as { t: string }).t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('ON CONFLICT DO NOTHING and DO UPDATE (qualified) mean the same on both', async () => {
    const ins = (d: SqlDialect) =>
      `INSERT INTO policy_side_roles (kind, role_type, value, policy_id) SELECT ?, ?, value, ? FROM ${d.jsonEach('?', 'e')} WHERE true ON CONFLICT DO NOTHING`;
    await write(ins, 'identity', 'attr', 'p1', '["a","b"]');
    await write(ins, 'identity', 'attr', 'p1', '["b","c"]');
    await same('SELECT value FROM policy_side_roles ORDER BY value');
    const upsert = 'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value';
    await write(upsert, 'k', 'one');
    await write(upsert, 'k', 'two');
    await write('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = settings.value || excluded.value', 'k', '+');
    await same("SELECT key, value FROM settings WHERE key = 'k'");
  });

  it('the policy index triggers keep member counts, drop emptied classes, follow entity deletion', async () => {
    const classes = () => same('SELECT kind, key, member_count FROM role_classes ORDER BY key');
    await write("INSERT INTO role_classes (kind, key) VALUES ('identity', 'A')");
    await write("INSERT INTO role_classes (kind, key) VALUES ('identity', 'B')");
    const id = async (key: string) =>
      (await both('SELECT id FROM role_classes WHERE key = ?', key)) as { sqlite: { id: number }[]; pg: { id: number }[] };
    // class ids may differ between the two databases: each gets its own
    const member = async (entity: string, key: string) => {
      const ids = await id(key);
      sqlite.prepare("INSERT INTO role_class_members (kind, entity_id, class_id) VALUES ('identity', ?, ?)").run(entity, ids.sqlite[0]!.id);
      await client.query(toPostgres("INSERT INTO role_class_members (kind, entity_id, class_id) VALUES ('identity', ?, ?)"), [entity, ids.pg[0]!.id]);
    };
    await member('i1', 'A');
    await member('i2', 'A');
    await member('i3', 'B');
    expect(await classes()).toEqual([
      { kind: 'identity', key: 'A', member_count: 2 },
      { kind: 'identity', key: 'B', member_count: 1 },
    ]);
    // move i3 to A: B empties and goes
    const a = await id('A');
    sqlite.prepare("UPDATE role_class_members SET class_id = ? WHERE kind = 'identity' AND entity_id = 'i3'").run(a.sqlite[0]!.id);
    await client.query(toPostgres("UPDATE role_class_members SET class_id = ? WHERE kind = 'identity' AND entity_id = 'i3'"), [a.pg[0]!.id]);
    expect(await classes()).toEqual([{ kind: 'identity', key: 'A', member_count: 3 }]);
    await write("DELETE FROM role_class_members WHERE entity_id = 'i1'");
    await write("DELETE FROM identities WHERE id = 'i2'");
    await same('SELECT entity_id FROM role_class_members ORDER BY entity_id');
    expect(await classes()).toEqual([{ kind: 'identity', key: 'A', member_count: 1 }]);
    await write("DELETE FROM identities WHERE id = 'i3'");
    expect(await classes()).toEqual([]);
  });
});
