import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../src/main/core/query/compile';
import { scalar } from '../../src/main/core/query/fields';
import type { Migration } from '../../src/main/core/store/db';
import { STORE_KINDS, useBothStores } from '../support/bothStores';

/**
 * Each store's SQL helpers (`store.sql`), used as the code uses them: in statements run through the store, and in a
 * migration (`db.sql`). The same statements give the same rows on both.
 */

const ITEMS: Migration = {
  version: 1,
  name: 'items',
  up: (db) =>
    db.exec(`
CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL, label TEXT, data TEXT NOT NULL DEFAULT '{}', at TEXT NOT NULL);
CREATE INDEX items_label ON items(label);
INSERT INTO items (id, n, label, data, at) VALUES ('seed', 0, NULL, '{"tags":["x"]}', ${db.sql.now()});`),
};

const stores = useBothStores([ITEMS], async (s) => {
  for (const [id, n, label, data] of [
    ['a', 1, 'Alpha', '{"tags":["red","blue"],"k":{"v":3}}'],
    ['b', 2, null, '{"tags":[]}'],
    ['c', 3, 'gamma%', '{"tags":["red"],"k":{"v":"3"}}'],
  ] as const) {
    await s.runSql('INSERT INTO items (id, n, label, data, at) VALUES (?, ?, ?, ?, ?)', id, n, label, data, '2026-01-01T00:00:00.000Z');
  }
});

describe.each(STORE_KINDS)('%s store: its SQL helpers', (kind) => {
  const store = () => stores[kind];
  const ids = async (sql: string, ...params: unknown[]) => (await store().allSql<{ id: string }>(sql, ...params)).map((r) => r.id);

  it('is the store’s own, and a migration writes with it (now(): ISO 8601 UTC with milliseconds)', async () => {
    expect(store().sql.name).toBe(kind);
    const seed = await store().getSql<{ at: string }>("SELECT at FROM items WHERE id = 'seed'");
    expect(seed!.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('jsonValues: text and integer elements of a parameter, for IN', async () => {
    const { sql } = store();
    expect(await ids(`SELECT id FROM items WHERE id IN ${sql.jsonValues()} ORDER BY id`, JSON.stringify(['c', 'a', 'zz']))).toEqual(['a', 'c']);
    expect(await ids(`SELECT id FROM items WHERE n IN ${sql.jsonValues('?', 'integer')} ORDER BY id`, JSON.stringify([2, 3]))).toEqual(['b', 'c']);
  });

  it('jsonEach over a column (with a path), jsonExtract, jsonNumber, jsonType, jsonArrayLength, jsonValid', async () => {
    const { sql } = store();
    expect(
      await ids(
        `SELECT t.id FROM items t WHERE EXISTS (SELECT 1 FROM ${sql.jsonEach('t.data', 'e', '$.tags')} WHERE e.value = ?) ORDER BY t.id`,
        'red',
      ),
    ).toEqual(['a', 'c']);
    expect(await ids(`SELECT id FROM items WHERE coalesce(${sql.jsonArrayLength(sql.jsonExtract('data', '$.tags'))}, 0) = 0 ORDER BY id`)).toEqual([
      'b',
    ]);
    expect(
      await ids(`SELECT id FROM items WHERE ${sql.jsonType('data', '$.k.v')} IN ('integer', 'real') AND ${sql.jsonNumber('data', '$.k.v')} > ?`, 2),
    ).toEqual(['a']);
    expect(await ids(`SELECT id FROM items WHERE ${sql.jsonExtract('data', '$.k.v')} = ? ORDER BY id`, '3')).toEqual(
      kind === 'sqlite' ? ['c'] : ['a', 'c'],
    );
    expect(await ids(`SELECT id FROM items WHERE ${sql.jsonValid('data')} AND NOT ${sql.jsonValid("'{'")} ORDER BY id`)).toEqual([
      'a',
      'b',
      'c',
      'seed',
    ]);
  });

  it('like (case-insensitive, escaped or not), instr, asInt and notTrue', async () => {
    const { sql } = store();
    expect(await ids(`SELECT id FROM items WHERE ${sql.like('label', '?')} ORDER BY id`, 'ALPHA')).toEqual(['a']);
    expect(await ids(`SELECT id FROM items WHERE ${sql.like('label', '?', '\\')} ORDER BY id`, 'GAMMA\\%')).toEqual(['c']);
    expect(await ids(`SELECT id FROM items WHERE ${sql.instr('label', '?')} = 2 ORDER BY id`, 'lph')).toEqual(['a']);
    const sum = await store().getSql<{ s: number }>(`SELECT sum(${sql.asInt('n > 1')}) AS s FROM items`);
    expect(sum!.s).toBe(2);
    expect(await ids(`SELECT id FROM items WHERE ${sql.notTrue('label = ?')} ORDER BY id`, 'Alpha')).toEqual(['b', 'c', 'seed']);
  });

  it('ZitiQL compiled with them: long `in` lists of numbers and strings, tags, negations', async () => {
    const fields = { id: scalar('string', 't.id'), n: scalar('number', 't.n'), label: scalar('string', 't.label') };
    const where = async (filter: string) => {
      const q = compileFilter(filter, fields, { sql: store().sql, tagsSql: 't.data' });
      return ids(`SELECT t.id FROM items t WHERE ${q.where} ORDER BY t.id`, ...q.params);
    };
    const many = (f: (i: number) => string) => Array.from({ length: 60 }, (_, i) => f(i)).join(', ');
    expect(await where(`n in [${many((i) => String(i + 2))}]`)).toEqual(['b', 'c']);
    expect(await where(`id in [${many((i) => `"x${i}"`)}, "a"]`)).toEqual(['a']);
    expect(await where('not label icontains "ALP"')).toEqual(['b', 'c', 'seed']);
    expect(await where('label != "Alpha"')).toEqual(['b', 'c', 'seed']);
    expect(await where('tags.k = 1')).toEqual([]);
  });

  it('orderBy places NULLs as SQLite does, and leaves a NOT NULL column as written (the store knows which are)', async () => {
    const { sql } = store();
    expect(await ids(`SELECT id FROM items ORDER BY ${sql.orderBy('label', 'ASC', 'items')}, id`)).toEqual(['b', 'seed', 'a', 'c']);
    expect(await ids(`SELECT id FROM items ORDER BY ${sql.orderBy('label', 'DESC', 'items')}, id`)).toEqual(['c', 'a', 'b', 'seed']);
    expect(sql.orderBy('t.n', 'DESC', 'items')).toBe('t.n DESC');
    expect(sql.orderBy('t.label', 'ASC', 'items')).toBe(kind === 'sqlite' ? 't.label ASC' : 't.label ASC NULLS FIRST');
  });
});
