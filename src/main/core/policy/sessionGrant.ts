import type { ApiSession } from '../auth/index';
import { z } from 'zod';
import type { Ctx } from '../context';
import { nullableTags } from '../entities/common';
import { applySystemCreate } from '../entities/resource';
import { services } from './services';
import { sessions } from './sessions';
import { ApiError, notFound, unauthorized, validationError } from '../errors';
import { newId } from '../ids';
import { getRow, type Decoded } from '../store/rows';
import { parseInput } from '../validation';
import { classFor, grantsFor, type Grant } from './access';
import { anyPostureChecks, evaluateGrant, evaluationInput, policyPostureChecks, postureFailure, type PostureOutcome } from './posture';
import { serviceAccessTokensOf } from './serviceAccessToken';

const createBody = z.object({
  serviceId: z.string().optional(),
  type: z.enum(['Dial', 'Bind', 'Invalid']).optional(),
  tags: nullableTags.optional(),
});

/** The service as an identity may see it: 404 unless some policy grants Dial or Bind (OpenZiti hides the rest). */
export async function accessibleService(
  ctx: Ctx,
  serviceId: string,
): Promise<{ service: Decoded<typeof services.shape>; identityClass: number; serviceClass: number; grant: Grant }> {
  const core = ctx.core;
  const service = await getRow(core.store, services.shape, 'SELECT * FROM services WHERE id = ?', serviceId);
  if (!service) throw notFound('service');
  const identityClass = await classFor(core, 'identity', ctx.caller.identityId);
  const serviceClass = await classFor(core, 'service', serviceId);
  const grant = (await grantsFor(core.store, identityClass, [serviceClass])).get(serviceClass);
  if (!grant) throw notFound('service');
  return { service, identityClass, serviceClass, grant };
}

/**
 * POST /sessions (Client API): a Dial or Bind session of the caller's API session for a service. Repeating the
 * request returns the existing session. Refused with 404 when the service is not visible, 400 when only the other
 * kind of access is granted, 409 INVALID_POSTURE (recorded as a failed service request) when no policy of that
 * type has all its posture checks passing, 400 NO_EDGE_ROUTERS_AVAILABLE when no edge router serves both.
 */
export async function createSession(ctx: Ctx, apiSession: ApiSession, body: unknown): Promise<string> {
  const core = ctx.core;
  const store = core.store;
  const input = parseInput(createBody, body ?? {});
  if (!input.serviceId) throw validationError('serviceId', 'is required', input.serviceId);
  const type = input.type ?? 'Dial';
  if (type === 'Invalid') throw validationError('type', "must be 'Dial' or 'Bind'", type);
  // access is checked in the transaction that records the session: a revocation either comes first (refused) or
  // after (and ends the session with the others)
  const made = await store.tx(async (): Promise<{ id: string } | { refused: Parameters<typeof postureFailure>[2] }> => {
    const { service, identityClass, serviceClass, grant } = await accessibleService(ctx, input.serviceId!);
    if (!(type === 'Dial' ? grant.dial : grant.bind)) throw validationError('serviceId', 'service not found', input.serviceId);
    const existing = await store.getSql<{ id: string }>(
      'SELECT id FROM sessions WHERE api_session_id = ? AND service_id = ? AND type = ?',
      apiSession.id,
      service.id,
      type,
    );
    if (existing) return existing;
    // as OpenZiti: without any posture check there is nothing to evaluate (and no passing policies to record)
    const outcome: PostureOutcome = (await anyPostureChecks(store))
      ? evaluateGrant(
          await policyPostureChecks(store, identityClass, [serviceClass]),
          type,
          await evaluationInput(core, ctx.caller.identityId, apiSession),
        )
      : { passed: true, passingPolicyIds: [] };
    if (!outcome.passed) {
      return {
        refused: {
          apiSessionId: apiSession.id,
          serviceId: service.id,
          serviceName: service.name,
          sessionType: type,
          policyFailures: outcome.failure!.policyFailures as Array<{ policyId: string; checks: unknown[] }>,
        },
      };
    }
    const shared = await store.getSql(
      `SELECT 1 FROM identity_router_access ia JOIN service_router_access sa ON sa.router_class = ia.router_class
       WHERE ia.identity_class = ? AND sa.service_class = ? LIMIT 1`,
      identityClass,
      serviceClass,
    );
    if (!shared) throw new ApiError('NO_EDGE_ROUTERS_AVAILABLE', 400, 'No edge routers are assigned and online to handle the requested connection');
    const id = newId();
    const now = core.clock.now();
    const token = serviceAccessTokensOf(core).sign({
      sub: service.id,
      jti: id,
      iat: Math.floor(now.getTime() / 1000),
      z_asid: apiSession.id,
      z_iid: ctx.caller.identityId,
      z_st: type,
    });
    await applySystemCreate(ctx, sessions, {
      id,
      tags: input.tags ?? {},
      columns: {
        token,
        api_session_id: apiSession.id,
        identity_id: ctx.caller.identityId,
        service_id: service.id,
        type,
        service_policies: JSON.stringify(outcome.passingPolicyIds),
      },
    });
    return { id };
  });
  // a refusal is recorded (as a failed service request) in a transaction of its own, which the refusal does not undo
  if ('refused' in made) throw await store.tx(() => postureFailure(core, ctx.caller.identityId, made.refused));
  return made.id;
}

/** The optional `session-token` header of service edge router listings: when present it must be a valid session JWT of this API session. */
export function checkSessionTokenHeader(ctx: Ctx, token: string | undefined): void {
  if (token === undefined) return;
  const claims = serviceAccessTokensOf(ctx.core).verify(token);
  if (!claims || claims.z_asid !== ctx.caller.apiSessionId) throw unauthorized();
}
