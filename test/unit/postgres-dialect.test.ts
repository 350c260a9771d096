import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/main/core/store/migrations/index';
import { ddlToPostgres, toPostgres, UntranslatableSqlError } from '../../src/main/core/store/postgresDialect';
import { startPostgres, type PostgresServer } from '../support/postgres';

/**
 * The SQLite → PostgreSQL translation: every migration (but 008, SQLite's FTS5) applied to a real PostgreSQL, a
 * representative set of the statements the code runs PREPAREd against that schema, and the constructs whose meaning
 * differs between the two checked on the same data in both databases.
 */

const TEXT_SEARCH = 8;

/** The migration scripts for one store: SQLite's as written, PostgreSQL's translated (or native). */
function migrationScripts(dialect: 'sqlite' | 'postgres', skip: number[]): string[] {
  const out: string[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (skip.includes(m.version)) continue;
    const exec = (script: string) => out.push(dialect === 'postgres' ? ddlToPostgres(script) : script);
    m.up({ dialect, exec, native: (script: string) => out.push(script) } as never);
  }
  return out;
}

/** int8 (count(*), BIGINT columns) as JS numbers, as the store reads them */
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)),
};

let server: PostgresServer;
let client: pg.Client;
let sqlite: Database.Database;

beforeAll(async () => {
  server = await startPostgres();
  client = new pg.Client({ connectionString: await server.createDatabase(), types });
  await client.connect();
  for (const script of migrationScripts('postgres', [TEXT_SEARCH])) await client.query(script);
  sqlite = new Database(':memory:');
  sqlite.pragma('foreign_keys = ON');
  for (const script of migrationScripts('sqlite', [])) sqlite.exec(script);
}, 120_000);

afterAll(async () => {
  await client?.end();
  await server?.stop();
  sqlite?.close();
});

/** Runs a statement in SQLite's dialect on both databases. */
async function both(sql: string, ...params: unknown[]): Promise<{ sqlite: unknown[]; pg: unknown[] }> {
  const st = sqlite.prepare(sql);
  const lite = st.reader ? st.all(...params) : (st.run(...params), []);
  const r = await client.query(toPostgres(sql), params);
  return { sqlite: lite, pg: r.rows };
}
/** Same rows (values compared as text: json_each gives numbers as text on PostgreSQL). */
async function same(sql: string, ...params: unknown[]): Promise<unknown[]> {
  const r = await both(sql, ...params);
  const norm = (rows: unknown[]) =>
    rows.map((row) => Object.fromEntries(Object.entries(row as object).map(([k, v]) => [k, v === null ? null : String(v)])));
  expect(norm(r.pg)).toEqual(norm(r.sqlite));
  return r.pg;
}
const write = async (sql: string, ...params: unknown[]) => void (await both(sql, ...params));

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

/** Statements as the code runs them (collected from the test suite), one per construct. */
const REPRESENTATIVE = [
  'SELECT t.* FROM identities t WHERE (t.name = ?) ORDER BY t.name ASC LIMIT ? OFFSET ?',
  'SELECT t.* FROM api_sessions t ORDER BY t.created_at DESC, t.id ASC LIMIT ? OFFSET ?',
  'SELECT count(*) AS n FROM service_policies t WHERE (EXISTS (SELECT 1 FROM json_each(t.identity_roles) AS je WHERE je.value = ?))',
  "SELECT count(*) AS n FROM identities t WHERE (t.id IN (SELECT entity_id FROM role_attributes WHERE (entity_type = 'identity') GROUP BY entity_id HAVING min(coalesce(attr = ?, 0)) = 1))",
  'SELECT t.id FROM identities t WHERE NOT coalesce(instr(lower(t.name), lower(?)) > 0, 0) ORDER BY t.id',
  'SELECT count(*) AS n FROM identities t WHERE (NOT coalesce((instr(t.name, ?) > 0 AND t.is_admin = ?), 0))',
  'SELECT count(*) AS n FROM audit_log t WHERE ((t.source = ? AND t.action IS NOT ?))',
  `SELECT count(*) AS n FROM identities t WHERE ((json_type(t.tags, '$."team"') IN ('text') AND json_extract(t.tags, '$."team"') = ?))`,
  `SELECT t.* FROM identities t WHERE ((json_type(t.tags, '$."n"') IN ('integer', 'real') AND json_extract(t.tags, '$."n"') >= ?)) ORDER BY t.name ASC LIMIT ? OFFSET ?`,
  "SELECT name FROM identities WHERE name = ? OR (name LIKE ? ESCAPE '\\' AND length(name) = ?)",
  'INSERT OR IGNORE INTO policy_side_roles (kind, role_type, value, policy_id) SELECT ?, ?, value, ? FROM json_each(?)',
  'INSERT INTO role_class_attrs (class_id, attr) SELECT ?, value FROM json_each(?)',
  'INSERT INTO identity_router_access (identity_class, router_class, n) SELECT a.class_id, b.class_id, ? FROM class_policies a JOIN class_policies b ON b.policy_id = a.policy_id AND b.kind = ? WHERE a.policy_id = ? AND a.kind = ? ON CONFLICT (identity_class, router_class) DO UPDATE SET n = n + excluded.n',
  "INSERT INTO service_access (identity_class, service_class, dial, bind) SELECT ?, b.class_id, sum(p.type = 'Dial'), sum(p.type = 'Bind') FROM class_policies a JOIN service_policies p ON p.id = a.policy_id JOIN class_policies b ON b.policy_id = a.policy_id AND b.kind = ? WHERE a.class_id = ? GROUP BY b.class_id",
  'INSERT INTO class_service_changes (class_id, changed_at) SELECT value, ? FROM json_each(?) WHERE value IN (SELECT id FROM role_classes) AND true ON CONFLICT (class_id) DO UPDATE SET changed_at = excluded.changed_at',
  'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
  'UPDATE api_sessions SET mfa_failures = mfa_failures + 1 WHERE id = ? RETURNING mfa_failures AS n',
  "WITH pairs(ic, sc) AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)) SELECT * FROM ( SELECT p.ic, p.sc, r.*, row_number() OVER (PARTITION BY p.ic, p.sc ORDER BY r.is_online DESC, r.name, r.id) AS rn FROM pairs p JOIN identity_router_access ia ON ia.identity_class = p.ic JOIN service_router_access sa ON sa.service_class = p.sc AND sa.router_class = ia.router_class JOIN role_class_members m ON m.class_id = ia.router_class JOIN edge_routers r ON r.id = m.entity_id) WHERE rn <= ? ORDER BY ic, sc, rn",
  "SELECT count(*) AS n FROM (SELECT DISTINCT m.class_id FROM identities t JOIN role_class_members m ON m.kind = 'identity' AND m.entity_id = t.id WHERE t.id IN (SELECT entity_id FROM role_attributes WHERE entity_type = ? AND attr IN (SELECT value FROM json_each(?))))",
  'SELECT count(*) AS n FROM (SELECT DISTINCT attr FROM role_attributes WHERE entity_type = ?) t WHERE instr(t.attr, ?) > 0',
  "SELECT id, kind, key, member_count FROM role_classes WHERE id IN (SELECT value FROM json_each(?)) AND kind IN ('identity', 'service', 'edge-router')",
  'SELECT DISTINCT identity_class AS c FROM service_access WHERE service_class IN (SELECT value FROM json_each(?))',
  "SELECT t.* FROM services t WHERE ((SELECT class_id FROM role_class_members WHERE kind = 'service' AND entity_id = t.id) IN (SELECT value FROM json_each(?))) ORDER BY t.name ASC LIMIT ? OFFSET ?",
  "DELETE FROM sessions AS s WHERE s.identity_id IN (SELECT value FROM json_each(?)) AND NOT EXISTS ( SELECT 1 FROM role_class_members im JOIN role_class_members sm ON sm.kind = 'service' AND sm.entity_id = s.service_id JOIN service_access a ON a.identity_class = im.class_id AND a.service_class = sm.class_id WHERE im.kind = 'identity' AND im.entity_id = s.identity_id AND (CASE s.type WHEN 'Dial' THEN a.dial ELSE a.bind END) > 0)",
  "SELECT r.* FROM edge_routers r WHERE (SELECT class_id FROM role_class_members WHERE kind = 'edge-router' AND entity_id = r.id) IN ( SELECT router_class FROM identity_router_access WHERE identity_class = ? INTERSECT SELECT router_class FROM service_router_access WHERE service_class = ?) ORDER BY r.is_online DESC, r.name, r.id LIMIT ?",
  'SELECT id, role_attributes FROM "identities" WHERE NOT json_valid(role_attributes) LIMIT 1001',
  "SELECT p.id, p.primary_json, p.secondary_json FROM auth_policies p WHERE EXISTS (SELECT 1 FROM json_each(p.primary_json, '$.extJwt.allowedSigners') j WHERE NOT EXISTS (SELECT 1 FROM external_jwt_signers s WHERE s.id = j.value)) OR (json_extract(p.secondary_json, '$.requireExtJwtSigner') IS NOT NULL AND NOT EXISTS (SELECT 1 FROM external_jwt_signers s WHERE s.id = json_extract(p.secondary_json, '$.requireExtJwtSigner'))) LIMIT 1001",
  "SELECT * FROM mfas WHERE secret NOT LIKE 'v1:%' OR (recovery_codes <> '[]' AND recovery_codes NOT LIKE '[\"h1:%')",
  "SELECT c.id, c.name FROM configs c WHERE c.config_type_id = 'svc-proxy-v1' AND json_extract(c.data, '$.token') = ? AND c.id <> ? LIMIT 1",
  'DELETE FROM posture_failures WHERE identity_id = ? AND id NOT IN (SELECT id FROM posture_failures WHERE identity_id = ? ORDER BY id DESC LIMIT ?)',
  'SELECT count(*) AS n FROM services t WHERE coalesce(json_array_length(t.configs), 0) = 0',
  'INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)',
  'SELECT max(t.cost, ?) AS c, ifnull(t.hostname, ?) AS h, t.disabled = 1 AS d FROM edge_routers t WHERE t.disabled AND NOT t.no_traversal',
];

describe('translated statements', () => {
  it('PREPARE against the migrated schema', async () => {
    const failures: string[] = [];
    for (const [i, sql] of REPRESENTATIVE.entries()) {
      const text = toPostgres(sql);
      try {
        await client.query(`PREPARE rep${i} AS ${text}`);
      } catch (e) {
        failures.push(`${(e as Error).message}\n  ${sql}\n  ${text}`);
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

  it('number parameters in order, leaving ? in literals, identifiers and comments alone', () => {
    expect(toPostgres('SELECT \'?\', "a?" FROM t -- why?\nWHERE a = ? AND b = ?')).toBe(
      'SELECT \'?\' AS "\'?\'", "a?" FROM t -- why?\nWHERE a = $1 AND b = $2',
    );
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

  it('sorts NULLs first ascending and last descending', async () => {
    await same('SELECT id FROM identities ORDER BY disabled_at, id');
    await same('SELECT id FROM identities ORDER BY disabled_at DESC, id DESC');
    await same('SELECT id, row_number() OVER (ORDER BY disabled_at DESC, id) AS n FROM identities ORDER BY id');
    // a NOT NULL column keeps PostgreSQL's default placement, so that its (unique) index can still give the order
    expect(toPostgres('SELECT t.id FROM identities t ORDER BY t.name DESC, t.disabled_at')).toBe(
      'SELECT t.id FROM identities t ORDER BY t.name DESC, t.disabled_at NULLS FIRST',
    );
    await same('SELECT t.id FROM identities t ORDER BY t.name DESC');
  });

  it('LIKE is case-insensitive and keeps ESCAPE; GLOB is case-sensitive', async () => {
    await same("SELECT name FROM identities WHERE name LIKE ? ESCAPE '\\' ORDER BY name", 'DAVE\\%');
    await same('SELECT name FROM identities WHERE name LIKE ? ORDER BY name', 'ali%');
    await same("SELECT name FROM identities WHERE name NOT LIKE '%_x' ORDER BY name");
    for (const p of ['a*', 'A*', '[ab]*', '?ob', '*%', '*[_]x', '[^A]*'])
      await same('SELECT name FROM identities WHERE name GLOB ? ORDER BY name', p);
    await same("SELECT name FROM identities WHERE name NOT GLOB 'b*' ORDER BY name");
  });

  it('json_each: value and key, aliased or not, over literals and parameters', async () => {
    await same(`SELECT key, value FROM json_each('["a","b"]') ORDER BY key`);
    await same('SELECT je.key, je.value FROM json_each(?) AS je ORDER BY je.key', '["a","b"]');
    await same('SELECT json_each.value FROM json_each(?) ORDER BY json_each.value', '["b","a"]');
    await same('SELECT value FROM json_each(?) WHERE value IN (SELECT id FROM identities) ORDER BY value', '["i2","nope","i1"]');
    await same('SELECT count(*) AS n FROM json_each(NULL)');
    await same(`SELECT value FROM json_each('[{"a":1},[2]]') ORDER BY key`);
  });

  it('compares JSON tags as SQLite does (numbers as numbers, json_type names)', async () => {
    const tag = (key: string) => `json_extract(t.tags, '$."${key}"')`;
    const type = (key: string) => `json_type(t.tags, '$."${key}"')`;
    await same(`SELECT t.id FROM identities t WHERE (${type('n')} IN ('integer', 'real') AND ${tag('n')} > ?) ORDER BY t.id`, 6);
    await same(`SELECT t.id FROM identities t WHERE (${type('team')} IN ('text') AND ${tag('team')} = ?) ORDER BY t.id`, 'red');
    await same(`SELECT t.id, ${type('n')} AS ty, ${type('nope')} AS none FROM identities t ORDER BY t.id`);
    await same(`SELECT t.id FROM identities t WHERE instr(lower(${tag('team')}), lower(?)) > 0 ORDER BY t.id`, 'RE');
  });

  it('booleans selected are integers; integer columns are conditions', async () => {
    const rows = await same('SELECT id, disabled = 1 AS d, EXISTS (SELECT 1 FROM identities WHERE id = t.id) AS e FROM identities t ORDER BY id');
    expect(typeof (rows[0] as { d: unknown }).d).toBe('number');
    await same('SELECT id FROM identities t WHERE t.disabled ORDER BY id');
    await same('SELECT id FROM identities t WHERE NOT t.disabled AND (t.disabled OR 1) ORDER BY id');
    await same('SELECT sum(disabled = 1) AS s, min(coalesce(name = ?, 0)) AS m FROM identities', 'bob');
    await same('SELECT id FROM identities t WHERE NOT coalesce(instr(t.name, ?) > 0, 0) ORDER BY id', 'o');
  });

  it('names unaliased expression columns as SQLite does; a scalar subquery stays a value', async () => {
    const rows = await same("SELECT 1, max(length(name), 2), (SELECT name FROM identities WHERE id = ?) AS s FROM identities WHERE id = 'i2'", 'i1');
    expect(Object.keys(rows[0] as object)).toEqual(['1', 'max(length(name), 2)', 's']);
    expect(Object.keys((await same('SELECT count(*) FROM identities'))[0] as object)).toEqual(['count(*)']);
  });

  it('IS NOT ?, ? IS NULL, max/min of several, ifnull', async () => {
    await same('SELECT id FROM identities WHERE external_id IS NOT ? ORDER BY id', 'x');
    await same('SELECT id FROM identities WHERE (? IS NULL OR external_id = ?) ORDER BY id', null, 'x');
    await same('SELECT max(length(name), ?) AS a, min(length(name), 4) AS b, ifnull(external_id, ?) AS c FROM identities ORDER BY id', 5, '-');
  });

  it('INSERT OR IGNORE and INSERT OR REPLACE', async () => {
    const ins = 'INSERT OR IGNORE INTO policy_side_roles (kind, role_type, value, policy_id) SELECT ?, ?, value, ? FROM json_each(?)';
    await write(ins, 'identity', 'attr', 'p1', '["a","b"]');
    await write(ins, 'identity', 'attr', 'p1', '["b","c"]');
    await same('SELECT value FROM policy_side_roles ORDER BY value');
    await write('INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)', 'k', 'one');
    await write('INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)', 'k', 'two');
    await write('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value || excluded.value', 'k', '+');
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
