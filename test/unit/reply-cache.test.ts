import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplyCache } from '../../src/main/api/replyCache';
import { SqliteStore as Store } from '../../src/main/core/store/sqlite';
import { ManualClock } from '../support/clock';

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'weft-reply-cache-'));
  store = new Store(join(dir, 'weft.db'));
  await store.migrate();
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const body = (s: string) => Buffer.from(s);
const text = (b: Buffer | undefined) => b?.toString();

describe('store write generation', () => {
  it('counts writes, but not reads, writes to volatile tables only, or touches', async () => {
    const g = store.generation;
    await store.getSql('SELECT count(*) FROM identities');
    await store.allSql('SELECT id FROM services');
    expect(store.generation).toBe(g);
    await store.runSql("INSERT INTO settings (key, value) VALUES ('gen-test', '1')");
    expect(store.generation).toBe(g + 1);
    await store.runSql(
      "INSERT INTO audit_log (id, source, action, outcome, created_at, updated_at) VALUES ('a1', 'console', 'read', 'success', '', '')",
    );
    expect(store.generation).toBe(g + 1);
    await store.touchSql("UPDATE settings SET value = '2' WHERE key = 'gen-test'");
    expect(store.generation).toBe(g + 1);
    // a write that fails, or a transaction that rolls back, counts too
    await expect(
      store.tx(async () => {
        await store.runSql("UPDATE settings SET value = '3' WHERE key = 'gen-test'");
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(store.generation).toBeGreaterThan(g + 1);
  });

  it('makes rows as better-sqlite3 would (names, values, duplicates, no rows)', async () => {
    expect(await store.getSql("SELECT 1 AS a, 'x' AS b, NULL AS c, 2 AS a")).toEqual({ a: 2, b: 'x', c: null });
    expect(await store.allSql('SELECT id FROM services WHERE 1 = 0')).toEqual([]);
    expect(await store.getSql('SELECT id FROM services WHERE 1 = 0')).toBeUndefined();
    expect(await store.allSql("SELECT value AS v FROM json_each('[1,2,3]')")).toEqual([{ v: 1 }, { v: 2 }, { v: 3 }]);
  });
});

describe('ReplyCache', () => {
  it('serves an entry to its own API session only, until a write or the age limit', async () => {
    const clock = new ManualClock();
    const cache = new ReplyCache(store, clock, { maxBytes: 1 << 20, maxAgeMs: 1000 });
    cache.set('s1', '/a', body('one'), store.generation);
    cache.set(undefined, '/public', body('pub'), store.generation);
    expect(text(cache.get(ReplyCache.key('s1', '/a')))).toBe('one');
    expect(cache.get(ReplyCache.key('s2', '/a'))).toBeUndefined();
    expect(cache.get(ReplyCache.key(undefined, '/a'))).toBeUndefined();
    expect(text(cache.get(ReplyCache.key(undefined, '/public')))).toBe('pub');
    expect(cache.hasSessionEntries('/a')).toBe(true);
    expect(cache.hasSessionEntries('/public')).toBe(false);
    clock.advance(999);
    expect(text(cache.get(ReplyCache.key('s1', '/a')))).toBe('one');
    clock.advance(1);
    expect(cache.get(ReplyCache.key('s1', '/a'))).toBeUndefined();
    cache.set('s1', '/a', body('two'), store.generation);
    clock.set(new Date(clock.now().getTime() - 5));
    expect(cache.get(ReplyCache.key('s1', '/a'))).toBeUndefined(); // the clock went back
    cache.set('s1', '/a', body('three'), store.generation);
    await store.runSql("UPDATE settings SET value = '4' WHERE key = 'gen-test'");
    expect(cache.get(ReplyCache.key('s1', '/a'))).toBeUndefined();
  });

  it('keeps nothing computed before a write', async () => {
    const cache = new ReplyCache(store, new ManualClock());
    const before = store.generation;
    await store.runSql("UPDATE settings SET value = '5' WHERE key = 'gen-test'");
    cache.set('s', '/x', body('stale'), before);
    expect(cache.get(ReplyCache.key('s', '/x'))).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('stays within its byte budget, dropping the oldest entries first', () => {
    const cache = new ReplyCache(store, new ManualClock(), { maxBytes: 10_000, maxAgeMs: 1000 });
    const g = store.generation;
    for (let i = 0; i < 5000; i++) cache.set('s', `/u${i}`, body('x'.repeat(90)), g);
    expect(cache.size).toBeLessThanOrEqual(10_000 / 98);
    expect(cache.size).toBeGreaterThan(50);
    expect(cache.get(ReplyCache.key('s', '/u0'))).toBeUndefined();
    expect(text(cache.get(ReplyCache.key('s', '/u4999')))).toBe('x'.repeat(90));
    // storing a key again moves it to the back
    cache.set('s', '/u4950', body('again'), g);
    for (let i = 5000; i < 5060; i++) cache.set('s', `/u${i}`, body('x'.repeat(90)), g);
    expect(text(cache.get(ReplyCache.key('s', '/u4950')))).toBe('again');
    expect(cache.get(ReplyCache.key('s', '/u4951'))).toBeUndefined();
    // a reply larger than an eighth of the budget is not kept
    cache.set('s', '/big', body('y'.repeat(2000)), g);
    expect(cache.get(ReplyCache.key('s', '/big'))).toBeUndefined();
  });

  it('admits a URL from its second request on', () => {
    const cache = new ReplyCache(store, new ManualClock());
    const k = ReplyCache.key('s', '/once');
    expect(cache.admit(k)).toBe(false);
    expect(cache.admit(k)).toBe(true);
    expect(cache.admit(ReplyCache.key('other', '/once'))).toBe(false);
  });
});
