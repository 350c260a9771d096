import { addCertAuthenticator, apiSessionsOf } from '../auth/index';
import type { Core } from '../core';
import { applyCreate } from '../entities/resource';
import { controllerId } from '../ops/index';
import { fingerprintSha1 } from '../pki/index';
import { createSession, identities } from '../policy/index';
import { allRows, getRow, json, rowShape } from '../store/rows';

/**
 * The store's side of the frontend's identity in the overlay (share/frontendOverlay.ts dials with it): the identity
 * ("weft-frontend", non-admin, created once through the system write path and remembered in the settings), its
 * client certificate's authenticator per node, and the Dial sessions it gets.
 */
const SETTING = 'frontend_identity_id';
const IDENTITY_NAME = 'weft-frontend';
const CERT_TAG = 'weft.frontendCert';
const TAGGED = rowShape({ id: 'string', tags: json<Record<string, unknown>>('?') });
const DIAL = rowShape({ token: 'string', name: 'string', encryption_required: 'bool' });

/** The frontend's identity: the one remembered in the settings, or a new one. */
export async function ensureFrontendIdentity(core: Core): Promise<string> {
  const store = core.store;
  const remembered = async () => {
    const known = (await store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', SETTING))?.value;
    return known && (await store.getSql('SELECT 1 FROM identities WHERE id = ?', known)) ? known : undefined;
  };
  const known = await remembered();
  if (known) return known;
  return store.tx(async () => {
    // again with the write: another node on the same database may have made it meanwhile
    const made = await remembered();
    if (made) return made;
    let name = IDENTITY_NAME;
    for (let i = 2; await store.getSql('SELECT 1 FROM identities WHERE name = ?', name); i++) name = `${IDENTITY_NAME}-${i}`;
    const id = await applyCreate(core.system, identities, {
      name,
      type: 'Default',
      isAdmin: false,
      roleAttributes: [],
      tags: { 'weft.frontend': true },
    });
    await store.runSql('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', SETTING, id);
    return id;
  });
}

/**
 * This node's certificate authenticator for the frontend identity (its id). Nodes sharing one database (PostgreSQL)
 * share the identity, each with a certificate of its own (tagged with its controller id): this replaces this node's
 * previous one (and one from before the tags) and ends the API sessions made with it, never another node's.
 */
export async function replaceFrontendCertificate(core: Core, identityId: string, certPem: string): Promise<string> {
  const store = core.store;
  const node = await controllerId(core);
  return store.tx(async () => {
    const previous = (
      await allRows(store, TAGGED, "SELECT id, tags FROM authenticators WHERE identity_id = ? AND method = 'cert'", identityId)
    ).filter((a) => a.tags?.[CERT_TAG] === node || a.tags?.[CERT_TAG] === true);
    for (const a of previous) {
      const sessions = await store.allSql<{ id: string }>('SELECT id FROM api_sessions WHERE authenticator_id = ?', a.id);
      for (const { id } of sessions) await apiSessionsOf(core).remove(id);
      await store.runSql('DELETE FROM authenticators WHERE id = ?', a.id);
    }
    return addCertAuthenticator(core, { identityId, certPem, fingerprint: fingerprintSha1(certPem), issuedByNetwork: true }, { [CERT_TAG]: node });
  });
}

/** The Dial session of a service for the frontend's API session (the token a router connection presents). */
export async function frontendDialSession(
  core: Core,
  serviceId: string,
  apiSessionToken: string,
): Promise<{ token: string; service: string; encryptionRequired: boolean }> {
  const resolved = await apiSessionsOf(core).resolve(apiSessionToken);
  if (!resolved) throw new Error('the frontend API session has ended');
  let id: string;
  try {
    id = await createSession(core.ctx(resolved.caller), resolved.session, { serviceId, type: 'Dial' });
  } catch (err) {
    throw new Error(`the frontend may not dial service ${serviceId}: ${(err as Error).message}`, { cause: err });
  }
  const row = await getRow(
    core.store,
    DIAL,
    'SELECT s.token, v.name, v.encryption_required FROM sessions s JOIN services v ON v.id = s.service_id WHERE s.id = ?',
    id,
  );
  // revoked (or its service deleted) since it was made
  if (!row) throw new Error(`the frontend's session for service ${serviceId} has ended`);
  return { token: row.token, service: row.name, encryptionRequired: row.encryption_required };
}

/** Ends the frontend's API session with this token, if it still exists. */
export async function endFrontendApiSession(core: Core, token: string): Promise<void> {
  const row = await core.store.getSql<{ id: string }>('SELECT id FROM api_sessions WHERE token = ?', token);
  if (row) await apiSessionsOf(core).remove(row.id);
}
