import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * One holder of a connection: a transaction, or a savepoint inside one. Code belongs to the frame it was started in
 * (its async context); a frame that has ended hands its code to the nearest enclosing frame still held.
 */
export class Frame<T = unknown> {
  held = true;
  /** the innermost frame holding the connection (on a root frame only) */
  top: Frame<T>;
  readonly root: Frame<T>;
  /** who waits for this root's connection, first come first served (on a root frame only) */
  readonly waiting: Waiter<T>[] = [];

  /** what the store keeps with the root's transaction (its pooled connection, what it has written) */
  readonly data: T;

  constructor(parent: Frame<T>, data?: undefined);
  constructor(parent: undefined, data: T);
  constructor(
    readonly parent: Frame<T> | undefined,
    data?: T,
  ) {
    this.root = parent ? parent.root : this;
    this.data = parent ? parent.data : data!;
    this.top = this;
  }
}

type Waiter<T> = { parent: Frame<T>; reject: (e: unknown) => void } & (
  { enter: (frame: Frame<T>) => void } | { statement: () => unknown; resolve: (v: unknown) => void }
);

/**
 * Who may use a connection, and in which order: the one mechanism both stores take turns with.
 *
 * A root frame is a connection: SQLite's one connection (`shared`: code outside every transaction belongs to it), or
 * one of PostgreSQL's pooled connections (its transaction). The frames of a root form a stack — the transaction,
 * then the savepoints opened inside it — and only the innermost (`top`) may act: run a statement, or open a frame
 * inside itself. Everyone else waits in line and is let in, one at a time, as frames end: the grant is made in the
 * same synchronous step as the end, so two callers released together can never both take the connection, and a
 * statement that does not belong to the holder can never run inside its transaction.
 */
export class Holders<T = unknown> {
  private readonly scope = new AsyncLocalStorage<Frame<T>>();

  /** `shared`: the root of code outside every transaction (SQLite's connection); none: such code needs no turn */
  constructor(readonly shared?: Frame<T>) {}

  /** The frame the running code belongs to (ended frames hand over to their parents; none: outside, no `shared`). */
  current(): Frame<T> | undefined {
    let f = this.scope.getStore();
    while (f && !f.held) f = f.parent;
    return f ?? this.shared;
  }

  /** Whether the running code may act on its connection now without waiting. */
  mayAct(frame: Frame<T> | undefined = this.current()): boolean {
    return !frame || frame.root.top === frame;
  }

  /** Runs a synchronous step (a statement being issued) as `frame` when it is its turn: at once if it may act now. */
  act<R>(frame: Frame<T> | undefined, step: () => R): R | Promise<R> {
    if (this.mayAct(frame)) return step();
    return new Promise<R>((resolve, reject) =>
      frame!.root.waiting.push({ parent: frame!, statement: step, resolve: resolve as (v: unknown) => void, reject }),
    );
  }

  /** A new root frame: a transaction on a connection of its own, holding it until `leave`. */
  root(data: T): Frame<T> {
    return new Frame<T>(undefined, data);
  }

  /** A new frame inside `parent`, once `parent` may act; it holds its root's connection until `leave`. */
  enter(parent: Frame<T>): Frame<T> | Promise<Frame<T>> {
    if (this.mayAct(parent)) return this.push(parent);
    return new Promise<Frame<T>>((resolve, reject) => parent.root.waiting.push({ parent, enter: resolve, reject }));
  }

  private push(parent: Frame<T>): Frame<T> {
    const f = new Frame<T>(parent);
    parent.root.top = f;
    return f;
  }

  /** Runs `fn` as code of `frame` (the statements it awaits belong to the frame). */
  run<R>(frame: Frame<T>, fn: () => R): R {
    return this.scope.run(frame, fn);
  }

  /** `frame` (the innermost) lets go: its parent holds the connection again, and those waiting for it are let in. */
  leave(frame: Frame<T>): void {
    const root = frame.root;
    if (root.top !== frame) throw new Error('a frame left the connection while a frame inside it still held it');
    frame.held = false;
    if (frame.parent) {
      root.top = frame.parent;
      return this.admit(root);
    }
    // the transaction is over: what its code still wanted to run on its connection is refused
    for (const w of root.waiting.splice(0)) w.reject(new Error('the transaction this statement belonged to has ended'));
  }

  /** Lets in, in order, the waiting statements the holder's turn allows, up to the first frame that takes it. */
  private admit(root: Frame<T>): void {
    for (let i = 0; i < root.waiting.length;) {
      const w = root.waiting[i]!;
      if (root.top !== w.parent) {
        i++;
        continue;
      }
      root.waiting.splice(i, 1);
      if ('enter' in w) return w.enter(this.push(w.parent));
      try {
        w.resolve(w.statement());
      } catch (e) {
        w.reject(e);
      }
    }
  }

  /** Whether no frame holds the shared connection (SQLite: the async context need not be tracked). */
  get idle(): boolean {
    return !this.shared || this.shared.top === this.shared;
  }

  /** Stops tracking async contexts until the next `run` (they cost every promise of the process something). */
  pause(): void {
    this.scope.disable();
  }
}
