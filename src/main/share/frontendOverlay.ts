import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { apiSessionsOf } from '../core/auth/index';
import type { Core } from '../core/context';
import { generateKeyPair, issueLeafCertificate } from '../core/pki/index';
import { endFrontendApiSession, ensureFrontendIdentity, frontendDialSession, replaceFrontendCertificate } from '../core/shares/index';
import type { OverlayDialer } from '../frontend/types';
import { EdgeClient, type ServiceSession } from '../sdk';

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
    // Nodes sharing one database (PostgreSQL) share the identity, each with a certificate of its own: a start replaces
    // this node's previous one and ends the API sessions made with it, never another node's.
    const authenticatorId = await replaceFrontendCertificate(core, identityId, certPem);
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
    this.apiSession = row.token;
    return this.apiSession;
  }

  /** The Dial session of the share's service for the API session a router connection presents. */
  private dialSession(serviceId: string, apiSessionToken: string): Promise<ServiceSession> {
    return frontendDialSession(this.core, serviceId, apiSessionToken);
  }

  dial(serviceId: string): Promise<Duplex> {
    return this.client.dial((apiSessionToken) => this.dialSession(serviceId, apiSessionToken), { dedicated: true });
  }

  async close(): Promise<void> {
    this.client.close();
    if (this.apiSession) await endFrontendApiSession(this.core, this.apiSession);
  }
}
