import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Core } from '../core/core';
import { identities } from '../core/entities/identities';
import { applyCreate } from '../core/entities/resource';
import { fingerprintSha1, generateKeyPair, issueLeafCertificate } from '../core/pki/index';
import { createSession } from '../core/policy/sessionGrant';
import type { Row } from '../core/store/db';
import type { OverlayDialer } from '../frontend/types';
import { EdgeClient, type ServiceSession } from '../sdk';
import { addCertAuthenticator } from '../core/entities/authenticators';
import { controllerId } from '../core/ops/controllerNodes';
import { apiSessionsOf } from '../core/auth/apiSessions';

const SETTING = 'frontend_identity_id';
const IDENTITY_NAME = 'weft-frontend';
const CERT_TAG = 'weft.frontendCert';
const CERT_VALIDITY_DAYS = 365;

/**
 * The frontend's way into the overlay. The frontend runs inside Weft, yet it dials overlay shares through the edge
 * router over TLS like any SDK client would, as a dedicated identity ("weft-frontend", non-admin, created once
 * through the core's system write path and remembered in the settings). Each share's own Dial policy names that
 * identity (`@id`, read by `weft share` from runtime.json), so it reaches exactly the overlay shares and nothing
 * else — not the admin, whose certificate could reach everything. Its client certificate is issued in memory at
 * every start (the previous one's authenticator is replaced: no key on disk), its API session is created in
 * process and replaced when it has expired, and Dial sessions come from the same core function as
 * `POST /sessions`. Every dial gets its own router connection, so a slow browser on one share never stalls another.
 */
export class FrontendOverlay implements OverlayDialer {
  private apiSession?: string;

  private constructor(
    private readonly core: Core,
    readonly identityId: string,
    private readonly authenticatorId: string,
    private readonly client: EdgeClient,
  ) {}

  static async start(core: Core, router: { url: string }, log: Logger): Promise<FrontendOverlay> {
    const identityId = await ensureFrontendIdentity(core);
    const keys = await generateKeyPair('EC-P256');
    const certPem = await issueLeafCertificate({
      publicKey: keys.publicKeyPem,
      commonName: identityId,
      issuer: core.pki.signing,
      usage: 'client',
      validityDays: CERT_VALIDITY_DAYS,
      uriSans: [`spiffe://${core.pki.trustDomain}/identity/${identityId}`],
      now: core.clock.now(),
    });
    const store = core.store;
    // Nodes sharing one database (PostgreSQL) share the identity, each with a certificate of its own (tagged with
    // its controller id): a start replaces this node's previous one (and one from before the tags) and ends the API
    // sessions made with it, never another node's.
    const node = await controllerId(core);
    const authenticatorId = await store.tx(async () => {
      const previous = (
        await store.allSql<{ id: string; tags: string }>("SELECT id, tags FROM authenticators WHERE identity_id = ? AND method = 'cert'", identityId)
      ).filter((a) => [node, true].includes((JSON.parse(a.tags || '{}') as Record<string, unknown> | null)?.[CERT_TAG] as string | boolean));
      for (const a of previous) {
        const sessions = await store.allSql<{ id: string }>('SELECT id FROM api_sessions WHERE authenticator_id = ?', a.id);
        for (const { id } of sessions) await apiSessionsOf(core).remove(id);
        await store.runSql('DELETE FROM authenticators WHERE id = ?', a.id);
      }
      return addCertAuthenticator(core, { identityId, certPem, fingerprint: fingerprintSha1(certPem), issuedByNetwork: true }, { [CERT_TAG]: node });
    });
    let overlay: FrontendOverlay | undefined;
    const client = new EdgeClient({
      routerUrl: router.url,
      ca: core.pki.caBundlePem,
      cert: certPem,
      key: keys.privateKeyPem,
      apiSession: () => overlay!.currentApiSession(),
    });
    overlay = new FrontendOverlay(core, identityId, authenticatorId, client);
    log.debug({ identityId, router: router.url }, 'frontend: overlay shares are dialed through the built-in router');
    return overlay;
  }

  /** A live API session of the frontend identity (a new one when the last has expired or was deleted). */
  private async currentApiSession(): Promise<string> {
    if (this.apiSession && (await apiSessionsOf(this.core).resolve(this.apiSession))) return this.apiSession;
    const row = await apiSessionsOf(this.core).create({
      identityId: this.identityId,
      authenticatorId: this.authenticatorId,
      ipAddress: '127.0.0.1',
      configTypes: [],
      isMfaRequired: false,
    });
    this.apiSession = row.token as string;
    return this.apiSession;
  }

  /** The Dial session of the share's service for the API session a router connection presents. */
  private async dialSession(serviceId: string, apiSessionToken: string): Promise<ServiceSession> {
    const resolved = await apiSessionsOf(this.core).resolve(apiSessionToken);
    if (!resolved) throw new Error('the frontend API session has ended');
    let id: string;
    try {
      id = await createSession(this.core.ctx(resolved.caller), resolved.session, { serviceId, type: 'Dial' });
    } catch (err) {
      throw new Error(`the frontend may not dial service ${serviceId}: ${(err as Error).message}`, { cause: err });
    }
    const row = await this.core.store.getSql<Row>(
      'SELECT s.token, v.name, v.encryption_required FROM sessions s JOIN services v ON v.id = s.service_id WHERE s.id = ?',
      id,
    );
    // revoked (or its service deleted) since it was made
    if (!row) throw new Error(`the frontend's session for service ${serviceId} has ended`);
    return { token: row.token as string, service: row.name as string, encryptionRequired: !!row.encryption_required };
  }

  dial(serviceId: string): Promise<Duplex> {
    return this.client.dial((apiSessionToken) => this.dialSession(serviceId, apiSessionToken), { dedicated: true });
  }

  async close(): Promise<void> {
    this.client.close();
    if (this.apiSession) {
      const row = await this.core.store.getSql<{ id: string }>('SELECT id FROM api_sessions WHERE token = ?', this.apiSession);
      if (row) await apiSessionsOf(this.core).remove(row.id);
    }
  }
}

/** The frontend's identity: the one remembered in the settings, or a new one. */
async function ensureFrontendIdentity(core: Core): Promise<string> {
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
