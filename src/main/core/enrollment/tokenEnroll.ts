import type { JWTPayload } from 'jose';
import { type VerifiedJwt, addCertAuthenticator, extJwtVerifierOf } from '../auth/index';
import type { Core } from '../core';
import { loadAuthPolicy, DEFAULT_AUTH_POLICY_ID } from '../entities/authPolicies';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { enrollmentNotAllowed, identityAlreadyEnrolled, invalidEnrollmentToken } from '../enrollmentErrors';
import { createEnrolledIdentity, issueIdentityCertificate, type EnrollmentCerts } from './identityEnroll';

/** The seed's brand-neutral name of OpenZiti's `ziti-token-issuer-id` header. */
/** Both spellings are accepted: the specification's brand word and stock OpenZiti clients' (see api.brand). */
export const TOKEN_ISSUER_HEADERS = ['svc-token-issuer-id', 'ziti-token-issuer-id'] as const;

/** A claim by selector: a property name, or a JSON pointer such as `/realm_access/roles`. */
function claim(payload: JWTPayload, selector: string): unknown {
  if (!selector.startsWith('/')) return payload[selector];
  let v: unknown = payload;
  for (const part of selector
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

const strings = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];

/**
 * Enrollment with a token header: `Authorization: Bearer <JWT of an external JWT signer>`, optionally naming the signer
 * in `svc-token-issuer-id`. A new identity is created from the token's claims (externalId, name, attributes); with a
 * `clientCsr` it gets a certificate, without one it authenticates with such tokens later.
 */
export async function enrollToken(
  core: Core,
  headers: Record<string, string | string[] | undefined>,
  body: unknown,
): Promise<EnrollmentCerts | Record<string, never>> {
  const header = headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match) throw invalidEnrollmentToken();
  let verified: VerifiedJwt;
  try {
    // the external JWT signers' verifier: signer by `iss`, its certificate or JWKS, audience and expiry
    verified = await extJwtVerifierOf(core).verify(match[1]!);
  } catch (e) {
    if (e instanceof ApiError) throw invalidEnrollmentToken();
    throw e;
  }
  const { signer, payload, subject } = verified;
  const issuerId = TOKEN_ISSUER_HEADERS.map((h) => headers[h]).find((v) => typeof v === 'string' && v);
  if (typeof issuerId === 'string' && issuerId && issuerId !== signer.id) throw invalidEnrollmentToken();

  const name = strings(claim(payload, signer.enroll_name_claims_selector || signer.claims_property || 'sub'))[0];
  if (!name) throw invalidEnrollmentToken();
  const attrSelector = signer.enroll_attribute_claims_selector;
  const roleAttributes = attrSelector ? strings(claim(payload, attrSelector)) : [];

  const csr = body && typeof body === 'object' ? (body as { clientCsr?: unknown }).clientCsr : undefined;
  const withCert = typeof csr === 'string' && csr.trim() !== '';
  if (withCert ? !signer.enroll_to_cert_enabled : !signer.enroll_to_token_enabled) throw enrollmentNotAllowed();
  const authPolicyId = signer.enroll_auth_policy_id ?? DEFAULT_AUTH_POLICY_ID;
  const policy = (await loadAuthPolicy(core.system, authPolicyId)).primary;
  if (withCert && !policy.cert.allowed) throw enrollmentNotAllowed();
  if (!withCert && !(policy.extJwt.allowed && (!policy.extJwt.allowedSigners.length || policy.extJwt.allowedSigners.includes(signer.id)))) {
    throw enrollmentNotAllowed();
  }
  if (await core.store.getSql('SELECT 1 FROM identities WHERE external_id = ?', subject)) throw identityAlreadyEnrolled();

  const id = newId();
  const cert = withCert ? await issueIdentityCertificate(core, id, csr, 'clientCsr') : undefined;
  await core.store.tx(async () => {
    if (await core.store.getSql('SELECT 1 FROM identities WHERE external_id = ?', subject)) throw identityAlreadyEnrolled();
    await createEnrolledIdentity(core, { id, name, roleAttributes, externalId: subject, authPolicyId });
    if (cert) await addCertAuthenticator(core, { identityId: id, certPem: cert.certPem, fingerprint: cert.fingerprint, issuedByNetwork: true });
  });
  return cert ? { ca: core.pki.caBundlePem, cert: cert.chainPem } : {};
}
