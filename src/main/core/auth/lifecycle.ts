import { z } from 'zod';
import type { Ctx } from '../context';
import { notFound, validationError } from '../errors';
import type { Row } from '../store/db';
import { parseInput } from '../validation';
import { requirePermission } from './permissions';
import { apiSessionsOf } from './apiSessions';

/** 0 = until enabled again; otherwise at most ten years. */
export const disableBody = z.object({ durationMinutes: z.number().int().min(0, 'must be 0 (indefinitely) or more').max(5_256_000) });

function requireIdentity(ctx: Ctx, id: string): Row {
  const row = ctx.core.store.getSql<Row>('SELECT id, is_default_admin FROM identities WHERE id = ?', id);
  if (!row) throw notFound('identity');
  return row;
}

/**
 * POST /identities/{id}/disable: refuses new logins by every method for `durationMinutes` (0 = until enabled)
 * and ends the identity's API sessions now.
 */
export function disableIdentity(ctx: Ctx, id: string, body: unknown): void {
  requirePermission(ctx.caller, 'identity', 'update');
  const { durationMinutes } = parseInput(disableBody, body);
  const row = requireIdentity(ctx, id);
  if (row.is_default_admin) throw validationError('id', 'the default admin cannot be disabled', id);
  const now = ctx.core.clock.now();
  const until = durationMinutes > 0 ? new Date(now.getTime() + durationMinutes * 60_000).toISOString() : null;
  ctx.core.store.tx(() => {
    ctx.core.store.runSql(
      'UPDATE identities SET disabled = 1, disabled_at = ?, disabled_until = ?, failed_login_attempts = 0, updated_at = ? WHERE id = ?',
      now.toISOString(),
      until,
      now.toISOString(),
      id,
    );
    apiSessionsOf(ctx.core).removeForIdentity(id);
  });
  ctx.core.log.info({ identityId: id, until, by: ctx.caller.identityId }, 'identity disabled');
}

/** POST /identities/{id}/enable: clears every disabled state, a lockout included. */
export function enableIdentity(ctx: Ctx, id: string): void {
  requirePermission(ctx.caller, 'identity', 'update');
  requireIdentity(ctx, id);
  const now = ctx.core.clock.now().toISOString();
  ctx.core.store.runSql(
    'UPDATE identities SET disabled = 0, disabled_at = NULL, disabled_until = NULL, failed_login_attempts = 0, updated_at = ? WHERE id = ?',
    now,
    id,
  );
}
