import type { Core } from '../core';
import { fingerprintSha1 } from '../pki/index';
import type { Row } from '../store/db';
import { serviceAccessTokensOf } from '../policy/serviceAccessToken';
import { apiSessionsOf } from '../auth/apiSessions';

/** Why the data plane refuses a connection or a dial/bind; the text goes back to the SDK. */
export class DataPlaneRefusal extends Error {}

/** Who is on the other end of an edge connection. */
export interface ChannelCaller {
  apiSessionId: string;
  apiSessionToken: string;
  identityId: string;
  identityName: string;
}

/** What a Dial or Bind session lets its holder reach. */
export interface SessionGrant {
  sessionId: string;
  serviceId: string;
  serviceName: string;
  encryptionRequired: boolean;
}

/**
 * An edge connection's hello: its API session token must name a live, fully authenticated API session, and the
 * TLS client certificate must be one of the identity's certificate authenticators or one of the API session's
 * ephemeral certificates (as OpenZiti's router checks the fingerprint against the API session).
 */
export async function authorizeChannel(core: Core, token: string, certDer: Buffer | undefined): Promise<ChannelCaller> {
  const resolved = token ? await apiSessionsOf(core).resolve(token) : undefined;
  if (!resolved) throw new DataPlaneRefusal('invalid or expired API session');
  if (resolved.caller.partial) throw new DataPlaneRefusal('the API session still needs additional authentication (MFA)');
  if (!certDer) throw new DataPlaneRefusal('a client certificate is required');
  const fingerprint = fingerprintSha1(certDer);
  const session = resolved.session;
  const known = await core.store.getSql(
    `SELECT 1 FROM authenticators WHERE fingerprint = ? AND identity_id = ? AND method = 'cert'
     UNION ALL SELECT 1 FROM api_session_certificates WHERE fingerprint = ? AND api_session_id = ? LIMIT 1`,
    fingerprint,
    session.identity_id,
    fingerprint,
    session.id,
  );
  if (!known) throw new DataPlaneRefusal('invalid client certificate for the API session');
  return {
    apiSessionId: session.id as string,
    apiSessionToken: token,
    identityId: resolved.caller.identityId,
    identityName: resolved.caller.identityName,
  };
}

/** Whether the API session behind a connection still exists (and is not expired). */
export async function channelStillValid(core: Core, caller: ChannelCaller): Promise<boolean> {
  return !!(await apiSessionsOf(core).resolve(caller.apiSessionToken));
}

/**
 * A Connect (Dial) or Bind: the token must be a session token of ours, of that type, issued to this connection's
 * API session, and the session must still exist (sessions are deleted when access, posture, the service or the
 * API session goes away).
 */
export async function authorizeServiceSession(core: Core, caller: ChannelCaller, token: string, type: 'Dial' | 'Bind'): Promise<SessionGrant> {
  const claims = serviceAccessTokensOf(core).verify(token);
  if (!claims) throw new DataPlaneRefusal('invalid session token');
  if (claims.z_st !== type) throw new DataPlaneRefusal(`invalid session type: expected ${type}, got ${claims.z_st}`);
  if (claims.z_asid !== caller.apiSessionId) throw new DataPlaneRefusal('the session belongs to another API session');
  const row = await core.store.getSql<Row>(
    `SELECT s.id, s.service_id, v.name, v.encryption_required FROM sessions s JOIN services v ON v.id = s.service_id
     WHERE s.id = ? AND s.token = ?`,
    claims.jti,
    token,
  );
  if (!row) throw new DataPlaneRefusal('the session no longer exists');
  return {
    sessionId: row.id as string,
    serviceId: row.service_id as string,
    serviceName: row.name as string,
    encryptionRequired: !!row.encryption_required,
  };
}
