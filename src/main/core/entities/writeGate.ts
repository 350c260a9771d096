import type { Row } from '../store/db';
import type { RoleKind } from '../../../shared/roleKinds';

/** What a write changed: a row created, updated (PUT or PATCH) or deleted. */
export type GateOp = 'create' | 'update' | 'patch' | 'delete';

/** The facts of a resource type the gate's subscribers use (every ResourceDef has them). */
export interface WrittenType {
  entity: string;
  table: string;
  roleKind?: RoleKind;
  /** API field -> column; `shown: false`: never presented (and never put into change events) */
  columns: Record<string, { column: string; shown?: boolean }>;
}

/**
 * One write of a resource, as the generic write path hands it to the gate: inside the write's transaction, with the
 * rows as they were (`before`, none for a create) and as they are now (`after`, none for a delete).
 */
export interface Write<C = unknown> {
  ctx: C;
  def: WrittenType;
  op: GateOp;
  id: string;
  before?: Row;
  after?: Row;
}

/**
 * What must happen with every write, in its transaction (it commits or rolls back with it): the policy index, the
 * audit log, the outbox of change events. Registered by the core's modules (core/modules.ts), and per request by an
 * adapter (`ctx.onWrite`: the request's audit entry).
 */
export type WriteSubscriber<C = unknown> = (w: Write<C>) => Promise<void> | void;

/** Hands a write to every subscriber, in order; a subscriber's failure fails the write. */
export async function passGate<C>(subscribers: ReadonlyArray<WriteSubscriber<C>>, w: Write<C>): Promise<void> {
  for (const s of subscribers) await s(w);
}
