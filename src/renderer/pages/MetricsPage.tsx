import { useQuery } from '@tanstack/react-query';
import { ErrorBox, Notice, Page, Panel, Spinner } from '../components/Status';
import { useTRPC } from '../trpc';
import { formatBytes } from '../lib/format';

type Point = { at: string; value: number };

const CHARTS = [
  { key: 'requestsPerSecond', title: 'API requests per second', unit: (v: number) => `${v}/s` },
  { key: 'serverErrorsPerSecond', title: 'Server errors (5xx) per second', unit: (v: number) => `${v}/s` },
  { key: 'loginsOk', title: 'Logins per 10 s', unit: (v: number) => String(v) },
  { key: 'loginsFailed', title: 'Failed logins per 10 s', unit: (v: number) => String(v) },
  { key: 'circuitsOpen', title: 'Open circuits', unit: (v: number) => String(v) },
  { key: 'bytesPerSecond', title: 'Traffic through the router', unit: (v: number) => `${formatBytes(v)}/s` },
] as const;

const REFRESH_MS = 10_000;

/**
 * The last hour of a few of Weft's metrics, sampled every 10 s in memory by the running process (a restart starts
 * a new hour). Prometheus scrapes the full set at the metrics URL.
 */
export function MetricsPage() {
  const trpc = useTRPC();
  const q = useQuery(trpc.dataPlane.metrics.queryOptions(undefined, { refetchInterval: REFRESH_MS, refetchIntervalInBackground: false }));
  const urls = useQuery(trpc.dashboard.overview.queryOptions());
  const metricsUrl = urls.data?.urls.metrics;
  return (
    <Page
      title="Metrics"
      description="The last hour of a few of Weft's metrics, sampled every 10 seconds. Point Prometheus at the metrics URL for all of them."
    >
      {metricsUrl && (
        <p>
          Prometheus: <code data-testid="metrics-url">{metricsUrl}</code>
        </p>
      )}
      {q.error && <ErrorBox error={q.error} retry={() => q.refetch()} />}
      {!q.data && !q.error && <Spinner />}
      {q.data && q.data.length === 0 && (
        <Notice kind="info">No samples yet: the first point comes 10 seconds after start (metrics.enabled must be true).</Notice>
      )}
      {q.data && q.data.length > 0 && (
        <div className="chart-grid">
          {CHARTS.map((c) => (
            <Panel key={c.key} title={c.title}>
              <Chart label={c.title} points={q.data.map((p) => ({ at: p.at, value: p[c.key] }))} format={c.unit} />
            </Panel>
          ))}
        </div>
      )}
    </Page>
  );
}

const W = 320;
const H = 80;

/** A line over the hour: the latest value and the peak beside it. */
function Chart({ label, points, format }: { label: string; points: Point[]; format: (v: number) => string }) {
  const max = Math.max(...points.map((p) => p.value), 0);
  const last = points[points.length - 1]!.value;
  const t0 = Date.parse(points[0]!.at);
  const span = Math.max(1, Date.parse(points[points.length - 1]!.at) - t0);
  const xy = points.map((p) => {
    const x = points.length === 1 ? W : ((Date.parse(p.at) - t0) / span) * W;
    const y = H - (max > 0 ? (p.value / max) * (H - 4) : 0) - 2;
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  });
  return (
    <figure className="chart" data-testid="metric-chart" aria-label={label}>
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" height={H} role="img" aria-label={`${label}: now ${format(last)}, peak ${format(max)}`}>
        <polyline fill="none" stroke="currentColor" strokeWidth="1.5" points={xy.join(' ')} />
      </svg>
      <figcaption className="muted">
        now <strong data-testid="metric-now">{format(last)}</strong> · peak {format(max)} · {points.length} samples
      </figcaption>
    </figure>
  );
}
