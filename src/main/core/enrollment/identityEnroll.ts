import { z } from 'zod';
import { checkPasswordRules, hashPassword, addCertAuthenticator, addUpdbAuthenticator } from '../auth/index';
import type { Core } from '../core';
import { loadAuthPolicy } from '../entities/authPolicies';
import { externalIdFromCertificate, usableCas, type CaRow } from '../entities/cas';
import { passwordSchema, usernameSchema } from '../entities/common';
import { identities } from '../policy/index';
import { applyCreate } from '../entities/resource';
import { validationError } from '../errors';
import { newId } from '../ids';
import { chainToAnchor, fingerprintSha1, parseCertificate, peerPems } from '../pki/index';
import { getRow, rowShape } from '../store/rows';
import { parseInput } from '../validation';
import { formatIdentityName, uniqueIdentityName } from './caClaims';
import { issueFromCsr, spiffeId, type IssuedCertificate } from './certificates';
import {
  authenticatorMethodMax,
  caNoLongerValid,
  certFailedValidation,
  certInUse,
  identityAlreadyEnrolled,
  invalidEnrollmentToken,
  missingCertClaim,
  noValidCas,
} from '../enrollmentErrors';
import { enrollmentByToken, type Enrollment } from './records';

export interface EnrollmentCerts {
  ca: string;
  cert: string;
}

/** True when a certificate fingerprint is already bound to an authenticator (current or pending extension). */
async function fingerprintInUse(core: Core, fingerprint: string): Promise<boolean> {
  return !!(await core.store.getSql('SELECT 1 FROM authenticators WHERE fingerprint = ? OR unverified_fingerprint = ?', fingerprint, fingerprint));
}

/** Deletes the enrollment if its token is still the same (a concurrent use or refresh makes the token invalid). */
async function consume(core: Core, enrollment: Enrollment): Promise<void> {
  if (!(await core.store.runSql('DELETE FROM enrollments WHERE id = ? AND token = ?', enrollment.id, enrollment.token)).changes)
    throw invalidEnrollmentToken();
}

/** A client certificate for an identity: SPIFFE id URI SAN, one year, CN from the CSR (or the identity id). */
export function issueIdentityCertificate(core: Core, identityId: string, csrPem: unknown, field: string): Promise<IssuedCertificate> {
  return issueFromCsr(core, { csrPem, field, fallbackCommonName: identityId, uriSans: [spiffeId(core, 'identity', identityId)] });
}

/** One-time token + CSR: the identity gets a network-issued certificate authenticator. */
export async function enrollOtt(core: Core, token: unknown, csrPem: unknown, field = 'clientCsr'): Promise<EnrollmentCerts> {
  const enrollment = await enrollmentByToken(core, token, ['ott']);
  const identityId = enrollment.identity_id;
  const cert = await issueIdentityCertificate(core, identityId, csrPem, field);
  await core.store.tx(async () => {
    await consume(core, enrollment);
    await addCertAuthenticator(core, { identityId, certPem: cert.certPem, fingerprint: cert.fingerprint, issuedByNetwork: true });
  });
  return { ca: core.pki.caBundlePem, cert: cert.chainPem };
}

/** The presented client certificate and the CA (of `cas`) it chains to, or CERT_FAILED_VALIDATION. */
function presentedCertificate(core: Core, peerCertificates: Buffer[], cas: Array<{ row: CaRow; anchors: string[] }>): { leaf: string; ca: CaRow } {
  const [leaf, ...intermediates] = peerPems(peerCertificates);
  if (!leaf) throw certFailedValidation({ field: 'clientCertificate', reason: 'no client certificate was presented on the TLS connection' });
  const now = core.clock.now();
  for (const ca of cas) if (chainToAnchor(leaf, intermediates, ca.anchors, now).ok) return { leaf, ca: ca.row };
  throw certFailedValidation({
    field: 'clientCertificate',
    reason: 'the client certificate does not chain to a verified CA enabled for this enrollment',
  });
}

/** One-time token + a pre-exchanged certificate from the enrollment's (verified, ottca-enabled) CA. */
export async function enrollOttCa(core: Core, token: unknown, peerCertificates: Buffer[]): Promise<Record<string, never>> {
  const enrollment = await enrollmentByToken(core, token, ['ottca']);
  const ca = (await usableCas(core.system, 'is_ott_ca_enrollment_enabled')).find((c) => c.row.id === enrollment.ca_id);
  if (!ca) throw caNoLongerValid();
  const { leaf } = presentedCertificate(core, peerCertificates, [ca]);
  const fingerprint = fingerprintSha1(leaf);
  if (await fingerprintInUse(core, fingerprint)) throw certInUse();
  await core.store.tx(async () => {
    await consume(core, enrollment);
    await addCertAuthenticator(core, {
      identityId: enrollment.identity_id,
      certPem: leaf,
      fingerprint,
      caId: ca.row.id,
      issuedByNetwork: false,
    });
  });
  return {};
}

const POLICY_OF = rowShape({ id: 'string', auth_policy_id: 'string' });

const updbBody = z.object({ username: usernameSchema.optional(), password: passwordSchema }).passthrough();

/** One-time token + password: the identity gets the enrollment's username with this password. */
export async function enrollUpdb(core: Core, token: unknown, body: unknown): Promise<Record<string, never>> {
  const enrollment = await enrollmentByToken(core, token, ['updb']);
  const input = parseInput(updbBody, body ?? {});
  if (input.username !== undefined && input.username !== enrollment.username) {
    throw validationError('username', 'must be the username of the enrollment', input.username);
  }
  const identity = (await getRow(core.store, POLICY_OF, 'SELECT id, auth_policy_id FROM identities WHERE id = ?', enrollment.identity_id))!;
  checkPasswordRules((await loadAuthPolicy(core.system, identity.auth_policy_id)).primary.updb, input.password);
  const hasUpdb = async () => !!(await core.store.getSql("SELECT 1 FROM authenticators WHERE identity_id = ? AND method = 'updb'", identity.id));
  if (await hasUpdb()) throw authenticatorMethodMax();
  const hash = await hashPassword(input.password);
  await core.store.tx(async () => {
    // again with the write: one made during the hash (POST /authenticators) counts
    if (await hasUpdb()) throw authenticatorMethodMax();
    await consume(core, enrollment);
    await addUpdbAuthenticator(core, identity.id, enrollment.username ?? '', hash);
  });
  return {};
}

export interface NewIdentity {
  id: string;
  name: string;
  roleAttributes?: string[];
  externalId?: string | null;
  authPolicyId?: string | null;
}

/** Creates an identity through the generic resource mechanism (its hooks run); call inside a transaction. */
export async function createEnrolledIdentity(core: Core, identity: NewIdentity): Promise<string> {
  return applyCreate(
    core.system,
    identities,
    {
      name: identity.name,
      type: 'Default',
      isAdmin: false,
      roleAttributes: identity.roleAttributes ?? [],
      externalId: identity.externalId ?? null,
      authPolicyId: identity.authPolicyId ?? null,
    },
    // its certificate names the id before the identity exists
    { id: identity.id },
  );
}

/**
 * CA auto enrollment: no identity exists beforehand. The presented certificate must chain to a verified CA with auto
 * enrollment enabled; the identity is named by the CA's identityNameFormat and inherits its identityRoles. With an
 * externalIdClaim the identity is found by externalId later (certificates may rotate); otherwise by fingerprint.
 */
export async function enrollCa(core: Core, peerCertificates: Buffer[], body: unknown): Promise<Record<string, never>> {
  const cas = await usableCas(core.system, 'is_auto_ca_enrollment_enabled');
  if (!cas.length) throw noValidCas();
  const { leaf, ca } = presentedCertificate(core, peerCertificates, cas);
  const claim = ca.external_id_claim;
  const externalId = claim ? externalIdFromCertificate(leaf, claim) : undefined;
  if (claim && !externalId) throw missingCertClaim();
  const fingerprint = fingerprintSha1(leaf);
  if (externalId && (await core.store.getSql('SELECT 1 FROM identities WHERE external_id = ?', externalId))) throw identityAlreadyEnrolled();
  if (!externalId && (await fingerprintInUse(core, fingerprint))) throw certInUse();
  const requested = body && typeof body === 'object' && typeof (body as { name?: unknown }).name === 'string' ? (body as { name: string }).name : '';
  const id = newId();
  const name = formatIdentityName(ca.identity_name_format ?? '', {
    caName: ca.name,
    caId: ca.id,
    commonName: parseCertificate(leaf).subjectCN,
    requestedName: requested || id,
    identityId: id,
  });
  await core.store.tx(async () => {
    await createEnrolledIdentity(core, {
      id,
      name: await uniqueIdentityName(core.store, name),
      roleAttributes: ca.identity_roles,
      externalId: externalId ?? null,
    });
    if (!externalId) await addCertAuthenticator(core, { identityId: id, certPem: leaf, fingerprint, caId: ca.id, issuedByNetwork: false });
  });
  return {};
}
