import { tracked, TRPCError } from '@trpc/server';
import { z } from 'zod';
import { EMITTED_TYPES, followEvents, type FeedItem } from '../../core/ops/index';
import { authedProcedure, router } from '../trpc';

/** Events a stream holds for a client that reads slower than they come (plus at most one batch of the feed). */
export const MAX_WAITING = 1000;
/** How long the feed waits for a client with more than MAX_WAITING events waiting before its stream ends. */
export const STALL_MS = 30_000;

/**
 * The bridge between the event feed, which hands over batches through a callback, and a subscription's generator,
 * which takes one event at a time as fast as the client reads. Bounded, and it never drops an event:
 *
 * - a burst (a stream resuming after many changes: the feed reads 500 outbox rows at a time, and a change makes two
 *   events) is absorbed by back-pressure: while more than `max` events wait, `push` does not return, so the feed reads
 *   no further for this stream (the events stay in the outbox; other readers and every write go on);
 * - a client that takes nothing for `stallMs` meanwhile (a stuck tab, a network that stopped) overflows it: the stream
 *   ends with SERVICE_UNAVAILABLE. tRPC's client retries that code, and the browser's EventSource reconnects with the
 *   id of the last event it received (Last-Event-ID): the new stream resumes from the outbox right after it, so
 *   nothing is lost (while the outbox holds the events) and nothing comes twice. Dropping the oldest events instead
 *   would keep the view live but leave holes a reader cannot see, which an event tail should not do.
 */
export class EventQueue<T> {
  private items: T[] = [];
  private taker: (() => void) | undefined;
  private room: (() => void) | undefined;
  private ended = false;
  private failure: TRPCError | undefined;

  constructor(
    private readonly max: number,
    private readonly stallMs: number,
  ) {}

  get size(): number {
    return this.items.length;
  }

  /** Adds a batch; resolves once no more than `max` events wait (at once when the queue has ended). */
  async push(batch: readonly T[]): Promise<void> {
    if (this.ended || !batch.length) return;
    for (const item of batch) this.items.push(item);
    this.wake();
    if (this.items.length <= this.max) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.fail(
          new TRPCError({
            code: 'SERVICE_UNAVAILABLE',
            message: `The client fell behind the event feed (more than ${this.max} events waiting for ${this.stallMs / 1000} s); reconnect to resume after the last event received`,
          }),
        );
      }, this.stallMs);
      this.room = () => {
        clearTimeout(timer);
        this.room = undefined;
        resolve();
      };
    });
  }

  /** The next event, waiting for one; undefined once the queue has ended; throws once it has overflowed. */
  async take(): Promise<T | undefined> {
    while (!this.items.length && !this.ended) await new Promise<void>((resolve) => (this.taker = resolve));
    if (this.failure) throw this.failure;
    if (this.ended) return undefined;
    const item = this.items.shift()!;
    if (this.items.length <= this.max) this.room?.();
    return item;
  }

  /** Ends the queue: what waits is dropped, a pending `take` gets undefined, a pending `push` returns. */
  end(): void {
    this.ended = true;
    this.items = [];
    this.room?.();
    this.wake();
  }

  private fail(error: TRPCError): void {
    this.failure = error;
    this.end();
  }

  private wake(): void {
    const taker = this.taker;
    this.taker = undefined;
    taker?.();
  }
}

const tailInput = z
  .object({
    /** namespaces to keep; none (or empty) = every event */
    types: z.array(z.enum(EMITTED_TYPES)).max(50).optional(),
    /** resume after this event (tRPC's client sets it from the last tracked id when it reconnects) */
    lastEventId: z
      .string()
      .regex(/^\d{1,15}$/, 'must be the id of an event of this stream (a non-negative integer)')
      .nullish(),
  })
  .optional();

export const eventsRouter = router({
  /**
   * The live event tail (OpenZiti-shaped events, as the event loggers write them) over Server-Sent Events, for a
   * caller who may read operations data. Each event goes out with its outbox position as its id, so a client that
   * reconnects with `lastEventId` gets what it missed (while the outbox still holds it) and nothing twice. Without
   * `lastEventId` the stream starts at the end of the feed, fixed before the stream opens: every change committed
   * after the client sees the stream's `connected` message is in it.
   */
  tail: authedProcedure.input(tailInput).subscription(async ({ ctx, input, signal }) => {
    const keep = input?.types?.length ? new Set<string>(input.types) : undefined;
    const queue = new EventQueue<FeedItem>(MAX_WAITING, STALL_MS);
    // (an id past the end of the feed, from a restored database, reads from the end: the feed clamps it)
    const after = input?.lastEventId == null ? undefined : Number(input.lastEventId);
    // checks the caller (ops read); before the generator, so a refusal is the subscription's error, not a stream's
    const follower = await followEvents(ctx.zctx, after, (items) => queue.push(keep ? items.filter((i) => keep.has(i.event.namespace)) : items));
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      follower.close();
      queue.end();
    };
    // the client went away before the generator started (its `finally` would never run)
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
    return (async function* () {
      try {
        for (let item = await queue.take(); item; item = await queue.take()) yield tracked(String(item.seq), item.event);
      } finally {
        signal?.removeEventListener('abort', stop);
        stop();
      }
    })();
  }),
});
