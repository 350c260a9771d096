/**
 * Ordered work: one serial queue per owner (a connection's frames, a router's reactions to its own row). A bottom-floor
 * primitive: it imports nothing.
 *
 * - Tasks run one after another, in the order given. With nothing under way a task starts at once, synchronously, in
 *   the caller's turn (a frame with nothing before it is handled before `push` returns); a task given while another
 *   holds the queue starts when that one's turn is over. Tasks that end synchronously are followed at once, without a
 *   tick in between.
 * - A task holds the queue until it ends (returns, throws, or its promise settles), or until it calls the `release()`
 *   it is given: then the next task starts and the rest of the released one runs out of turn (e.g. a dial waits for
 *   the host's answer without holding up the frames after it). `release()` after the end, or twice, does nothing.
 * - A failure goes to the queue's owner once and does not stop the queue: `push`'s to the `onError` callback (also a
 *   failure after `release()`), `run`'s to the promise it returns.
 * - `cancel()` drops the tasks given and not started yet (a `run` promise among them rejects with
 *   `SerialQueueCancelled`); the task under way ends as it would have, and tasks given after the cancel run.
 * - `settled()` resolves once every task given so far has had its turn: ended, released the queue, or been dropped.
 *   It does not wait for the rest of a released task (that part belongs to the task, not to the queue).
 */
export type SerialTask<T = void> = (release: () => void) => T | PromiseLike<T>;

/** What a `run` promise rejects with when its task was dropped by `cancel()` before it started. */
export class SerialQueueCancelled extends Error {
  constructor() {
    super('the task was cancelled before it started');
  }
}

type Entry = SerialTask<unknown>;

export class SerialQueue {
  /** tasks given and not started; `head` is the next one */
  private waiting: Array<Entry | undefined> = [];
  private head = 0;
  /** a task has the queue (or the next one is about to start) */
  private busy = false;
  /** what happens to a waiting `run` task that is dropped: its promise rejects */
  private readonly onDrop = new Map<Entry, () => void>();
  /** the markers of settled(): never dropped */
  private readonly markers = new Set<Entry>();

  /** `onError`: where the failures of pushed tasks go (none: they are unhandled rejections, as a floating promise's). */
  constructor(private readonly onError?: (err: unknown) => void) {}

  /** Nothing holds the queue: a task given now starts at once. */
  get idle(): boolean {
    return !this.busy;
  }

  /** Gives a task; its failure goes to `onError`. */
  push(task: SerialTask<unknown>): void {
    if (this.busy) this.waiting.push(task);
    else this.drain(task);
  }

  /** Gives a task and returns its outcome (its result, its failure, or SerialQueueCancelled). */
  run<T>(task: SerialTask<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: Entry = (release) => {
        let result: T | PromiseLike<T>;
        try {
          result = task(release);
        } catch (err) {
          return reject(err);
        }
        if (!isThenable(result)) return resolve(result);
        return Promise.resolve(result).then(resolve, reject);
      };
      if (this.busy) this.onDrop.set(entry, () => reject(new SerialQueueCancelled()));
      this.push(entry);
    });
  }

  /** Drops the tasks not started yet; returns how many. The task under way is not touched. */
  cancel(): number {
    let dropped = 0;
    const kept: Entry[] = [];
    for (let i = this.head; i < this.waiting.length; i++) {
      const task = this.waiting[i]!;
      if (this.markers.has(task)) {
        kept.push(task);
        continue;
      }
      dropped++;
      const drop = this.onDrop.get(task);
      if (drop) {
        this.onDrop.delete(task);
        drop();
      }
    }
    this.waiting = kept;
    this.head = 0;
    return dropped;
  }

  /** Resolves once every task given so far has had its turn (see the module's comment). */
  settled(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const marker: Entry = () => resolve();
      this.markers.add(marker);
      this.waiting.push(marker);
    });
  }

  private next(): Entry | undefined {
    if (this.head >= this.waiting.length) return undefined;
    const task = this.waiting[this.head];
    this.waiting[this.head++] = undefined;
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    }
    return task;
  }

  /** Runs `task` and those after it as long as each one's turn is over when it returns. */
  private drain(task: Entry | undefined): void {
    this.busy = true;
    while (task) {
      if (!this.begin(task)) return; // its turn goes on: its end (or release) drains again
      task = this.next();
    }
    this.busy = false;
  }

  /** Starts a task; true when its turn is over already (it returned no promise, threw, or released the queue at once). */
  private begin(task: Entry): boolean {
    if (this.onDrop.size) this.onDrop.delete(task);
    if (this.markers.size) this.markers.delete(task);
    // release() may have ended the turn by the time the task returns: the type says so (no narrowing to 'starting')
    let turn = 'starting' as 'starting' | 'going' | 'over';
    const release = (): void => {
      if (turn === 'over') return;
      const going = turn === 'going';
      turn = 'over';
      // never inside the caller (the releasing task goes on from where it called release)
      if (going) queueMicrotask(() => this.drain(this.next()));
    };
    let result: unknown;
    try {
      result = task(release);
    } catch (err) {
      turn = 'over';
      this.report(err);
      return true;
    }
    if (!isThenable(result)) {
      turn = 'over';
      return true;
    }
    void result.then(release, (err: unknown) => {
      this.report(err);
      release();
    });
    if (turn === 'over') return true;
    turn = 'going';
    return false;
  }

  private report(err: unknown): void {
    if (!this.onError) return void Promise.reject(err as Error);
    try {
      this.onError(err);
    } catch (e) {
      // the queue goes on; what the owner's handler threw is not lost
      void Promise.reject(e as Error);
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}
