import type { Core } from '../core';
import { fingerprintSha1 } from '../pki/index';
import { getRow, rowShape } from '../store/rows';
import { serviceAccessTokensOf, anyPostureChecks, revokeFailingSessions } from '../policy/index';
import { apiSessionsOf, isJwt } from '../auth/index';

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
 * An edge connection's hello: its API session token (a legacy session's token, or an OIDC session's JWT access
 * token, as OpenZiti's routers accept both) must name a live, fully authenticated API session, and the TLS client
 * certificate must be one of the identity's certificate authenticators or one of the API session's ephemeral
 * certificates (as OpenZiti's router checks the fingerprint against the API session).
 */
export async function authorizeChannel(core: Core, token: string, certDer: Buffer | undefined): Promise<ChannelCaller> {
  return authorizeApiSession(core, token, certDer ? [fingerprintSha1(certDer)] : []);
}

/**
 * The same check for a caller named by its API session token and the SHA-1 fingerprints of the certificates it
 * presented (what a stock router sends with each request it makes for an SDK): one of them must be one of the
 * identity's certificate authenticators or of the API session's ephemeral certificates.
 */
export async function authorizeApiSession(core: Core, token: string, fingerprints: readonly string[]): Promise<ChannelCaller> {
  const resolved = token ? await apiSessionsOf(core).resolve(token) : undefined;
  if (!resolved) throw new DataPlaneRefusal('invalid or expired API session');
  if (resolved.caller.partial) throw new DataPlaneRefusal('the API session still needs additional authentication (MFA)');
  if (fingerprints.length === 0) throw new DataPlaneRefusal('a client certificate is required');
  const session = resolved.session;
  const list = JSON.stringify(fingerprints.map((f) => f.toLowerCase()));
  const known = await core.store.getSql(
    `SELECT 1 FROM authenticators WHERE fingerprint IN ${core.store.sql.jsonValues('?', 'text')} AND identity_id = ? AND method = 'cert'
     UNION ALL SELECT 1 FROM api_session_certificates WHERE fingerprint IN ${core.store.sql.jsonValues('?', 'text')} AND api_session_id = ? LIMIT 1`,
    list,
    session.identity_id,
    list,
    session.id,
  );
  if (!known) throw new DataPlaneRefusal('invalid client certificate for the API session');
  return {
    apiSessionId: session.id,
    apiSessionToken: token,
    identityId: resolved.caller.identityId,
    identityName: resolved.caller.identityName,
  };
}

/**
 * Whether the API session behind a connection still exists (and is not expired). A connection of an OIDC session
 * lasts as long as the session, not as its access token: SDKs refresh tokens on their own and send the router
 * each new one (authorizeTokenUpdate).
 */
export async function channelStillValid(core: Core, caller: ChannelCaller): Promise<boolean> {
  if (isJwt(caller.apiSessionToken)) return apiSessionsOf(core).isLive(caller.apiSessionId);
  return !!(await apiSessionsOf(core).resolve(caller.apiSessionToken));
}

/**
 * An SDK's UpdateToken on a connection of an OIDC session: the new access token must be valid and name the same
 * identity. A token of the connection's own API session replaces the connection's; one of another session of the
 * identity changes nothing (as OpenZiti's router, which updates only the connections of that token's session).
 * Throws a DataPlaneRefusal with the reason otherwise.
 */
export async function authorizeTokenUpdate(core: Core, caller: ChannelCaller, token: string): Promise<void> {
  if (!isJwt(caller.apiSessionToken))
    throw new DataPlaneRefusal("current connection isn't authenticated via JWT bearer tokens, unable to switch to them");
  if (!isJwt(token)) throw new DataPlaneRefusal('message did not contain a valid JWT bearer token');
  const resolved = await apiSessionsOf(core).resolve(token);
  if (!resolved || resolved.caller.partial) throw new DataPlaneRefusal('api session JWT bearer token failed to parse or validate');
  if (resolved.caller.identityId !== caller.identityId) throw new DataPlaneRefusal('the token belongs to another identity');
  if (resolved.session.id === caller.apiSessionId) caller.apiSessionToken = token;
}

/** A Dial/Bind session with what the router needs of its service. */
const GRANTED = rowShape({ id: 'string', service_id: 'string', name: 'string', encryption_required: 'bool' });

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
  const row = await getRow(
    core.store,
    GRANTED,
    `SELECT s.id, s.service_id, v.name, v.encryption_required FROM sessions s JOIN services v ON v.id = s.service_id
     WHERE s.id = ? AND s.token = ?`,
    claims.jti,
    token,
  );
  if (!row) throw new DataPlaneRefusal('the session no longer exists');
  return {
    sessionId: row.id,
    serviceId: row.service_id,
    serviceName: row.name,
    encryptionRequired: row.encryption_required,
  };
}

/**
 * Posture is evaluated when a session is created and again at each dial and bind: checks can start failing with no
 * write that would end the session (an edited posture check, an MFA timeout). As OpenZiti's controller does when
 * posture fails, the identity's failing sessions are deleted, which also ends their circuits and terminators. Throws
 * a DataPlaneRefusal when the grant's own session is among them.
 */
export async function checkSessionPosture(core: Core, caller: ChannelCaller, grant: SessionGrant): Promise<void> {
  if (!(await anyPostureChecks(core.store))) return;
  await core.store.tx(() => revokeFailingSessions(core, caller.identityId));
  if (!(await core.store.getSql('SELECT 1 FROM sessions WHERE id = ?', grant.sessionId))) {
    throw new DataPlaneRefusal(`failed to pass posture checks for service ${grant.serviceName}`);
  }
}
