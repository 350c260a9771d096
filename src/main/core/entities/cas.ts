import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { validationError } from '../errors';
import type { Ctx } from '../context';
import { certificateDer, PkiError, parseCertificate, splitPemBundle, x509, type CertificateInfo } from '../pki/index';
import { allRows, type Decoded } from '../store/rows';
import { certificateIsNotCa } from '../enrollmentErrors';
import { nameSchema, nullableTags } from './common';
import { defineResource } from './define';

export const EXTERNAL_ID_LOCATIONS = ['COMMON_NAME', 'SAN_URI', 'SAN_EMAIL'] as const;
export const EXTERNAL_ID_MATCHERS = ['ALL', 'PREFIX', 'SUFFIX', 'SCHEME'] as const;
export const EXTERNAL_ID_PARSERS = ['NONE', 'SPLIT'] as const;

/** Where in a client certificate a CA finds the identity's externalId (certificates can then rotate freely). */
export const externalIdClaimSchema = z.object({
  location: z.enum(EXTERNAL_ID_LOCATIONS),
  matcher: z.enum(EXTERNAL_ID_MATCHERS),
  matcherCriteria: z.string().nullable().optional(),
  parser: z.enum(EXTERNAL_ID_PARSERS),
  parserCriteria: z.string().nullable().optional(),
  index: z.number().int().min(0).nullable().optional(),
});
export type ExternalIdClaim = z.infer<typeof externalIdClaimSchema>;

const rolesSchema = z.array(z.string().min(1));
const flag = { codec: 'bool', schema: z.boolean(), required: true, filter: true } as const;

/** Parses the PEM of a CA: its first certificate must be a CA certificate. */
function parseCaPem(certPem: string): { pem: string; first: CertificateInfo } {
  const certs = splitPemBundle(certPem);
  if (!certs.length) throw validationError('certPem', 'at least one PEM certificate must be supplied', certPem);
  try {
    const first = parseCertificate(certs[0]!);
    if (!first.isCa) throw certificateIsNotCa({ field: 'certPem', reason: 'the first certificate is not a CA certificate' });
    return { pem: certs.join(''), first };
  } catch (e) {
    if (e instanceof PkiError) throw validationError('certPem', e.message, certPem);
    throw e;
  }
}

function checkClaim(claim: ExternalIdClaim | null | undefined): void {
  if (!claim) return;
  if (['PREFIX', 'SUFFIX', 'SCHEME'].includes(claim.matcher) && !claim.matcherCriteria) {
    throw validationError('externalIdClaim.matcherCriteria', `is required for matcher ${claim.matcher}`, claim.matcherCriteria);
  }
  if (claim.matcher === 'SCHEME' && claim.location !== 'SAN_URI') {
    throw validationError('externalIdClaim.matcher', 'SCHEME applies to location SAN_URI only', claim.matcher);
  }
  if (claim.parser === 'SPLIT' && !claim.parserCriteria) {
    throw validationError('externalIdClaim.parserCriteria', 'is required for parser SPLIT', claim.parserCriteria);
  }
}

/** Third-party CAs: created unverified with a verificationToken; see enrollment/cas for verify and JWT. */
export const cas = defineResource({
  entity: 'cas',
  table: 'cas',
  permission: 'ca',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    // parsed and stored by beforeWrite
    certPem: { codec: 'string', schema: z.string().min(1), required: true, createOnly: true },
    fingerprint: { codec: 'string', filter: true },
    isVerified: { codec: 'bool', filter: true },
    verificationToken: { codec: 'string', filter: true },
    isAuthEnabled: flag,
    isAutoCaEnrollmentEnabled: flag,
    isOttCaEnrollmentEnabled: flag,
    identityRoles: { codec: 'json', schema: rolesSchema, required: true, nullable: true, zero: [], patchNull: 'zero' },
    // required by PUT only: see schemas
    identityNameFormat: { codec: 'string', schema: z.string(), filter: true },
    // OpenZiti leaves the claim out when the CA has none (never null)
    externalIdClaim: { codec: 'json', schema: externalIdClaimSchema, nullable: true, zero: null, whenNull: undefined },
  },
  tags: { putOmitted: 'leave' },
  defaultSort: 't.name ASC',
  schemas: {
    update: z.object({
      name: nameSchema,
      isAuthEnabled: z.boolean(),
      isAutoCaEnrollmentEnabled: z.boolean(),
      isOttCaEnrollmentEnabled: z.boolean(),
      identityRoles: rolesSchema.nullable(),
      identityNameFormat: z.string(),
      externalIdClaim: externalIdClaimSchema.nullable().optional(),
      tags: nullableTags.optional(),
    }),
  },
  links: (row) => ({ jwt: `cas/${row.id}/jwt`, verify: `cas/${row.id}/verify` }),
  async beforeWrite(op, input, _existing, ctx) {
    checkClaim(input.externalIdClaim);
    if (op === 'create') {
      const { pem, first } = parseCaPem(input.certPem!);
      const dup = await ctx.core.store.getSql<{ id: string }>('SELECT id FROM cas WHERE fingerprint = ?', first.fingerprint);
      if (dup) throw validationError('certPem', `certificate already used as CA ${dup.id}`, first.fingerprint);
      return { cert_pem: pem, fingerprint: first.fingerprint, verification_token: randomUUID(), is_verified: 0 };
    }
  },
  async beforeDelete(row, ctx) {
    // Deleting a CA deletes its certificate authenticators (its ottca enrollments go by foreign key).
    await ctx.core.store.runSql("DELETE FROM authenticators WHERE ca_id = ? AND method = 'cert'", row.id);
  },
});

/** A CA's row, decoded through its declaration. */
export type CaRow = Decoded<typeof cas.shape>;

function candidates(certPem: string, location: ExternalIdClaim['location']): string[] {
  const info = parseCertificate(certPem);
  if (location === 'COMMON_NAME') return info.subjectCN ? [info.subjectCN] : [];
  if (location === 'SAN_URI') return info.uris;
  const names = new x509.X509Certificate(certificateDer(certPem)).getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? [];
  return names.filter((n) => n.type === 'email').map((n) => n.value);
}

function matches(value: string, claim: ExternalIdClaim): boolean {
  const criteria = claim.matcherCriteria ?? '';
  switch (claim.matcher) {
    case 'PREFIX':
      return value.startsWith(criteria);
    case 'SUFFIX':
      return value.endsWith(criteria);
    case 'SCHEME':
      try {
        return new URL(value).protocol === `${criteria.replace(/:$/, '')}:`;
      } catch {
        return false;
      }
    default:
      return true;
  }
}

/**
 * The externalId a CA's `externalIdClaim` locates in a client certificate: candidates from the location, kept by the
 * matcher, split by the parser, then the one at `index`. Returns undefined when the certificate has no such claim.
 */
export function externalIdFromCertificate(certPem: string, claim: ExternalIdClaim): string | undefined {
  const values = candidates(certPem, claim.location)
    .filter((v) => matches(v, claim))
    .flatMap((v) => (claim.parser === 'SPLIT' && claim.parserCriteria ? v.split(claim.parserCriteria) : [v]))
    .filter((v) => v !== '');
  return values[claim.index ?? 0];
}

/** CAs usable now: verified, with the given capability enabled, and their certificates as trust anchors. */
export async function usableCas(
  ctx: Ctx,
  flag: 'is_auth_enabled' | 'is_auto_ca_enrollment_enabled' | 'is_ott_ca_enrollment_enabled',
): Promise<Array<{ row: CaRow; anchors: string[] }>> {
  return (await allRows(ctx.core.store, cas.shape, `SELECT * FROM cas WHERE is_verified = 1 AND ${flag} = 1 ORDER BY created_at, id`)).map((row) => ({
    row,
    anchors: splitPemBundle(row.cert_pem),
  }));
}
