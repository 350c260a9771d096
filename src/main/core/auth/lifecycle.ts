import { z } from 'zod';
import type { Ctx } from '../context';
import { eachEntity, type BulkResult } from '../entities/bulk';
import type { ResourceDef } from '../entities/resource';
import { notFound, validationError } from '../errors';
import type { Row } from '../store/db';
import { parseInput } from '../validation';
import { requirePermission } from '../permissions';
import { apiSessionsOf } from './apiSessions';

/** 0 = until enabled again; otherwise at most ten years. */
export const disableBody = z.object({ durationMinutes: z.number().int().min(0, 'must be 0 (indefinitely) or more').max(5_256_000) });

async function requireIdentity(ctx: Ctx, id: string): Promise<Row> {
  const row = await ctx.core.store.getSql<Row>('SELECT id, is_default_admin FROM identities WHERE id = ?', id);
  if (!row) throw notFound('identity');
  return row;
}

/**
 * POST /identities/{id}/disable: refuses new logins by every method for `durationMinutes` (0 = until enabled)
 * and ends the identity's API sessions now.
 */
export async function disableIdentity(ctx: Ctx, id: string, body: unknown): Promise<void> {
  requirePermission(ctx.caller, 'identity', 'update');
  const { durationMinutes } = parseInput(disableBody, body);
  const row = await requireIdentity(ctx, id);
  if (row.is_default_admin) throw validationError('id', 'the default admin cannot be disabled', id);
  const now = ctx.core.clock.now();
  const until = durationMinutes > 0 ? new Date(now.getTime() + durationMinutes * 60_000).toISOString() : null;
  await ctx.core.store.tx(async () => {
    await ctx.core.store.runSql(
      'UPDATE identities SET disabled = 1, disabled_at = ?, disabled_until = ?, failed_login_attempts = 0, updated_at = ? WHERE id = ?',
      now.toISOString(),
      until,
      now.toISOString(),
      id,
    );
    await apiSessionsOf(ctx.core).removeForIdentity(id);
  });
  ctx.core.log.info({ identityId: id, until, by: ctx.caller.identityId }, 'identity disabled');
}

/** POST /identities/{id}/enable: clears every disabled state, a lockout included. */
export async function enableIdentity(ctx: Ctx, id: string): Promise<void> {
  requirePermission(ctx.caller, 'identity', 'update');
  await requireIdentity(ctx, id);
  const now = ctx.core.clock.now().toISOString();
  await ctx.core.store.runSql(
    'UPDATE identities SET disabled = 0, disabled_at = NULL, disabled_until = NULL, failed_login_attempts = 0, updated_at = ? WHERE id = ?',
    now,
    id,
  );
}

/** Disables (for `durationMinutes`, 0 = until enabled) or enables identities, as POST /identities/{id}/disable|enable. */
export async function bulkIdentityState(
  ctx: Ctx,
  def: ResourceDef,
  ids: string[],
  state: { disabled: boolean; durationMinutes?: number },
): Promise<BulkResult> {
  requirePermission(ctx.caller, 'identity', 'update');
  return eachEntity(ctx, def, ids, async (id) => {
    await (state.disabled ? disableIdentity(ctx, id, { durationMinutes: state.durationMinutes ?? 0 }) : enableIdentity(ctx, id));
  });
}
