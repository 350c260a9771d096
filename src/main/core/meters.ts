import { perCore } from './core';

/**
 * What the core measures of its own work, for whoever exports metrics (src/main/metrics): plain counters and sums
 * bumped in place, read when metrics are scraped. The core knows no metrics library.
 */
export class CoreMeters {
  /** logins decided, by `method|outcome` (password|success, cert|fail, …) */
  readonly authentications = new Map<string, number>();
  /** policy index updates: a policy written, or an entity's role attributes */
  readonly policyIndex = { policies: 0, entities: 0, seconds: 0 };

  /** Counts a login decided. */
  authentication(method: string, outcome: 'success' | 'fail'): void {
    const key = `${method}|${outcome}`;
    this.authentications.set(key, (this.authentications.get(key) ?? 0) + 1);
  }

  /** Times one policy index update. */
  async indexing<T>(kind: 'policies' | 'entities', fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.policyIndex[kind]++;
      this.policyIndex.seconds += (performance.now() - t0) / 1000;
    }
  }
}

export const metersOf = perCore(() => new CoreMeters());
