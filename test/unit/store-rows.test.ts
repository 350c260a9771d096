import { beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { Migration, Store } from '../../src/main/core/store/db';
import { allRows, decodeRow, getRow, json, rowShape, selectList } from '../../src/main/core/store/rows';
import { STORE_KINDS, useBothStores } from '../support/bothStores';

/** Rows decoded through codecs (store/rows.ts) read the same on both stores: bool, int, json, datetime and NULL. */

const THINGS: Migration = {
  version: 1,
  name: 'things',
  up: (db) =>
    db.exec(`CREATE TABLE things (
      id TEXT PRIMARY KEY, n INTEGER NOT NULL, flag INTEGER NOT NULL, data TEXT NOT NULL, maybe TEXT, at TEXT, label TEXT
    )`),
};

const THING = rowShape({
  id: 'string',
  n: 'int',
  flag: 'bool',
  data: json<{ tags: string[]; nested: { on: boolean } }>(),
  maybe: json<string[]>('?'),
  at: 'datetime?',
  label: 'string?',
});

const stores = useBothStores([THINGS]);

describe.each(STORE_KINDS)('%s store: rows decoded through codecs', (kind) => {
  let store: Store;
  beforeEach(async () => {
    store = stores[kind];
    await store.runSql('DELETE FROM things');
    await store.runSql(
      'INSERT INTO things (id, n, flag, data, maybe, at, label) VALUES (?, ?, ?, ?, ?, ?, ?)',
      'a',
      42,
      true,
      JSON.stringify({ tags: ['x', 'y'], nested: { on: true } }),
      null,
      '2024-01-02T03:04:05.678Z',
      null,
    );
    await store.runSql(
      'INSERT INTO things (id, n, flag, data, maybe) VALUES (?, ?, ?, ?, ?)',
      'b',
      -7,
      false,
      '{"tags":[],"nested":{"on":false}}',
      '["m"]',
    );
  });

  it('decodes bool, int, json and keeps NULL as null', async () => {
    const a = await getRow(store, THING, `SELECT ${selectList(THING)} FROM things WHERE id = ?`, 'a');
    expect(a).toEqual({
      id: 'a',
      n: 42,
      flag: true,
      data: { tags: ['x', 'y'], nested: { on: true } },
      maybe: null,
      at: '2024-01-02T03:04:05.678Z',
      label: null,
    });
    const b = await getRow(store, THING, 'SELECT * FROM things WHERE id = ?', 'b');
    expect(b).toMatchObject({ n: -7, flag: false, maybe: ['m'], at: null });
    expectTypeOf(a!).toEqualTypeOf<{
      id: string;
      n: number;
      flag: boolean;
      data: { tags: string[]; nested: { on: boolean } };
      maybe: string[] | null;
      at: string | null;
      label: string | null;
    }>();
  });

  it('reads computed values alike: counts, comparisons (a boolean on PostgreSQL), absent columns', async () => {
    const shape = rowShape({ total: 'int', any_on: 'bool', none: 'bool', missing: 'string?' });
    const row = await getRow(store, shape, 'SELECT count(*) AS total, max(n) > 0 AS any_on, min(n) > 100 AS none FROM things');
    expect(row).toEqual({ total: 2, any_on: true, none: false, missing: null });
    const rows = await allRows(store, rowShape({ id: 'string', flag: 'bool' }), 'SELECT id, flag FROM things ORDER BY id');
    expect(rows).toEqual([
      { id: 'a', flag: true },
      { id: 'b', flag: false },
    ]);
    expect(await getRow(store, THING, 'SELECT * FROM things WHERE id = ?', 'none')).toBeUndefined();
  });

  it('keeps only the shape’s columns, and decoding a decoded row changes nothing', async () => {
    const raw = (await store.getSql('SELECT * FROM things WHERE id = ?', 'a'))!;
    const narrow = decodeRow(rowShape({ id: 'string', data: json<{ tags: string[] }>() }), raw);
    expect(Object.keys(narrow)).toEqual(['id', 'data']);
    const full = decodeRow(THING, raw);
    expect(decodeRow(THING, full)).toEqual(full);
    expect(JSON.stringify(full)).toBe(JSON.stringify({ ...full }));
  });
});
