// The serial queue (src/main/core/serialQueue.ts): order, synchronous start, failures, release, cancel, settled.
import { describe, expect, it } from 'vitest';
import { SerialQueue, SerialQueueCancelled } from '../../src/main/core/serialQueue';

/** A promise with its resolve/reject outside. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Lets every pending microtask and timer callback run. */
const tick = () => new Promise<void>((r) => setTimeout(r, 0));

describe('SerialQueue', () => {
  it('runs many tasks given in the same tick in order, synchronous and asynchronous mixed, one at a time', async () => {
    const errors: unknown[] = [];
    const q = new SerialQueue((e) => errors.push(e));
    const log: string[] = [];
    let running = 0;
    let most = 0;
    for (let i = 0; i < 200; i++) {
      if (i % 3 === 0) {
        q.push(() => {
          log.push(`sync ${i}`);
        });
      } else {
        q.push(async () => {
          running++;
          most = Math.max(most, running);
          log.push(`start ${i}`);
          // a varying number of ticks: later tasks must not overtake
          for (let k = 0; k < (i * 7) % 5; k++) await Promise.resolve();
          if (i % 4 === 0) await tick();
          log.push(`end ${i}`);
          running--;
        });
      }
    }
    await q.settled();
    const expected: string[] = [];
    for (let i = 0; i < 200; i++) expected.push(...(i % 3 === 0 ? [`sync ${i}`] : [`start ${i}`, `end ${i}`]));
    expect(log).toEqual(expected);
    expect(most).toBe(1);
    expect(errors).toEqual([]);
    expect(q.idle).toBe(true);
  });

  it('starts a task synchronously when nothing is under way, and queues one given while another runs', async () => {
    const q = new SerialQueue();
    const log: string[] = [];
    q.push(() => void log.push('a'));
    expect(log).toEqual(['a']); // ran before push returned
    const gate = deferred();
    q.push(async () => {
      log.push('b start');
      await gate.promise;
      log.push('b end');
    });
    expect(log).toEqual(['a', 'b start']); // an async task starts synchronously too
    q.push(() => void log.push('c'));
    // a task given from inside the running one waits for its turn too (no nesting)
    expect(log).toEqual(['a', 'b start']);
    expect(q.idle).toBe(false);
    gate.resolve();
    await q.settled();
    expect(log).toEqual(['a', 'b start', 'b end', 'c']);
    // idle again: synchronous start
    q.push(() => void log.push('d'));
    expect(log.at(-1)).toBe('d');
  });

  it('a task given from inside a running synchronous task runs after it, still in the same turn', () => {
    const q = new SerialQueue();
    const log: string[] = [];
    q.push(() => {
      log.push('outer start');
      q.push(() => void log.push('inner'));
      log.push('outer end');
    });
    expect(log).toEqual(['outer start', 'outer end', 'inner']);
  });

  it('reports a failure in the middle once, and the tasks after it still run', async () => {
    const errors: unknown[] = [];
    const q = new SerialQueue((e) => errors.push(e));
    const log: number[] = [];
    const gate = deferred();
    q.push(async () => {
      await gate.promise;
      log.push(1);
    });
    q.push(async () => {
      await Promise.resolve();
      throw new Error('async failure');
    });
    q.push(() => void log.push(3));
    q.push(() => {
      throw new Error('sync failure');
    });
    q.push(async () => {
      await Promise.resolve();
      log.push(5);
    });
    gate.resolve();
    await q.settled();
    expect(log).toEqual([1, 3, 5]);
    expect(errors.map((e) => (e as Error).message)).toEqual(['async failure', 'sync failure']);

    // failing synchronously while idle: reported at once, the queue is idle again
    q.push(() => {
      throw new Error('at once');
    });
    expect((errors.at(-1) as Error).message).toBe('at once');
    expect(q.idle).toBe(true);
  });

  it('run() returns the outcome: the result, or the failure (not given to onError), and the queue goes on', async () => {
    const errors: unknown[] = [];
    const q = new SerialQueue((e) => errors.push(e));
    const gate = deferred();
    const first = q.run(async () => {
      await gate.promise;
      return 1;
    });
    const failing = q.run(() => {
      throw new Error('nope');
    });
    const third = q.run(async () => 3);
    gate.resolve();
    await expect(first).resolves.toBe(1);
    await expect(failing).rejects.toThrow('nope');
    await expect(third).resolves.toBe(3);
    expect(errors).toEqual([]);
  });

  it('release(): the next task starts while the released one goes on; it still completes, its failure reported once', async () => {
    const errors: unknown[] = [];
    const q = new SerialQueue((e) => errors.push(e));
    const log: string[] = [];
    const answer = deferred();
    const finished = deferred();
    q.push(async (release) => {
      log.push('dial start');
      await Promise.resolve();
      release(); // the host has been asked: the frames after this one need not wait for its answer
      release(); // twice: nothing more
      log.push('dial released');
      await answer.promise;
      log.push('dial end');
      finished.resolve();
      throw new Error('after release');
    });
    const next = deferred();
    q.push(async () => {
      log.push('next start');
      await next.promise;
      log.push('next end');
    });
    q.push(() => void log.push('third'));
    await tick();
    // the next started after the release; the release did not run it inside the releasing task
    expect(log).toEqual(['dial start', 'dial released', 'next start']);
    next.resolve();
    await tick();
    expect(log).toEqual(['dial start', 'dial released', 'next start', 'next end', 'third']);
    // settled() counts the released task's turn, not its rest
    await q.settled();
    expect(log).not.toContain('dial end');
    answer.resolve();
    await finished.promise;
    await tick();
    expect(log.at(-1)).toBe('dial end');
    expect(errors.map((e) => (e as Error).message)).toEqual(['after release']);
  });

  it('release() during the synchronous part: the next task starts as soon as the released one returns', () => {
    const q = new SerialQueue();
    const log: string[] = [];
    q.push((release) => {
      release();
      log.push('released');
      return new Promise<void>(() => undefined); // never ends
    });
    q.push(() => void log.push('next'));
    expect(log).toEqual(['released', 'next']);
    expect(q.idle).toBe(true);
  });

  it('cancel() drops the tasks not started; the running one completes; tasks given after the cancel run', async () => {
    const errors: unknown[] = [];
    const q = new SerialQueue((e) => errors.push(e));
    const log: string[] = [];
    const gate = deferred();
    q.push(async () => {
      log.push('running start');
      await gate.promise;
      log.push('running end');
    });
    q.push(() => void log.push('dropped 1'));
    const dropped = q.run(async () => log.push('dropped 2'));
    const settledBefore = q.settled(); // a marker: not dropped
    expect(q.cancel()).toBe(2);
    await expect(dropped).rejects.toBeInstanceOf(SerialQueueCancelled);
    q.push(() => void log.push('after cancel')); // waits for the running task
    expect(log).toEqual(['running start']);
    gate.resolve();
    await settledBefore;
    await q.settled();
    expect(log).toEqual(['running start', 'running end', 'after cancel']);
    expect(errors).toEqual([]);
    // cancelling an idle queue drops nothing
    expect(q.cancel()).toBe(0);
  });

  it('cancel from inside the running task, then the clean-up given: only the clean-up runs after it', async () => {
    const q = new SerialQueue();
    const log: string[] = [];
    const gate = deferred();
    q.push(async () => {
      await gate.promise;
      log.push('ends the connection');
      q.cancel();
      q.push(() => void log.push('clean-up'));
    });
    for (let i = 0; i < 5; i++) q.push(() => void log.push(`frame ${i}`));
    gate.resolve();
    await q.settled();
    expect(log).toEqual(['ends the connection', 'clean-up']);
  });

  it('settled() resolves when everything given so far has ended, not waiting for later tasks', async () => {
    const q = new SerialQueue();
    await q.settled(); // idle: at once
    const log: string[] = [];
    const a = deferred();
    const b = deferred();
    q.push(async () => {
      await a.promise;
      log.push('a');
    });
    const afterA = q.settled().then(() => log.push('settled after a'));
    q.push(async () => {
      await b.promise;
      log.push('b');
    });
    const afterB = q.settled().then(() => log.push('settled after b'));
    await tick();
    expect(log).toEqual([]);
    a.resolve();
    await afterA;
    expect(log).toEqual(['a', 'settled after a']);
    b.resolve();
    await afterB;
    expect(log).toEqual(['a', 'settled after a', 'b', 'settled after b']);
    // a failed task has ended too
    const errors: unknown[] = [];
    const failing = new SerialQueue((e) => errors.push(e));
    failing.push(async () => {
      await Promise.resolve();
      throw new Error('x');
    });
    await failing.settled();
    expect(errors).toHaveLength(1);
  });
});
