import type { Core } from '../core';
import { externalIdFromCertificate, usableCas, type CaRow } from '../entities/cas';
import type { ApiObject } from '../entities/resource';
import { chainToAnchor, fingerprintSha1, isCurrentlyValid, peerPems } from '../pki/index';
import { getRow } from '../store/rows';
import { completeLogin, LOGIN_AUTHENTICATOR, parseAuthenticateBody, type ClientInfo, type LoginOptions } from './authenticate';
import { LOGIN_IDENTITY, type LoginIdentity } from './disabled';
import { recordingFailures, refused } from './authEvents';

/** Authenticator id of sessions whose identity was found by a CA's externalId claim (no stored authenticator). */
export const EXTERNAL_ID_AUTHENTICATOR = 'internal';

/**
 * POST /authenticate?method=cert: the TLS client certificate of the connection must chain to the controller's CAs or
 * to a verified CA with authentication enabled. The identity is the one whose certificate authenticator has the
 * certificate's fingerprint, or, for a CA with an externalIdClaim, the one whose externalId the certificate carries.
 * Validity dates are enforced unless the identity's auth policy allows expired certificates.
 */
export function authenticateCert(
  core: Core,
  rawBody: unknown,
  peerCertificates: Buffer[],
  client: ClientInfo,
  opts: LoginOptions = {},
): Promise<ApiObject> {
  return recordingFailures(core, 'cert', client, () => certLogin(core, rawBody, peerCertificates, client, opts));
}

async function certLogin(core: Core, rawBody: unknown, peerCertificates: Buffer[], client: ClientInfo, opts: LoginOptions): Promise<ApiObject> {
  const body = parseAuthenticateBody(rawBody);
  const [leaf, ...intermediates] = peerPems(peerCertificates);
  if (!leaf) throw refused({ reason: 'no client certificate' }, 'a client certificate is required');
  const now = core.clock.now();
  const fail = (reason: string, authenticator_id?: string) => {
    core.log.info({ reason, fingerprint: fingerprintSha1(leaf) }, 'certificate authentication failed');
    return refused({ reason, authenticator_id });
  };

  // dates are checked against the auth policy below, once the identity is known
  let ca: CaRow | undefined;
  if (!chainToAnchor(leaf, intermediates, controllerAnchors(core), now, true).ok) {
    ca = (await usableCas(core.system, 'is_auth_enabled')).find((c) => chainToAnchor(leaf, intermediates, c.anchors, now, true).ok)?.row;
    if (!ca) throw fail('certificate does not chain to a trusted CA');
  }

  let identity: LoginIdentity | undefined;
  let authenticator: { id: string };
  const claim = ca?.external_id_claim ?? null;
  const externalId = claim ? externalIdFromCertificate(leaf, claim) : undefined;
  if (externalId) {
    identity = await getRow(core.store, LOGIN_IDENTITY, 'SELECT * FROM identities WHERE external_id = ?', externalId);
    authenticator = { id: EXTERNAL_ID_AUTHENTICATOR };
  } else {
    const found = await getRow(
      core.store,
      LOGIN_AUTHENTICATOR,
      "SELECT * FROM authenticators WHERE method = 'cert' AND fingerprint = ?",
      fingerprintSha1(leaf),
    );
    if (!found) throw fail('no authenticator has this certificate');
    authenticator = found;
    identity = await getRow(core.store, LOGIN_IDENTITY, 'SELECT * FROM identities WHERE id = ?', found.identity_id);
  }
  if (!identity) throw fail('no identity for this certificate', authenticator.id);
  // disabled identity, cert.allowed and allowExpiredCerts are the shared auth-policy checks of completeLogin
  return completeLogin(core, { method: 'cert', identity, authenticator, certExpired: !isCurrentlyValid(leaf, now) }, body, client, opts);
}

function controllerAnchors(core: Core): string[] {
  return [core.pki.root.certPem, core.pki.intermediate.certPem, core.pki.signing.certPem];
}
