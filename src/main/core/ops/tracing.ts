import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { parseDuration } from '../../../shared/duration';
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { notFound, validationError } from '../errors';
import { getRow, json, rowShape } from '../store/rows';
import { parseInput } from '../validation';

export const traceSpecSchema = z.object({
  channels: z.array(z.string().min(1)).nullable().optional(),
  duration: z.string().nullable().optional(),
  enabled: z.boolean().nullable().optional(),
  traceId: z.string().min(1).max(255).nullable().optional(),
});

const DEFAULT_DURATION = '10m';
const MAX_DURATION_MS = 7 * 86_400_000;

const TRACE = rowShape({ enabled: 'bool', trace_id: 'string', until: 'string?', channels: json<string[]>() });

export interface TraceDetail {
  enabled: boolean;
  traceId: string | null;
  until: string | null;
  channels: string[];
}

async function requireIdentity(ctx: Ctx, id: string): Promise<void> {
  if (!(await ctx.core.store.getSql('SELECT 1 FROM identities WHERE id = ?', id))) throw notFound('identity');
}

/** PUT /identities/{id}/trace: enables data flow tracing for a while (or disables it); stored per identity. */
export async function updateTrace(ctx: Ctx, identityId: string, body: unknown): Promise<TraceDetail> {
  requirePermission(ctx.caller, 'identity', 'update');
  const spec = parseInput(traceSpecSchema, body ?? {});
  await requireIdentity(ctx, identityId);
  const now = ctx.core.clock.now();
  const enabled = spec.enabled ?? false;
  let ms = 0;
  if (enabled) {
    try {
      ms = parseDuration(spec.duration ?? DEFAULT_DURATION);
    } catch (e) {
      throw validationError('duration', (e as Error).message, spec.duration);
    }
    if (ms > MAX_DURATION_MS) throw validationError('duration', 'must be at most 168h', spec.duration);
  }
  const traceId = spec.traceId ?? randomUUID();
  const until = new Date(now.getTime() + ms).toISOString();
  const channels = spec.channels ?? [];
  // and again with the write: one deleted meanwhile is 404, not a foreign key failure
  await ctx.core.store.tx(async () => {
    await requireIdentity(ctx, identityId);
    await ctx.core.store.runSql(
      `INSERT INTO identity_traces (identity_id, enabled, trace_id, channels, until, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(identity_id) DO UPDATE SET enabled = excluded.enabled, trace_id = excluded.trace_id, channels = excluded.channels,
       until = excluded.until, updated_at = excluded.updated_at`,
      identityId,
      enabled,
      traceId,
      JSON.stringify(channels),
      until,
      now.toISOString(),
    );
  });
  ctx.core.log.info({ identityId, traceId, enabled, until, channels }, 'identity data flow tracing updated');
  return { enabled, traceId, until, channels };
}

/** GET /identities/{id}/trace: the current tracing state; a trace past its `until` reports disabled. */
export async function getTrace(ctx: Ctx, identityId: string): Promise<TraceDetail> {
  requirePermission(ctx.caller, 'identity', 'read');
  await requireIdentity(ctx, identityId);
  const row = await getRow(ctx.core.store, TRACE, 'SELECT * FROM identity_traces WHERE identity_id = ?', identityId);
  if (!row) return { enabled: false, traceId: null, until: null, channels: [] };
  const live = row.enabled && !!row.until && row.until > ctx.core.clock.now().toISOString();
  return { enabled: live, traceId: row.trace_id, until: row.until, channels: row.channels };
}
