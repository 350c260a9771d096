import { describe, expect, it } from 'vitest';
import { filterFields, listSql } from '../../src/main/core/entities/resource';
import { identities } from '../../src/main/core/policy/identities';
import { compileFilter, type QueryFields } from '../../src/main/core/query/compile';
import { textIndexChooser } from '../../src/main/core/query/textIndex';
import { SCHEMA_MIGRATIONS } from '../../src/main/core/registry';
import type { Store } from '../../src/main/core/store/db';
import { STORE_KINDS, useBothStores } from '../support/bothStores';

/**
 * `contains` / `icontains` through each store's trigram index (SQLite: FTS5, migration 008; PostgreSQL: pg_trgm GIN,
 * migration 018) answer exactly what the unindexed predicate answers, for needles of 1, 2 and 3+ characters, with
 * LIKE's own characters, quotes and mixed case in them; writes of many callers in the same tick, failures among them,
 * keep the index in step; and the compiled statements are ones the index can serve.
 */
const NAMES = [
  'alpha',
  'Alpha-Two',
  'ALPHABET soup',
  'gamma ray',
  'Gamma RAY burst',
  'quo"te\\',
  "it's o'clock",
  'per%cent_und',
  'a_b%c',
  'back\\slash_x',
  'Éclair',
  'éclair',
  'straße',
  'STRASSE',
  'x',
  'xy',
  'identity-000001',
  'IDENTITY-001000',
];
const EXTERNAL = (i: number) => (i % 3 === 0 ? null : `ext-${NAMES[i]!.toUpperCase()}-${i}`);
const NOW = '2026-01-01T00:00:00.000Z';

async function insertIdentity(s: Store, id: string, name: string, externalId: string | null = null): Promise<void> {
  await s.runSql(
    'INSERT INTO identities (id, name, type_id, auth_policy_id, external_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    id,
    name,
    'Device',
    'default',
    externalId,
    NOW,
    NOW,
  );
}

const stores = useBothStores([...SCHEMA_MIGRATIONS], async (s) => {
  await s.tx(async () => {
    if (!(await s.getSql("SELECT 1 FROM identity_types WHERE id = 'Device'"))) {
      await s.runSql("INSERT INTO identity_types (id, name, created_at, updated_at) VALUES ('Device', 'Device', ?, ?)", NOW, NOW);
    }
    if (!(await s.getSql("SELECT 1 FROM auth_policies WHERE id = 'default'"))) {
      await s.runSql(
        "INSERT INTO auth_policies (id, name, primary_json, secondary_json, created_at, updated_at) VALUES ('default', 'Default', '{}', '{}', ?, ?)",
        NOW,
        NOW,
      );
    }
    for (const [i, name] of NAMES.entries()) await insertIdentity(s, `id-${String(i).padStart(2, '0')}`, name, EXTERNAL(i));
  });
});

const indexed = filterFields(identities);
const plain: QueryFields = Object.fromEntries(Object.entries(indexed).map(([k, f]) => [k, f.kind === 'scalar' ? { ...f, text: undefined } : f]));

/** Every substring of 1..4 characters of every name, as it is, upper and lower case, plus a few strangers. */
function needles(): string[] {
  const out = new Set<string>(['zzz', '%', '_', '%%', '\\', '\\s', 'r%c', '%cent', 'a_b', '_b%', '"te', "'s", "o'c", 'ÉCLAIR', 'ss', 'ß']);
  for (const n of NAMES) {
    const chars = [...n];
    for (let len = 1; len <= 4; len++) {
      for (let i = 0; i + len <= chars.length; i++) {
        const s = chars.slice(i, i + len).join('');
        for (const v of [s, s.toUpperCase(), s.toLowerCase()]) out.add(v);
      }
    }
  }
  return [...out];
}

const literal = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

describe.each(STORE_KINDS)('%s store: contains / icontains through the trigram index', (kind) => {
  const store = () => stores[kind];

  /** The ids the unindexed predicate selects. */
  const scanned = async (filter: string) => {
    const q = compileFilter(filter, plain, { sql: store().sql, tagsSql: 't.tags' });
    return (await store().allSql<{ id: string }>(`SELECT t.id FROM identities t WHERE ${q.where} ORDER BY t.id`, ...q.params)).map((r) => r.id);
  };
  /** The count and the page (ids, sorted) of the list as Weft runs it: the index where its chooser picks it. */
  const listed = async (filter: string) => {
    const q = await listSql(identities, { filter, limit: 500 }, {}, store());
    const count = (await store().getSql<{ n: number }>(q.countSql, ...q.args))!.n;
    const page = (await store().allSql<{ id: string }>(q.pageSql, ...q.args, q.limit, q.offset)).map((r) => r.id).sort();
    return { count: Number(count), page, sql: q.countSql };
  };

  it('answers every needle exactly as the unindexed predicate does', async () => {
    let compared = 0;
    for (const needle of needles()) {
      for (const field of ['name', 'externalId']) {
        for (const op of ['contains', 'icontains']) {
          const filter = `${field} ${op} ${literal(needle)}`;
          const expected = await scanned(filter);
          const got = await listed(filter);
          expect(got.page, filter).toEqual(expected);
          expect(got.count, filter).toBe(expected.length);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('writes the index predicate for needles of 3 characters or more only, and the planner can use the index for it', async () => {
    const index = kind === 'sqlite' ? 'MATCH' : 'LIKE';
    expect((await listed('name contains "pha"')).sql).toContain(index);
    expect((await listed('name icontains "PHA"')).sql).toContain(kind === 'sqlite' ? 'MATCH' : 'ILIKE');
    expect((await listed('name contains "ph"')).sql).not.toContain(index);
    expect((await listed('name not contains "pha"')).sql).not.toContain(index);
    const q = await listSql(identities, { filter: 'name icontains "Alpha-T"', limit: 10 }, {}, store());
    const plan = await store().tx(async () => {
      // the statement's shape lets the index serve it (with 20 rows a scan is cheaper, so PostgreSQL is told to avoid one)
      if (kind === 'postgres') await store().runSql('SET LOCAL enable_seqscan = off');
      const explain = kind === 'sqlite' ? 'EXPLAIN QUERY PLAN ' : 'EXPLAIN ';
      const rows = await store().allSql<Record<string, string>>(explain + q.pageSql, ...q.args, q.limit, q.offset);
      return rows.map((r) => Object.values(r).join(' ')).join('\n');
    });
    expect(plan).toContain(kind === 'sqlite' ? 'identities_fts VIRTUAL TABLE INDEX' : 'identities_name_trgm');
  });

  it('keeps the index in step with creates, renames and deletes of many callers in the same tick, failures among them', async () => {
    const s = store();
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 8 }, (_, i) => s.tx(() => insertIdentity(s, `tick-${i}`, `Tick Mark ${i}`, `EXT-TICK-${i}`))),
      // a duplicate name: refused, leaves nothing behind
      s.tx(async () => {
        await insertIdentity(s, 'tick-dup-a', 'Tick Duplicate');
        await insertIdentity(s, 'tick-dup-b', 'Tick Duplicate');
      }),
      s.tx(() => s.runSql('UPDATE identities SET name = ? WHERE id = ?', 'Renamed Gamma', 'id-03')),
      s.tx(() => s.runSql('DELETE FROM identities WHERE id = ?', 'id-04')),
      // a rename onto an existing name: refused, the old name stays found
      s.tx(() => s.runSql('UPDATE identities SET name = ? WHERE id = ?', 'alpha', 'id-01')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([...Array(8).fill('fulfilled'), 'rejected', 'fulfilled', 'fulfilled', 'rejected']);
    const check = async (filter: string, expected: string[]) => {
      expect(await scanned(filter), filter).toEqual(expected);
      const got = await listed(filter);
      expect(got.page, filter).toEqual(expected);
      expect(got.count, filter).toBe(expected.length);
    };
    await check(
      'name icontains "tick mark"',
      Array.from({ length: 8 }, (_, i) => `tick-${i}`),
    );
    await check('externalId contains "EXT-TICK-3"', ['tick-3']);
    await check('name contains "Duplicate"', []);
    await check('name contains "Renamed Gam"', ['id-03']);
    await check('name icontains "gamma ray"', []);
    await check('name contains "RAY burst"', []);
    await check('name contains "Alpha-Two"', ['id-01']);
    for (const needle of needles()) {
      for (const op of ['contains', 'icontains']) {
        const filter = `name ${op} ${literal(needle)}`;
        expect((await listed(filter)).page, filter).toEqual(await scanned(filter));
      }
    }
    if (kind === 'sqlite') await s.runSql("INSERT INTO identities_fts(identities_fts, rank) VALUES ('integrity-check', 1)");
  });

  it('lets the store choose: the chooser answers for every needle', async () => {
    const chooser = await textIndexChooser(store(), 'name contains "alpha"', indexed, { tagsSql: 't.tags' });
    const answer = chooser({ fts: 'identities_fts', column: 'name', rowid: 't.rowid' }, 'alpha');
    // SQLite picks the rarest trigrams (or a scan); PostgreSQL always writes the LIKE and its planner decides
    expect(kind === 'postgres' ? answer === true : answer === false || Array.isArray(answer)).toBe(true);
  });
});
