import { parseDuration } from '../../../shared/duration';
import type { Clock } from '../clock';
import { unavailable } from '../errors';

/**
 * Adaptive cap on concurrent work (AIMD): a completion within the target latency widens the window by one,
 * a slower one shrinks it by a quarter, always between min and max. Work beyond the window is refused at once
 * (the caller answers 429) instead of queueing behind the argon2 thread pool.
 */
export class AdaptiveConcurrencyLimiter {
  private inFlight = 0;
  private window: number;

  constructor(private readonly opts: { min: number; max: number; targetLatencyMs: number; now?: () => number }) {
    this.window = opts.max;
  }

  get limit(): number {
    return this.window;
  }

  get active(): number {
    return this.inFlight;
  }

  /** A release function (idempotent), or undefined when the window is full. */
  tryAcquire(): (() => void) | undefined {
    if (this.inFlight >= this.window) return undefined;
    const now = this.opts.now ?? (() => performance.now());
    const started = now();
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      const slow = now() - started > this.opts.targetLatencyMs;
      this.window = slow ? Math.max(this.opts.min, Math.floor(this.window * 0.75)) : Math.min(this.opts.max, this.window + 1);
    };
  }
}

/** A token bucket per client address; idle buckets are dropped when the table grows past `maxClients`. */
export class ClientRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly opts: { ratePerSecond: number; burst: number; clock: Clock; maxClients?: number }) {}

  /** clients with a bucket */
  get clients(): number {
    return this.buckets.size;
  }

  /** Takes a token for `client`: 0 when allowed, otherwise the seconds until the next token. */
  take(client: string): number {
    const { ratePerSecond: rate, burst } = this.opts;
    const now = this.opts.clock.now().getTime();
    let b = this.buckets.get(client);
    if (!b) {
      this.evict(now);
      b = { tokens: burst, at: now };
      this.buckets.set(client, b);
    }
    b.tokens = Math.min(burst, b.tokens + (Math.max(0, now - b.at) / 1000) * rate);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / rate;
  }

  private evict(now: number): void {
    const max = this.opts.maxClients ?? 10_000;
    if (this.buckets.size < max) return;
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.opts.ratePerSecond >= this.opts.burst) this.buckets.delete(k);
    }
    // still full of active clients: forget the oldest (Map keeps insertion order)
    for (const k of this.buckets.keys()) {
      if (this.buckets.size < max) break;
      this.buckets.delete(k);
    }
  }
}

/** The `rate_limits` section of the config file (see config.ts for the defaults). */
export interface RateLimitsConfig {
  auth: { enabled: boolean; max_concurrent: number; min_concurrent: number; target_latency: string };
  per_client: { enabled: boolean; requests_per_second: number; burst: number };
  request_timeout: string;
  snapshot_interval: string;
}

/** What the API server enforces. */
export interface ApiLimits {
  auth?: AdaptiveConcurrencyLimiter;
  perClient?: ClientRateLimiter;
  requestTimeoutMs: number;
}

export function apiLimits(cfg: RateLimitsConfig, clock: Clock): ApiLimits {
  return {
    auth: cfg.auth.enabled
      ? new AdaptiveConcurrencyLimiter({
          min: Math.min(cfg.auth.min_concurrent, cfg.auth.max_concurrent),
          max: cfg.auth.max_concurrent,
          targetLatencyMs: parseDuration(cfg.auth.target_latency),
        })
      : undefined,
    perClient: cfg.per_client.enabled
      ? new ClientRateLimiter({ ratePerSecond: cfg.per_client.requests_per_second, burst: cfg.per_client.burst, clock })
      : undefined,
    requestTimeoutMs: parseDuration(cfg.request_timeout),
  };
}

/**
 * Settles like `work`, or rejects with 503 when it takes longer than `ms`. The work itself goes on (a transaction
 * under way is not interrupted halfway); its late result or error is dropped.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailable('The request timed out')), ms);
    timer.unref();
  });
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
