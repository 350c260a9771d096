import type { Clock } from '../core/clock';
import type { Store } from '../core/registry';

interface Entry {
  body: Buffer;
  generation: number;
  at: number;
  /** position in `order` */
  seq: number;
}

/**
 * Serialized replies of GET routes that declare `cacheable` (their reply depends only on the database, the API
 * session and URL of the request, and the clock), kept while the store's write generation is unchanged and for at
 * most `maxAgeMs` of the core clock. A write to the database drops every entry at once; a request still
 * authenticates (its API session must still be valid) before an entry is used, and an entry is only ever served to
 * the API session it was made for. Bounded in bytes (least recently stored go first).
 */
export class ReplyCache {
  private readonly entries = new Map<string, Entry>();
  /** keys in the order they were stored, oldest from `head` on (a key stored again appears twice; its older place is skipped) */
  private order: string[] = [];
  private head = 0;
  /** URLs with an entry made for an API session (the others are public: the session part of their key is empty) */
  private readonly sessionUrls = new Set<string>();
  private bytes = 0;
  private generation = -1;
  /** keys asked for once and not kept (see `admit`) */
  private seen = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly opts: { maxBytes: number; maxAgeMs: number } = { maxBytes: 16 << 20, maxAgeMs: 1000 },
  ) {}

  static key(apiSessionId: string | undefined, url: string): string {
    return `${apiSessionId ?? ''} ${url}`;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether some API session has an entry for this URL (else there is no point in resolving the request's token). */
  hasSessionEntries(url: string): boolean {
    return this.sessionUrls.has(url);
  }

  get(key: string): Buffer | undefined {
    const e = this.entries.get(key);
    // a closed store answers 503 through the usual path, not from memory
    if (!e || !this.store.open) return undefined;
    const now = this.clock.now().getTime();
    if (e.generation !== this.store.generation || now < e.at || now - e.at >= this.opts.maxAgeMs) {
      this.drop(key, e);
      return undefined;
    }
    return e.body;
  }

  /**
   * Whether a reply computed for `key` should be kept: only from its second request on, so URLs asked for once (a
   * page walked through once, a one-off filter) cost no copy, no bookkeeping and no garbage.
   */
  admit(key: string): boolean {
    if (this.seen.has(key)) return true;
    if (this.seen.size >= 50_000) this.seen.clear(); // forgetting only delays keeping
    this.seen.add(key);
    return false;
  }

  /** Keeps `body`, computed while the store was at `generation` (nothing is kept when it has moved on since). */
  set(apiSessionId: string | undefined, url: string, body: Buffer, generation: number): void {
    if (generation !== this.store.generation) return;
    if (generation !== this.generation) {
      this.entries.clear();
      this.sessionUrls.clear();
      this.order = [];
      this.head = 0;
      this.bytes = 0;
      this.generation = generation;
    }
    const key = ReplyCache.key(apiSessionId, url);
    const size = body.length + key.length;
    if (size > this.opts.maxBytes / 8) return;
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    while (this.bytes + size > this.opts.maxBytes && this.head < this.order.length) {
      const seq = this.head++;
      const k = this.order[seq]!;
      const e = this.entries.get(k);
      if (e?.seq === seq) this.drop(k, e);
    }
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      // forget the consumed front; entries keep their places relative to the new start
      const shift = this.head;
      this.order = this.order.slice(shift);
      this.head = 0;
      for (const e of this.entries.values()) e.seq -= shift;
    }
    this.entries.set(key, { body, generation, at: this.clock.now().getTime(), seq: this.order.length });
    this.order.push(key);
    if (apiSessionId) {
      if (this.sessionUrls.size >= 100_000) this.sessionUrls.clear(); // an optimisation only: forgetting is safe
      this.sessionUrls.add(url);
    }
    this.bytes += size;
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.body.length + key.length;
  }
}
