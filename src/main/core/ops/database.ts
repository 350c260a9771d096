import { requirePermission } from '../auth/permissions';
import type { Ctx } from '../context';

/** The `/database/*` operations (REST and console alike): integrity runs and snapshots, for ops readers and writers. */

/** Starts a data integrity check (repairing what it finds when `fix`); returns the run's state as it starts. */
export function startIntegrityCheck(ctx: Ctx, fix: boolean) {
  requirePermission(ctx.caller, 'ops', 'update');
  ctx.core.security.integrity.start(fix);
  return ctx.core.security.integrity.results();
}

export function integrityResults(ctx: Ctx) {
  requirePermission(ctx.caller, 'ops', 'read');
  return ctx.core.security.integrity.results();
}

/** Writes a consistent copy of the database into the data directory; returns its file. */
export function createSnapshot(ctx: Ctx): Promise<string> {
  requirePermission(ctx.caller, 'ops', 'update');
  return ctx.core.security.snapshots.create();
}
