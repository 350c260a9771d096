// The write gate (docs/architecture.md, "The write gate"): the generic write path (resource.ts) hands every write to the
// core's subscribers inside its transaction. What a write is and what a subscriber is are declared with the Core that
// holds the subscribers (core.ts, a floor below); the gate itself is here.
import type { Write, WriteSubscriber } from '../core';

export type { GateOp, Write, WriteSubscriber, WrittenType } from '../core';

/** Hands a write to every subscriber, in order; a subscriber's failure fails the write. */
export async function passGate<C>(subscribers: ReadonlyArray<WriteSubscriber<C>>, w: Write<C>): Promise<void> {
  for (const s of subscribers) await s(w);
}
