import type { Core } from '../core';
import { ApiError, invalidAuth } from '../errors';
import { metersOf } from '../meters';
import { recordEvents } from '../eventRows';

/** A login's outcome as OpenZiti's authentication event describes it (controller/event/authentication.go). */
export interface AuthOutcome {
  event_type: 'success' | 'fail';
  /** password, cert or ext-jwt (authenticate.ts PrimaryMethod) */
  method: string;
  authenticator_id?: string;
  external_jwt_signer_id?: string;
  identity_id?: string;
  auth_policy_id?: string;
  remote_address: string;
  reason?: string;
}

/**
 * Records an authentication event in the outbox (an `event:` row, which core/ops/events.ts hands on as it is): a
 * success in the login's transaction, a failure on its own. The fields in OpenZiti's order; `success` says what the
 * event type says (OpenZiti 1.7.2 always writes false there).
 */
export async function recordAuthEvent(core: Core, o: AuthOutcome): Promise<void> {
  metersOf(core).authentication(o.method, o.event_type);
  const fields = {
    event_type: o.event_type,
    type: o.method,
    authenticator_id: o.authenticator_id ?? '',
    external_jwt_signer_id: o.external_jwt_signer_id ?? '',
    identity_id: o.identity_id ?? '',
    auth_policy_id: o.auth_policy_id ?? '',
    remote_address: o.remote_address,
    success: o.event_type === 'success',
    reason: o.reason ?? '',
    improper_client_cert_chain: false,
  };
  await recordEvents(core, [{ namespace: 'authentication', op: o.event_type, entityId: fields.identity_id, fields }]);
}

/** What a refused login's failure event says beyond its method and address. */
export type RefusalDetails = Omit<AuthOutcome, 'event_type' | 'method' | 'remote_address'> & { reason: string };

const refusals = new WeakMap<ApiError, RefusalDetails | 'recorded'>();

/** 401 INVALID_AUTH for a refused login, with what its failure event will say (see recordingFailures). */
export function refused(details: RefusalDetails, message?: string): ApiError {
  const err = invalidAuth(message);
  refusals.set(err, details);
  return err;
}

/** 401 INVALID_AUTH for a login whose failure event was written already (with the attempt it counts). */
export function refusedAndRecorded(): ApiError {
  const err = invalidAuth();
  refusals.set(err, 'recorded');
  return err;
}

/**
 * Runs a login; a 401 it ends with gets its authentication `fail` event, once, after any transaction the refusal
 * rolled back (a database failure or a 400 is no login decision and gets none).
 */
export async function recordingFailures<T>(core: Core, method: string, client: { ipAddress: string }, login: () => Promise<T>): Promise<T> {
  try {
    return await login();
  } catch (e) {
    const details = e instanceof ApiError && e.status === 401 ? refusals.get(e) : 'recorded';
    if (details !== 'recorded') {
      await recordAuthEvent(core, {
        event_type: 'fail',
        method,
        remote_address: client.ipAddress,
        ...(details ?? { reason: (e as Error).message }),
      }).catch((err: unknown) => core.log.warn({ err }, 'could not record a failed login'));
    }
    throw e;
  }
}

/** Why a login was refused (what its failure event records), for a caller that explains it to the person signing in. */
export function refusalReason(e: unknown): string | undefined {
  const details = e instanceof ApiError ? refusals.get(e) : undefined;
  return details && details !== 'recorded' ? details.reason : undefined;
}
