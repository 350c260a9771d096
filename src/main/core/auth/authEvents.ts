import type { Core } from '../core';
import { metersOf } from '../meters';

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
  await core.store.runSql(
    "INSERT INTO outbox (entity, op, entity_id, after_row, created_at) VALUES ('event:authentication', ?, ?, ?, ?)",
    o.event_type,
    fields.identity_id,
    JSON.stringify(fields),
    core.clock.now().toISOString(),
  );
}
