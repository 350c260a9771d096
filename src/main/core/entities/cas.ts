import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { validationError } from '../errors';
import { PkiError, parseCertificate, splitPemBundle, type CertificateInfo } from '../pki/index';
import { scalar } from '../query/fields';
import { certificateIsNotCa } from '../enrollment/errors';
import { nameSchema, nullableTags, patchOf } from './common';
import type { ResourceDef } from './resource';

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

const rolesSchema = z.array(z.string().min(1)).nullable();
const flags = { isAuthEnabled: z.boolean(), isAutoCaEnrollmentEnabled: z.boolean(), isOttCaEnrollmentEnabled: z.boolean() };
const common = {
  name: nameSchema,
  ...flags,
  identityRoles: rolesSchema,
  externalIdClaim: externalIdClaimSchema.nullable().optional(),
  tags: nullableTags.optional(),
};

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
export const cas: ResourceDef = {
  entity: 'cas',
  table: 'cas',
  permission: 'ca',
  columns: {
    name: { column: 'name', codec: 'string' },
    certPem: { column: 'cert_pem', codec: 'string', write: false },
    fingerprint: { column: 'fingerprint', codec: 'string', write: false },
    isVerified: { column: 'is_verified', codec: 'bool', write: false },
    verificationToken: { column: 'verification_token', codec: 'string', write: false },
    isAuthEnabled: { column: 'is_auth_enabled', codec: 'bool' },
    isAutoCaEnrollmentEnabled: { column: 'is_auto_ca_enrollment_enabled', codec: 'bool' },
    isOttCaEnrollmentEnabled: { column: 'is_ott_ca_enrollment_enabled', codec: 'bool' },
    identityRoles: { column: 'identity_roles', codec: 'json' },
    identityNameFormat: { column: 'identity_name_format', codec: 'string' },
    // OpenZiti leaves the claim out when the CA has none (never null)
    externalIdClaim: { column: 'external_id_claim', codec: 'json', whenNull: undefined },
  },
  fields: {
    name: scalar('string', 't.name'),
    fingerprint: scalar('string', 't.fingerprint'),
    isVerified: scalar('boolean', 't.is_verified'),
    isAuthEnabled: scalar('boolean', 't.is_auth_enabled'),
    isAutoCaEnrollmentEnabled: scalar('boolean', 't.is_auto_ca_enrollment_enabled'),
    isOttCaEnrollmentEnabled: scalar('boolean', 't.is_ott_ca_enrollment_enabled'),
    identityNameFormat: scalar('string', 't.identity_name_format'),
    verificationToken: scalar('string', 't.verification_token'),
  },
  defaultSort: 't.name ASC',
  schemas: {
    create: z.object({ ...common, certPem: z.string().min(1), identityNameFormat: z.string().optional() }),
    update: z.object({ ...common, identityNameFormat: z.string() }),
    patch: patchOf({ name: nameSchema, ...flags, identityNameFormat: z.string(), tags: nullableTags }).extend({
      identityRoles: rolesSchema.optional(),
      externalIdClaim: externalIdClaimSchema.nullable().optional(),
    }),
  },
  links: (row) => ({ jwt: `cas/${row.id}/jwt`, verify: `cas/${row.id}/verify` }),
  beforeWrite(op, input, _existing, ctx) {
    const extra: Record<string, unknown> = {};
    if (op === 'patch') {
      for (const k of ['name', 'isAuthEnabled', 'isAutoCaEnrollmentEnabled', 'isOttCaEnrollmentEnabled', 'identityNameFormat'] as const) {
        if (input[k] === null) delete input[k];
      }
    }
    if (input.identityRoles === null) input.identityRoles = [];
    if (input.externalIdClaim === null || (op === 'update' && input.externalIdClaim === undefined)) extra.external_id_claim = null;
    checkClaim(input.externalIdClaim);
    if (op === 'create') {
      const { pem, first } = parseCaPem(input.certPem);
      const dup = ctx.core.store.getSql<{ id: string }>('SELECT id FROM cas WHERE fingerprint = ?', first.fingerprint);
      if (dup) throw validationError('certPem', `certificate already used as CA ${dup.id}`, first.fingerprint);
      Object.assign(extra, { cert_pem: pem, fingerprint: first.fingerprint, verification_token: randomUUID(), is_verified: 0 });
    }
    return extra;
  },
  beforeDelete(row, ctx) {
    // Deleting a CA deletes its certificate authenticators (its ottca enrollments go by foreign key).
    ctx.core.store.runSql("DELETE FROM authenticators WHERE ca_id = ? AND method = 'cert'", row.id);
  },
};
