import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identities } from '../../src/main/core/policy/identities';
import { filterFields, listSql } from '../../src/main/core/entities/resource';
import { compileFilter, type QueryFields } from '../../src/main/core/query/compile';
import { TEXT_INDEXES, textIndexChooser, trigrams } from '../../src/main/core/query/textIndex';
import { SqliteStore as Store } from '../../src/main/core/store/sqlite';

/**
 * `contains` / `icontains` through the trigram indexes (migration 008) must answer exactly what the plain scan
 * answers: the same filters are compiled with and without the index and run on the same rows.
 */
const NAMES = [
  'alpha',
  'Alpha-Two',
  'ALPHABET soup',
  'beta',
  'gamma ray',
  'Gamma RAY burst',
  'quo"te\\',
  'per%cent_und',
  'a_b%c',
  'Éclair',
  'éclair',
  'straße',
  'STRASSE',
  'İstanbul',
  'istanbul',
  'emoji 😀 face',
  '😀😀😀',
  'x',
  'xy',
  'xyz',
  '  spaced  out ',
  'identity-000001',
  'identity-000010',
  'identity-000100',
  'IDENTITY-001000',
  'tab\there',
  'newline\nname',
  'dup dup dup',
];
const EXTERNAL = (i: number) => (i % 3 === 0 ? null : `ext-${NAMES[i]!.toUpperCase()}-${i}`);

let dir: string;
let store: Store;
let indexed: QueryFields;
let plain: QueryFields;

/** The ids `filter` selects; `choose`: with the chooser (textIndexChooser) deciding per needle whether the index serves. */
async function ids(fields: QueryFields, filter: string, choose = false): Promise<string[]> {
  const chooser = choose ? await textIndexChooser(store, filter, fields, { tagsSql: 't.tags' }) : undefined;
  const q = compileFilter(filter, fields, { tagsSql: 't.tags', ...(chooser ? { useTextIndex: chooser } : {}) });
  return (await store.allSql<{ id: string }>(`SELECT t.id FROM identities t WHERE ${q.where} ORDER BY t.id`, ...q.params)).map((r) => r.id);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'weft-fts-'));
  store = new Store(join(dir, 'weft.db'));
  await store.migrate();
  store.sqlite.pragma('foreign_keys = OFF');
  const now = new Date(0).toISOString();
  for (const [i, name] of NAMES.entries()) {
    await store.runSql(
      'INSERT INTO identities (id, name, type_id, auth_policy_id, external_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      `id-${String(i).padStart(2, '0')}`,
      name,
      'Device',
      'default',
      EXTERNAL(i),
      now,
      now,
    );
  }
  indexed = filterFields(identities);
  plain = Object.fromEntries(Object.entries(indexed).map(([k, f]) => [k, f.kind === 'scalar' ? { ...f, text: undefined } : f]));
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every substring of 1..5 characters of every name, in its own case, upper and lower case, plus a few strangers. */
function needles(): string[] {
  const out = new Set<string>([
    '',
    'zzz',
    'ALPHA',
    'alp',
    'ray',
    'RAY',
    '%',
    '_',
    '%c',
    'r%c',
    '%cent',
    'a_b',
    '"te',
    'te\\',
    '\\',
    'ÉCLAIR',
    'ecl',
    'clair',
    'STRASSE',
    'straße',
    'ss',
    'ß',
    'İst',
    'ist',
    'i̇st',
    '😀',
    '😀😀',
    '😀 f',
    ' out',
    'dup dup',
    'p d',
    'ab\tc',
    'ne\nn',
    '0001',
    '00-0',
    'ity-00',
    'Y-00',
  ]);
  for (const n of NAMES) {
    const chars = [...n];
    for (let len = 1; len <= 5; len++) {
      for (let i = 0; i + len <= chars.length; i++) {
        const s = chars.slice(i, i + len).join('');
        out.add(s);
        out.add(s.toUpperCase());
        out.add(s.toLowerCase());
      }
    }
  }
  return [...out];
}

const literal = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;

describe('trigram index for contains / icontains', () => {
  it('marks the indexed string fields of a resource, and only those', () => {
    expect(indexed.name).toMatchObject({ text: { fts: 'identities_fts', column: 'name', rowid: 't.rowid' } });
    expect(indexed.externalId).toMatchObject({ text: { fts: 'identities_fts', column: 'external_id' } });
    expect((indexed.type as { text?: unknown }).text).toBeUndefined();
    expect((indexed.id as { text?: unknown }).text).toBeUndefined();
  });

  it('uses the index for needles of 3 characters or more, and scans for shorter ones and for negations', () => {
    expect(compileFilter('name contains "abc"', indexed).where).toContain('identities_fts MATCH ?');
    expect(compileFilter('name icontains "abc"', indexed).where).toContain('identities_fts MATCH ?');
    expect(compileFilter('name contains "ab"', indexed).where).not.toContain('MATCH');
    expect(compileFilter('name contains "😀😀"', indexed).where).not.toContain('MATCH');
    expect(compileFilter('name not contains "abc"', indexed).where).not.toContain('MATCH');
    // the needle travels as a parameter, quoted for FTS5
    expect(compileFilter('name contains "a\\"bc"', indexed).params).toEqual(['{name} : "a""bc"', 'a"bc']);
  });

  it('answers every contains / icontains / not contains exactly as the scan does, on both indexed columns', async () => {
    let compared = 0;
    for (const needle of needles()) {
      for (const field of ['name', 'externalId']) {
        for (const op of ['contains', 'icontains', 'not contains', 'not icontains']) {
          const filter = `${field} ${op} ${literal(needle)}`;
          const expected = await ids(plain, filter);
          expect(await ids(indexed, filter), filter).toEqual(expected);
          expect(await ids(indexed, filter, true), filter).toEqual(expected);
          expect(await ids(indexed, `not (${filter})`), `not (${filter})`).toEqual(await ids(plain, `not (${filter})`));
          compared++;
        }
      }
      expect(await ids(indexed, `name contains ${literal(needle)} or externalId icontains ${literal(needle)}`)).toEqual(
        await ids(plain, `name contains ${literal(needle)} or externalId icontains ${literal(needle)}`),
      );
    }
    expect(compared).toBeGreaterThan(2000);
  });

  it('matches numbers as text, as the scan does', async () => {
    for (const f of ['name contains 1000', 'name contains 100', 'name contains 1']) expect(await ids(indexed, f)).toEqual(await ids(plain, f));
    expect(await ids(indexed, 'name contains 100')).toEqual(['id-23', 'id-24']);
  });

  it('follows inserts, renames and deletes (the triggers keep the index in step)', async () => {
    const now = new Date(0).toISOString();
    await store.runSql(
      'INSERT INTO identities (id, name, type_id, auth_policy_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      'zz-new',
      'Brand New Name',
      'Device',
      'default',
      now,
      now,
    );
    expect(await ids(indexed, 'name icontains "brand new"')).toEqual(['zz-new']);
    await store.runSql('UPDATE identities SET name = ?, external_id = ? WHERE id = ?', 'renamed thing', 'EXT-RENAMED', 'zz-new');
    expect(await ids(indexed, 'name icontains "brand new"')).toEqual([]);
    expect(await ids(indexed, 'name contains "renamed"')).toEqual(['zz-new']);
    expect(await ids(indexed, 'externalId contains "RENAMED"')).toEqual(['zz-new']);
    expect(await ids(indexed, 'externalId contains "renamed"')).toEqual([]);
    // an update of other columns leaves the index alone and right
    await store.runSql('UPDATE identities SET is_admin = 1 WHERE id = ?', 'zz-new');
    expect(await ids(indexed, 'name contains "renamed"')).toEqual(['zz-new']);
    await store.runSql('DELETE FROM identities WHERE id = ?', 'zz-new');
    expect(await ids(indexed, 'name contains "renamed"')).toEqual([]);
    expect(
      (await store.getSql<{ ok: number }>('SELECT count(*) AS ok FROM identities_fts WHERE identities_fts MATCH \'{name} : "renamed"\''))!.ok,
    ).toBe(0);
    await store.runSql("INSERT INTO identities_fts(identities_fts, rank) VALUES ('integrity-check', 1)");
  });

  it('lists through the index and the scan alike (the chooser picks a scan for trigrams most rows hold)', async () => {
    const page = async (filter: string) => {
      const q = await listSql(identities, { filter, limit: 100 }, {}, store);
      return { sql: q.countSql, rows: (await store.allSql<{ id: string }>(q.pageSql, ...q.args, q.limit, q.offset)).map((r) => r.id) };
    };
    const rare = await page('name icontains "straSSE"');
    expect(rare.sql).toContain('MATCH');
    expect(rare.rows).toEqual(['id-12']);
    for (let i = 0; i < 1200; i++) {
      await store.runSql(
        'INSERT INTO identities (id, name, type_id, auth_policy_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
        `bulk-${i}`,
        `common-${i}`,
        'Device',
        'default',
        '',
        '',
      );
    }
    const common = await page('name contains "common"');
    expect(common.sql).not.toContain('MATCH');
    expect(common.rows.length).toBe(100);
    expect(await ids(indexed, 'name contains "common"', true)).toEqual(await ids(plain, 'name contains "common"'));

    // a long needle whose first trigrams most rows hold: the index matches its two rarest trigrams only (intersecting
    // the common ones' position lists cost more than they narrow), and the exact predicate decides
    const long = await listSql(identities, { filter: 'name contains "common-77"', limit: 100 }, {}, store);
    expect(long.countSql).toContain('MATCH');
    const match = long.args[0] as string;
    expect(match).toMatch(/^\{name\} : \("[^"]{3}" AND "[^"]{3}"\)$/);
    expect(match).toContain('"-77"');
    expect(match).not.toContain('"com"');
    expect(await ids(indexed, 'name contains "common-77"', true)).toEqual(await ids(plain, 'name contains "common-77"'));
    // counts follow writes: once most rows hold "-77" too, the chooser scans
    for (let i = 0; i < 1200; i++) await store.runSql('UPDATE identities SET name = ? WHERE id = ?', `common-77-${i}`, `bulk-${i}`);
    expect((await listSql(identities, { filter: 'name contains "common-77"', limit: 100 }, {}, store)).countSql).not.toContain('MATCH');
    expect(await ids(indexed, 'name contains "common-77"', true)).toEqual(await ids(plain, 'name contains "common-77"'));
  });

  it('computes the trigrams the index holds', () => {
    expect(trigrams('AbCd')).toEqual(['abc', 'bcd']);
    expect(trigrams('ab')).toEqual([]);
    expect(trigrams('😀😀😀')).toEqual(['😀😀😀']);
  });

  it('declares exactly the indexes the migrations created', async () => {
    const tables = await store.allSql<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5(%'",
    );
    const actual: Record<string, string[]> = {};
    for (const { name } of tables) {
      actual[name.replace(/_fts$/, '')] = (await store.allSql<{ name: string }>(`PRAGMA table_info(${name})`)).map((c) => c.name);
    }
    expect(actual).toEqual(Object.fromEntries(Object.entries(TEXT_INDEXES).map(([t, c]) => [t, [...c]])));
  });
});
