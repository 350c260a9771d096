import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { snapshotsOf } from './snapshot';
import { integrityOf } from './integrity';

/** The `/database/*` operations (REST and console alike): integrity runs and snapshots, for ops readers and writers. */

/** Starts a data integrity check (repairing what it finds when `fix`); returns the run's state as it starts. */
export async function startIntegrityCheck(ctx: Ctx, fix: boolean) {
  requirePermission(ctx.caller, 'ops', 'update');
  await integrityOf(ctx.core).start(fix);
  return integrityOf(ctx.core).results();
}

export async function integrityResults(ctx: Ctx) {
  requirePermission(ctx.caller, 'ops', 'read');
  return integrityOf(ctx.core).results();
}

/** Writes a consistent copy of the database into the data directory; returns its file. */
export function createSnapshot(ctx: Ctx): Promise<string> {
  requirePermission(ctx.caller, 'ops', 'update');
  return snapshotsOf(ctx.core).create();
}
