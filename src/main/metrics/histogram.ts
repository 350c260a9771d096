import type { Registry } from 'prom-client';

/**
 * A Prometheus histogram for hot paths: `observe` finds its series by a key the caller builds (no label hashing or
 * validation per call, which prom-client's Histogram does on every observation) and bumps plain numbers; the
 * exposition is built when scraped, in the form prom-client's registry prints (cumulative `_bucket`s, `_sum`,
 * `_count`).
 */
export class FastHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: Record<L, string>; buckets: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** Adds `value` to the series `key` (its labels are taken the first time the key is seen). */
  observe(key: string, labels: () => Record<L, string>, value: number): void {
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels: labels(), buckets: new Array<number>(this.bounds.length).fill(0), sum: 0, count: 0 }));
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    if (i < this.bounds.length) s.buckets[i]!++;
    s.sum += value;
    s.count++;
  }

  /** The exposition's values (prom-client's MetricObject). */
  get() {
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}
