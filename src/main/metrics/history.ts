import type { Clock } from '../core/clock';
import type { MetricPoint } from '../core/ops/index';
import type { MetricTotals } from './metrics';

/** 10 s samples for an hour. */
export const SAMPLE_MS = 10_000;
export const SAMPLES = 360;

/**
 * The console's chart data: every SAMPLE_MS the running totals are read and turned into one point (rates over the
 * interval, levels at its end); the last SAMPLES points are kept, in memory only (a restart starts a new hour).
 */
export class MetricHistory {
  private readonly ring: MetricPoint[] = [];
  private last: { at: number; totals: MetricTotals } | undefined;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly totals: () => MetricTotals,
    private readonly clock: Clock,
  ) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Takes one sample (the timer calls it; tests call it with an injected clock). */
  sample(): void {
    const at = this.clock.now().getTime();
    const now = this.totals();
    const prev = this.last;
    // a clock that has not moved on (an injected one) keeps the interval open
    if (prev && at <= prev.at) return;
    this.last = { at, totals: now };
    if (!prev) return;
    const seconds = (at - prev.at) / 1000;
    const rate = (k: keyof MetricTotals) => round((now[k] - prev.totals[k]) / seconds);
    this.ring.push({
      at: new Date(at).toISOString(),
      requestsPerSecond: rate('requests'),
      serverErrorsPerSecond: rate('serverErrors'),
      loginsOk: now.loginsOk - prev.totals.loginsOk,
      loginsFailed: now.loginsFailed - prev.totals.loginsFailed,
      circuitsOpen: now.circuitsOpen,
      bytesPerSecond: rate('bytes'),
    });
    if (this.ring.length > SAMPLES) this.ring.shift();
  }

  /** The samples of the last hour, oldest first. */
  points(): MetricPoint[] {
    const from = new Date(this.clock.now().getTime() - SAMPLE_MS * SAMPLES).toISOString();
    return this.ring.filter((p) => p.at > from);
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
