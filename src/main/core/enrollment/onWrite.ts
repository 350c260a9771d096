import type { Ctx } from '../context';
import type { WriteSubscriber } from '../entities/writeGate';
import { createIdentityEnrollments } from './records';
import { issueRouterEnrollment, type RouterKind } from './routers';

/** The router types by entity: what a created router is enrolled as. */
const ROUTER_TYPES: Readonly<Record<string, RouterKind>> = { 'edge-routers': 'edge', routers: 'transit' };

/**
 * The enrollment engine's part of every write (the write gate, in the write's transaction): an identity created with
 * `enrollment: {ott | ottca | updb}` gets those enrollments, a created edge or transit router its enrollment JWT.
 * The declarations of those types (policy/identities.ts, policy/edgeRouters.ts, entities/routers.ts) are floors below.
 */
export const enrollmentOnWrite: WriteSubscriber<Ctx> = async ({ ctx, def, op, id, input }) => {
  if (op !== 'create') return;
  if (def.entity === 'identities') {
    await createIdentityEnrollments(ctx, id, (input?.enrollment ?? undefined) as Parameters<typeof createIdentityEnrollments>[2]);
    return;
  }
  const router = ROUTER_TYPES[def.entity];
  if (router) await issueRouterEnrollment(ctx, router, id);
};
