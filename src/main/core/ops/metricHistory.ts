import type { Ctx } from '../context';
import { requirePermission } from '../permissions';

/** One sample of the console's charts: rates over the interval before `at`, and levels at `at`. */
export interface MetricPoint {
  at: string;
  requestsPerSecond: number;
  serverErrorsPerSecond: number;
  loginsOk: number;
  loginsFailed: number;
  circuitsOpen: number;
  bytesPerSecond: number;
}

/** The last hour of samples, kept in memory by the process (src/main/metrics/history.ts). */
export function metricHistory(ctx: Ctx, history: { points(): MetricPoint[] } | undefined): MetricPoint[] {
  requirePermission(ctx.caller, 'ops', 'read');
  return history?.points() ?? [];
}
