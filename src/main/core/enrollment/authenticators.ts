import { z } from 'zod';
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { forbidden, notFound, unauthorized, validationError } from '../errors';
import { fingerprintSha1, parseCertificate, peerPems, splitPemBundle } from '../pki/index';
import { getRow, rowShape, selectList, type Decoded } from '../store/rows';
import { parseInput } from '../validation';
import { issueFromCsr, keyChanged, type IssuedCertificate } from './certificates';
import { authenticatorCannotBeUpdated, invalidClientCert } from '../enrollmentErrors';
import { issuedByNetwork } from '../auth/index';
import { insertEnrollment } from './records';

/** What re-enrollment and certificate extension read of an authenticator. */
const AUTHENTICATOR = rowShape({
  id: 'string',
  identity_id: 'string',
  method: 'string',
  username: 'string?',
  ca_id: 'string?',
  fingerprint: 'string?',
  cert_pem: 'string?',
  unverified_fingerprint: 'string?',
  unverified_cert_pem: 'string?',
});
type Authenticator = Decoded<typeof AUTHENTICATOR>;

async function requireAuthenticator(ctx: Ctx, id: string): Promise<Authenticator> {
  const row = await getRow(ctx.core.store, AUTHENTICATOR, `SELECT ${selectList(AUTHENTICATOR)} FROM authenticators WHERE id = ?`, id);
  if (!row) throw notFound('authenticator');
  return row;
}

/** Whether a certificate was issued by this controller's signing CA (only those can be extended). */

const reEnrollSchema = z.object({ expiresAt: z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time' }) });

/**
 * POST /authenticators/{id}/re-enroll: the authenticator is deleted and a matching enrollment created in its place
 * (updb -> updb with the same username, cert -> ott, cert from a CA -> ottca). Returns the enrollment id.
 */
export async function reEnrollAuthenticator(ctx: Ctx, id: string, body: unknown): Promise<string> {
  requirePermission(ctx.caller, 'identity', 'update');
  requirePermission(ctx.caller, 'enrollment', 'create');
  const input = parseInput(reEnrollSchema, body);
  const store = ctx.core.store;
  // read, deleted and replaced in one transaction: a rename or deletion made meanwhile is seen
  return store.tx(async () => {
    const auth = await requireAuthenticator(ctx, id);
    const expiresAt = new Date(input.expiresAt);
    if (expiresAt <= ctx.core.clock.now()) throw validationError('expiresAt', 'must be after the current date and time', input.expiresAt);
    await store.runSql('DELETE FROM authenticators WHERE id = ?', id);
    // the username becomes free again before the updb enrollment claims it
    const base = { identityId: auth.identity_id, expiresAt };
    if (auth.method === 'updb') return insertEnrollment(ctx, { ...base, method: 'updb', username: auth.username });
    if (auth.ca_id && (await store.getSql('SELECT 1 FROM cas WHERE id = ?', auth.ca_id)))
      return insertEnrollment(ctx, { ...base, method: 'ottca', caId: auth.ca_id });
    return insertEnrollment(ctx, { ...base, method: 'ott' });
  });
}

const requestExtendSchema = z.object({ rollKeys: z.boolean().nullable().optional() }).nullable().optional();

/** POST /authenticators/{id}/request-extend: flags a certificate authenticator for early extension (403 otherwise). */
export async function requestExtend(ctx: Ctx, id: string, body: unknown): Promise<void> {
  requirePermission(ctx.caller, 'identity', 'update');
  const input = parseInput(requestExtendSchema, body) ?? {};
  const auth = await requireAuthenticator(ctx, id);
  if (auth.method !== 'cert') throw forbidden('only certificate authenticators can be flagged for extension');
  const now = ctx.core.clock.now().toISOString();
  await ctx.core.store.runSql(
    'UPDATE authenticators SET is_extend_requested = 1, is_key_roll_requested = ?, extend_requested_at = ?, updated_at = ? WHERE id = ?',
    !!input.rollKeys,
    now,
    now,
    id,
  );
}

/** The caller's own certificate authenticator, presented on this connection and issued by the controller. */
async function ownExtendable(ctx: Ctx, id: string, peerCertificates: Buffer[]): Promise<Authenticator & { cert_pem: string }> {
  const auth = await requireAuthenticator(ctx, id);
  if (auth.identity_id !== ctx.caller.identityId) throw notFound('authenticator');
  if (auth.method !== 'cert' || !auth.cert_pem) throw authenticatorCannotBeUpdated();
  const [leaf] = peerPems(peerCertificates);
  if (!leaf || fingerprintSha1(leaf) !== auth.fingerprint) throw unauthorized();
  if (!issuedByNetwork(ctx, auth.cert_pem)) throw authenticatorCannotBeUpdated();
  return { ...auth, cert_pem: auth.cert_pem };
}

/**
 * POST /current-identity/authenticators/{id}/extend: a new certificate for a CSR (new key allowed), made with the current
 * certificate on the connection. The old certificate stays valid until extend-verify confirms receipt of the new one.
 */
export async function extendCertificate(
  ctx: Ctx,
  id: string,
  peerCertificates: Buffer[],
  body: unknown,
): Promise<{ ca: string; clientCert: string }> {
  const input = parseInput(z.object({ clientCertCsr: z.string() }), body);
  const auth = await ownExtendable(ctx, id, peerCertificates);
  const current = parseCertificate(auth.cert_pem);
  const cert: IssuedCertificate = await issueFromCsr(ctx.core, {
    csrPem: input.clientCertCsr,
    field: 'clientCertCsr',
    commonName: current.subjectCN,
    uriSans: current.uris,
    dnsSans: current.dnsNames,
  });
  await ctx.core.store.runSql(
    'UPDATE authenticators SET unverified_cert_pem = ?, unverified_fingerprint = ?, updated_at = ? WHERE id = ? AND fingerprint = ?',
    cert.certPem,
    cert.fingerprint,
    ctx.core.clock.now().toISOString(),
    id,
    auth.fingerprint,
  );
  return { ca: ctx.core.pki.caBundlePem, clientCert: cert.chainPem };
}

/** POST .../extend-verify: the client proves it received the new certificate; from now on only it authenticates. */
export async function verifyExtendedCertificate(ctx: Ctx, id: string, body: unknown): Promise<void> {
  const input = parseInput(z.object({ clientCert: z.string() }), body);
  const auth = await requireAuthenticator(ctx, id);
  if (auth.identity_id !== ctx.caller.identityId) throw notFound('authenticator');
  if (auth.method !== 'cert' || !auth.unverified_fingerprint) throw authenticatorCannotBeUpdated();
  const [leaf] = splitPemBundle(input.clientCert);
  if (!leaf || fingerprintSha1(leaf) !== auth.unverified_fingerprint)
    throw invalidClientCert({ field: 'clientCert', reason: 'is not the certificate issued by the extension' });
  const now = ctx.core.clock.now().toISOString();
  await ctx.core.store.runSql(
    `UPDATE authenticators SET cert_pem = unverified_cert_pem, fingerprint = unverified_fingerprint, unverified_cert_pem = NULL,
       unverified_fingerprint = NULL, is_extend_requested = 0, is_key_roll_requested = 0, extend_requested_at = NULL,
       last_extend_rolled_keys = ?, updated_at = ? WHERE id = ? AND unverified_fingerprint = ?`,
    // both present: the current one was checked by the extension, which stored the new one with its unverified fingerprint
    keyChanged(auth.cert_pem!, auth.unverified_cert_pem!),
    now,
    id,
    auth.unverified_fingerprint,
  );
}
