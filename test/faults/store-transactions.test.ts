import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { constraintBroken, StoreUnavailableError, type Migration, type Store } from '../../src/main/core/store/db';
import { PostgresStore } from '../../src/main/core/store/postgres';
import { rng as seededRandom } from '../support/policyModel';
import { STORE_KINDS, useBothStores } from '../support/bothStores';

/**
 * Ownership of the store's connections, driven by many callers started in the same tick, on both stores: every
 * committed transaction's writes are there, every failed one's are not, nothing that did nothing wrong fails, and a
 * statement never lands in someone else's transaction.
 */

const ITEMS: Migration = {
  version: 1,
  name: 'items',
  up: (db) => db.exec('CREATE TABLE items (id TEXT PRIMARY KEY, owner TEXT NOT NULL)'),
};

class Planned extends Error {}

const stores = useBothStores([ITEMS]);

describe.each(STORE_KINDS)('%s store: transactions started in the same tick', (kind) => {
  let store: Store;
  beforeEach(async () => {
    store = stores[kind];
    await store.runSql('DELETE FROM items');
  });
  const insert = (id: string, owner = id) => store.runSql('INSERT INTO items (id, owner) VALUES (?, ?)', id, owner);
  const ids = async () => (await store.allSql<{ id: string }>('SELECT id FROM items ORDER BY id')).map((r) => r.id);

  it('a transaction that fails takes no other transaction’s write with it', async () => {
    const a = store.tx(async () => {
      await insert('a');
      throw new Planned('a fails');
    });
    const b = store.tx(async () => void (await insert('b')));
    await expect(a).rejects.toBeInstanceOf(Planned);
    await b;
    expect(await ids()).toEqual(['b']);
  });

  it('the second of two transactions is not a savepoint of the first, whichever ends first', async () => {
    const a = store.tx(async () => void (await insert('a')));
    const b = store.tx(async () => {
      await insert('b1');
      await Promise.resolve();
      await insert('b2');
    });
    const c = store.tx(async () => {
      await insert('c');
      throw new Planned('c fails');
    });
    const [ra, rb, rc] = await Promise.allSettled([a, b, c]);
    expect([ra.status, rb.status]).toEqual(['fulfilled', 'fulfilled']);
    expect(rc.status === 'rejected' && rc.reason instanceof Planned).toBe(true);
    expect(await ids()).toEqual(['a', 'b1', 'b2']);
  });

  it('a statement from outside never runs inside an open transaction', async () => {
    let inserted!: () => void;
    const started = new Promise<void>((r) => (inserted = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const a = store.tx(async () => {
      await insert('a');
      inserted();
      await gate;
      throw new Planned('a fails after the outside write was issued');
    });
    await started;
    const outside = insert('outside');
    const outsideRead = store.getSql<{ n: number }>('SELECT count(*) AS n FROM items');
    release();
    await expect(a).rejects.toBeInstanceOf(Planned);
    await outside;
    // the read saw no uncommitted row of the transaction
    expect((await outsideRead)!.n).toBeLessThanOrEqual(1);
    expect(await ids()).toEqual(['outside']);
  });

  it('nested transactions started together inside one run one at a time, each rolled back alone', async () => {
    const results = await store.tx(async () => {
      await insert('outer');
      return Promise.allSettled([
        store.tx(async () => {
          await insert('n1');
          throw new Planned('n1 fails');
        }),
        store.tx(async () => void (await insert('n2'))),
        store.tx(async () => {
          await insert('n3');
          await Promise.resolve();
          await store.tx(async () => void (await insert('n3-inner')));
          await insert('n4');
        }),
        store.tx(async () => {
          await store.tx(async () => void (await insert('n5-inner')));
          throw new Planned('n5 fails after its inner one committed into it');
        }),
      ]);
    });
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'rejected']);
    expect(await ids()).toEqual(['n2', 'n3', 'n3-inner', 'n4', 'outer']);
  });

  it('a savepoint rolled back reports no change to watchers', async () => {
    await insert('kept');
    await insert('marker');
    const deleted: string[] = [];
    let sawMarker!: () => void;
    const marker = new Promise<void>((r) => (sawMarker = r));
    const unwatch = store.watch('items', 'delete', (gone) => {
      deleted.push(...gone);
      if (gone.includes('marker')) sawMarker();
    });
    try {
      await store.tx(async () => {
        await store
          .tx(async () => {
            await store.runSql('DELETE FROM items WHERE id = ?', 'kept');
            throw new Planned('rolled back');
          })
          .catch(() => undefined);
        await store.runSql('DELETE FROM items WHERE id = ?', 'marker');
      });
      await marker;
      expect(deleted).toEqual(['marker']);
      expect(await ids()).toEqual(['kept']);
    } finally {
      unwatch();
    }
  });

  it('inserts are told once committed, with their ids; a rolled-back one is not', async () => {
    const inserted: string[] = [];
    let sawMarker!: () => void;
    const marker = new Promise<void>((r) => (sawMarker = r));
    const unwatch = store.watch('items', 'insert', (ids) => {
      inserted.push(...ids);
      if (ids.includes('new-marker')) sawMarker();
    });
    try {
      await Promise.allSettled([
        store.tx(async () => {
          await insert('new-kept');
          await store
            .tx(async () => {
              await insert('new-rolled-back');
              throw new Planned('rolled back');
            })
            .catch(() => undefined);
        }),
        store.tx(async () => {
          await insert('new-failed');
          throw new Planned('the whole transaction fails');
        }),
      ]);
      await insert('new-marker');
      await marker;
      expect(inserted.sort()).toEqual(['new-kept', 'new-marker']);
    } finally {
      unwatch();
    }
  });

  it('many transactions in one tick, with nested ones, reads between and random failures: nothing acknowledged is lost', async () => {
    const random = seededRandom(20261127);
    const expected = new Set<string>();
    const work: Promise<unknown>[] = [];
    for (let t = 0; t < 80; t++) {
      const name = `t${String(t).padStart(2, '0')}`;
      const roll = random();
      if (roll < 0.15) {
        // a single statement outside any transaction: acknowledged when it resolves
        work.push(insert(name).then(() => expected.add(name)));
        continue;
      }
      if (roll < 0.25) {
        work.push(store.read(async () => (await store.allSql('SELECT id FROM items')).length));
        continue;
      }
      const fails = random() < 0.3;
      const nestedFails = random() < 0.5;
      const mine: string[] = [];
      work.push(
        store
          .tx(async () => {
            await insert(`${name}-a`);
            mine.push(`${name}-a`);
            if (random() < 0.5) await store.getSql('SELECT count(*) AS n FROM items');
            const nested = await store
              .tx(async () => {
                await insert(`${name}-n`);
                if (nestedFails) throw new Planned('nested fails');
              })
              .then(
                () => true,
                (e: unknown) => {
                  if (!(e instanceof Planned)) throw e;
                  return false;
                },
              );
            if (nested) mine.push(`${name}-n`);
            await insert(`${name}-b`);
            mine.push(`${name}-b`);
            if (fails) throw new Planned('fails');
          })
          .then(
            () => mine.forEach((id) => expected.add(id)),
            (e: unknown) => {
              if (!(e instanceof Planned)) throw e;
            },
          ),
      );
    }
    // no error but the planned ones
    await Promise.all(work);
    expect(await ids()).toEqual([...expected].sort());
  });

  it('queued writes: read in their place by what follows; one that fails fails its transaction with its own error, even as the last statement before COMMIT', async () => {
    await insert('taken');
    // read by the statement after it
    await store.tx(async () => {
      await store.queueSql('INSERT INTO items (id, owner) VALUES (?, ?)', 'q1', 'q');
      expect(await store.allSql('SELECT id FROM items WHERE owner = ?', 'q')).toEqual([{ id: 'q1' }]);
    });
    const failing = (last: boolean) =>
      store.tx(async () => {
        await insert(`${last}-before`);
        await store.queueSql('INSERT INTO items (id, owner) VALUES (?, ?)', 'taken', 'dup');
        // the failure is raised here (in place of the refusals it causes), or, queued last, at COMMIT
        if (!last) await store.getSql('SELECT count(*) AS n FROM items');
      });
    const outcomes = await Promise.allSettled([
      failing(true),
      failing(false),
      store.tx(() => store.queueSql('INSERT INTO items (id, owner) VALUES (?, ?)', 'q2', 'q')),
    ]);
    for (const o of outcomes.slice(0, 2)) expect(o.status === 'rejected' && constraintBroken(o.reason)?.kind).toBe('unique');
    expect(outcomes[2]!.status).toBe('fulfilled');
    expect(await ids()).toEqual(['q1', 'q2', 'taken']);
    // and in a savepoint it is waited for: the savepoint fails alone
    await store.tx(async () => {
      await expect(store.tx(() => store.queueSql('INSERT INTO items (id, owner) VALUES (?, ?)', 'taken', 'dup'))).rejects.toSatisfy(
        (e: unknown) => constraintBroken(e)?.kind === 'unique',
      );
      await store.queueSql('INSERT INTO items (id, owner) VALUES (?, ?)', 'q3', 'q');
    });
    expect(await ids()).toEqual(['q1', 'q2', 'q3', 'taken']);
  });

  it('many transactions in one tick writing batches, some failing mid-batch on a constraint: those roll back whole, the others commit, the store goes on', async () => {
    await insert('taken');
    const random = seededRandom(20261128);
    const expected = new Set(['taken']);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, t) => {
        const name = `b${String(t).padStart(2, '0')}`;
        const fails = random() < 0.35;
        const rows = [`${name}-a`, fails ? 'taken' : `${name}-b`, `${name}-c`];
        return store
          .tx(async () => {
            // a read batch first (on PostgreSQL it goes out with BEGIN), then the writes and a read of them together
            const [before] = await store.batch([{ sql: 'SELECT count(*) AS n FROM items' }, { sql: 'SELECT 1 AS one' }]);
            expect(Number(before![0]!.n)).toBeGreaterThan(0);
            const out = await store.batch([
              ...rows.map((id) => ({ sql: 'INSERT INTO items (id, owner) VALUES (?, ?)', params: [id, name] })),
              { sql: 'SELECT id FROM items WHERE owner = ? ORDER BY id', params: [name] },
            ]);
            return out[3]!.map((r) => r.id);
          })
          .then((seen) => {
            expect(fails).toBe(false);
            expect(seen).toEqual(rows);
            rows.forEach((id) => expected.add(id));
          })
          .catch((e: unknown) => {
            // the statement at fault is the one reported, not one refused after it
            expect(fails).toBe(true);
            expect(constraintBroken(e)?.kind).toBe('unique');
          });
      }),
    );
    expect(outcomes.every((o) => o.status === 'fulfilled')).toBe(true);
    expect(await ids()).toEqual([...expected].sort());
    // no connection was left in a failed transaction: every one of them still commits
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.tx(() => store.batch([{ sql: 'INSERT INTO items (id, owner) VALUES (?, ?)', params: [`after-${i}`, 'after'] }])),
      ),
    );
    expect((await ids()).filter((id) => id.startsWith('after-'))).toHaveLength(12);
  });
});

describe('postgres store: more callers than connections', () => {
  it('callers wait for a free connection as long as it takes, not the connect timeout: a burst behind slow work gets no 503', async () => {
    const store = stores.postgres;
    await store.runSql('DELETE FROM items');
    // every pooled connection busy for longer than the 2 s connect timeout, and writes queued behind them
    const slow = Array.from({ length: 12 }, () => store.read(async () => void (await store.getSql('SELECT pg_sleep(2.5)'))));
    const writes = Array.from({ length: 8 }, (_, i) =>
      store.tx(async () => void (await store.runSql('INSERT INTO items (id, owner) VALUES (?, ?)', `w${i}`, 'w'))),
    );
    await Promise.all([...slow, ...writes]);
    expect((await store.allSql<{ id: string }>('SELECT id FROM items ORDER BY id')).map((r) => r.id)).toEqual([
      'w0',
      'w1',
      'w2',
      'w3',
      'w4',
      'w5',
      'w6',
      'w7',
    ]);
  });
});

describe('postgres store: the database goes away mid-work', () => {
  let store: PostgresStore;
  let admin: pg.Client;
  beforeAll(async () => {
    store = stores.postgres;
    admin = new pg.Client({ connectionString: store.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
  });
  beforeEach(async () => {
    await store.runSql('DELETE FROM items');
  });
  const insert = (id: string) => store.runSql('INSERT INTO items (id, owner) VALUES (?, ?)', id, id);
  const ids = async () => (await store.allSql<{ id: string }>('SELECT id FROM items ORDER BY id')).map((r) => r.id);

  /**
   * A transaction that has written (or, `read`, only read) and waits at a gate: its backend's pid, and how to let it
   * go on. Write transactions take one lock: only one is held at a time.
   */
  function heldTransaction(written: string, kind: 'tx' | 'read' = 'tx') {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let ready!: (pid: number) => void;
    const pid = new Promise<number>((r) => (ready = r));
    const done = store[kind](async () => {
      if (kind === 'tx') await insert(written);
      ready((await store.getSql<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!.pid);
      await gate;
      if (kind === 'tx') await insert(`${written}-after`);
      else await ids();
    });
    return { pid, release, done };
  }

  it('a backend terminated mid-transaction: that transaction fails as unavailable, nothing of it stays, the store goes on', async () => {
    const held = heldTransaction('doomed');
    const reader = heldTransaction('reader', 'read');
    const pid = await held.pid;
    const failure = held.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    // started once the doomed one holds the write lock (pooled connections are not handed out in order): it waits
    const other = heldTransaction('unaffected');
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    held.release();
    expect(await failure).toBeInstanceOf(StoreUnavailableError);
    await other.pid;
    other.release();
    reader.release();
    await Promise.all([other.done, reader.done]);
    await insert('next');
    expect(await ids()).toEqual(['next', 'unaffected', 'unaffected-after']);
  });

  it('a backend terminated in the middle of a batch: a clean unavailable error, nothing of the transaction stays, the next one works', async () => {
    // the batch's second statement waits for a lock the test holds, so the backend is terminated with it under way
    await admin.query('SELECT pg_advisory_lock(4242)');
    let pid!: number;
    const doomed = store.tx(async () => {
      await insert('before-batch');
      pid = (await store.getSql<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!.pid;
      await store.batch([
        { sql: 'INSERT INTO items (id, owner) VALUES (?, ?)', params: ['in-batch-1', 'x'] },
        { sql: 'SELECT pg_advisory_xact_lock(4242)' },
        { sql: 'INSERT INTO items (id, owner) VALUES (?, ?)', params: ['in-batch-2', 'x'] },
      ]);
    });
    // its outcome is taken at once: it may fail before the termination's own answer reaches the test
    const failure = doomed.then(
      () => undefined,
      (e: unknown) => e,
    );
    try {
      // waits for the condition: the backend blocked on the test's lock
      for (;;) {
        const r = await admin.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted");
        if (r.rowCount) break;
        await new Promise((r) => setImmediate(r));
      }
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      expect(await failure).toBeInstanceOf(StoreUnavailableError);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(4242)');
    }
    expect(await ids()).toEqual([]);
    await store.tx(() => store.batch([{ sql: 'INSERT INTO items (id, owner) VALUES (?, ?)', params: ['next', 'next'] }]));
    expect(await store.read(() => store.batch([{ sql: 'SELECT id FROM items' }, { sql: 'SELECT count(*) AS n FROM items' }]))).toEqual([
      [{ id: 'next' }],
      [{ n: 1 }],
    ]);
  });

  it('the change feed lost: once it is back, watchers are told of the gap and caches are dropped', async () => {
    const before = store.generation;
    const gap = new Promise<void>((r) => {
      const off = store.watchGaps(() => (off(), r()));
    });
    const { rowCount } = await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid() AND datname = current_database()",
    );
    expect(rowCount).toBe(1);
    await gap;
    expect(store.generation).toBeGreaterThan(before);
  });

  it('PostgreSQL stopped with transactions open: they fail as unavailable, no error escapes, the pool recovers by itself', async () => {
    const held = [heldTransaction('a'), heldTransaction('b', 'read')];
    await Promise.all(held.map((h) => h.pid));
    await admin.end();
    await stores.server.halt();
    for (const h of held) h.release();
    for (const h of held) await expect(h.done).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(insert('while-down')).rejects.toBeInstanceOf(StoreUnavailableError);
    await stores.server.resume();
    admin = new pg.Client({ connectionString: store.url });
    await admin.connect();
    // the first statements may still meet connections the restart broke; each is answered as unavailable, and dropped
    for (let i = 0; ; i++) {
      try {
        await insert('after-restart');
        break;
      } catch (e) {
        expect(e).toBeInstanceOf(StoreUnavailableError);
        expect(i).toBeLessThan(20);
      }
    }
    expect(await ids()).toEqual(['after-restart']);
  });
});
