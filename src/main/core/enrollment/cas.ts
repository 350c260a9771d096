import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { ApiError, notFound } from '../errors';
import { chainToAnchor, PkiError, parseCertificate, splitPemBundle, type CertificateInfo } from '../pki/index';
import { cas, type CaRow } from '../entities/cas';
import { getRow } from '../store/rows';
import { caAlreadyVerified, certificateFailedValidation, expectedPemCertificate, invalidCommonName } from '../enrollmentErrors';
import { signEnrollmentJwt } from './jwt';

async function requireCa(ctx: Ctx, id: string): Promise<CaRow> {
  const row = await getRow(ctx.core.store, cas.shape, 'SELECT * FROM cas WHERE id = ?', id);
  if (!row) throw notFound('ca');
  return row;
}

/**
 * POST /cas/{id}/verify: proof of possession of the CA key. The PEM body must be a certificate whose common name is the
 * CA's verificationToken and which chains to the CA; then the CA becomes verified. Failures change nothing.
 */
export async function verifyCa(ctx: Ctx, id: string, body: unknown): Promise<void> {
  requirePermission(ctx.caller, 'ca', 'update');
  const ca = await requireCa(ctx, id);
  if (ca.is_verified) throw caAlreadyVerified();
  const text = typeof body === 'string' ? body : '';
  const block = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(text);
  if (!block) throw new ApiError('COULD_NOT_PARSE_BODY', 400, 'The body of the request could not be parsed: a PEM certificate is expected');
  if (block[1] !== 'CERTIFICATE') throw expectedPemCertificate({ field: '(body)', reason: `encountered PEM block type ${block[1]}` });
  let cert: CertificateInfo;
  try {
    cert = parseCertificate(splitPemBundle(text)[0] ?? '');
  } catch (e) {
    if (!(e instanceof PkiError)) throw e;
    throw new ApiError('COULD_NOT_PARSE_DER_BLOCK', 400, "The certificate's DER block could not be parsed");
  }
  if (cert.subjectCN !== ca.verification_token)
    throw invalidCommonName({ field: 'commonName', reason: 'must equal the CA verificationToken', value: cert.subjectCN });
  const chained = chainToAnchor(splitPemBundle(text)[0]!, [], splitPemBundle(ca.cert_pem), ctx.core.clock.now());
  if (!chained.ok) throw certificateFailedValidation({ field: '(body)', reason: chained.reason });
  await ctx.core.store.runSql('UPDATE cas SET is_verified = 1, updated_at = ? WHERE id = ?', ctx.core.clock.now().toISOString(), id);
}

/** GET /cas/{id}/jwt: the static CA auto-enrollment JWT (em "ca", no expiry). */
export async function caJwt(ctx: Ctx, id: string): Promise<string> {
  requirePermission(ctx.caller, 'ca', 'read');
  await requireCa(ctx, id);
  return signEnrollmentJwt(ctx.core, { em: 'ca', sub: id, jti: id });
}
