import type { Core } from '../core';
import { apiSessionsOf, isJwt } from '../auth/index';
import { allRows, rowShape } from '../store/rows';

/**
 * What a stock router keeps of a legacy API session (OpenZiti's API session sync; OIDC sessions reach it as JWTs it
 * verifies itself): the token SDKs connect with, the identity, and the SHA-1 fingerprints of the certificates the
 * session may connect with — its identity's certificate authenticators and the session's own certificates, as
 * OpenZiti's controller lists them (VisitFingerprintsForApiSession). The router only lets an SDK in with both; what
 * the SDK then dials or binds is checked here again.
 */
export interface RouterApiSession {
  id: string;
  token: string;
  identityId: string;
  fingerprints: string[];
}

const SESSION = rowShape({ id: 'string', token: 'string', identity_id: 'string' });
const PRINT = rowShape({ owner: 'string', fingerprint: 'string' });
const ID = rowShape({ id: 'string' });

/** The legacy API sessions with these ids that still exist (all of them without ids). */
export async function routerApiSessions(core: Core, ids?: readonly string[]): Promise<RouterApiSession[]> {
  const store = core.store;
  const among = store.sql.jsonValues();
  return store.read(async () => {
    const legacy = "SELECT id, token, identity_id FROM api_sessions WHERE kind <> 'oidc'";
    const sessions = ids ? await allRows(store, SESSION, `${legacy} AND id IN ${among}`, JSON.stringify(ids)) : await allRows(store, SESSION, legacy);
    if (sessions.length === 0) return [];
    const identities = JSON.stringify([...new Set(sessions.map((s) => s.identity_id))]);
    const byIdentity = group(
      await allRows(
        store,
        PRINT,
        `SELECT identity_id AS owner, fingerprint FROM authenticators WHERE method = 'cert' AND fingerprint IS NOT NULL AND identity_id IN ${among}`,
        identities,
      ),
    );
    const bySession = group(
      await allRows(
        store,
        PRINT,
        `SELECT api_session_id AS owner, fingerprint FROM api_session_certificates WHERE api_session_id IN ${among}`,
        JSON.stringify(sessions.map((s) => s.id)),
      ),
    );
    return sessions.map((s) => ({
      id: s.id,
      token: s.token,
      identityId: s.identity_id,
      fingerprints: [...new Set([...(byIdentity.get(s.identity_id) ?? []), ...(bySession.get(s.id) ?? [])])],
    }));
  });
}

/** The sessions these session certificates belong to. */
export async function apiSessionsOfCertificates(core: Core, certificateIds: readonly string[]): Promise<string[]> {
  const sql = `SELECT DISTINCT api_session_id AS id FROM api_session_certificates WHERE id IN ${core.store.sql.jsonValues()}`;
  return (await allRows(core.store, ID, sql, JSON.stringify(certificateIds))).map((r) => r.id);
}

function group(rows: Array<{ owner: string; fingerprint: string }>): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const r of rows) m.set(r.owner, [...(m.get(r.owner) ?? []), r.fingerprint.toLowerCase()]);
  return m;
}

/**
 * A router's heartbeat of the legacy API session tokens its SDKs use: each live one is kept active (as a request with
 * it would); the tokens of sessions that no longer exist (or have just expired) are returned, for the router to drop.
 */
export async function heartbeatApiSessions(core: Core, tokens: readonly string[]): Promise<string[]> {
  const gone: string[] = [];
  for (const token of tokens) if (isJwt(token) || !(await apiSessionsOf(core).resolve(token))) gone.push(token);
  return gone;
}
