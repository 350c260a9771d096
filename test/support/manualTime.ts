import type { XgressTime } from '../../src/main/router/link/xgressEnd';
import { ManualClock } from './clock';

/** A clock plus interval timers that fire only when a test advances time: no sleeps, same order every run. */
export class ManualTime implements XgressTime {
  readonly clock = new ManualClock('2026-01-01T00:00:00Z');
  private readonly timers = new Set<{ ms: number; next: number; fn: () => void }>();

  every(ms: number, fn: () => void): () => void {
    const t = { ms, next: this.nowMs() + ms, fn };
    this.timers.add(t);
    return () => this.timers.delete(t);
  }

  nowMs(): number {
    return this.clock.now().getTime();
  }

  /** Moves time forward by `ms`, running each timer at the moments it is due, earliest first. */
  advance(ms: number): void {
    const target = this.nowMs() + ms;
    for (;;) {
      let due: { ms: number; next: number; fn: () => void } | undefined;
      for (const t of this.timers) if (t.next <= target && (!due || t.next < due.next)) due = t;
      if (!due) break;
      this.clock.set(new Date(due.next));
      due.next += due.ms;
      due.fn();
    }
    this.clock.set(new Date(target));
  }
}
