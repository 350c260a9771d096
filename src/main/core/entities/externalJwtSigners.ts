import { z } from 'zod';
import type { Ctx } from '../context';
import { referencedEntity, validationError } from '../errors';
import { parseCertificate } from '../pki/index';
import { scalar } from '../query/fields';
import type { Row } from '../store/db';
import { nameSchema, nullableTags } from './common';
import type { ResourceDef } from './resource';

/** An http(s) URL; '' means none, as OpenZiti's CLI sends for an unset URL. */
const url = z.union([z.literal('').transform(() => null), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })]);
const text = z.string().trim().min(1, 'must not be empty');
/** Optional fields and the value they take when a create or PUT omits them (or a PATCH nulls them). */
const OPTIONAL_DEFAULTS = {
  certPem: null,
  jwksEndpoint: null,
  kid: null,
  claimsProperty: 'sub',
  useExternalId: false,
  externalAuthUrl: null,
  clientId: null,
  scopes: [],
  targetToken: 'ACCESS',
  enrollToCertEnabled: false,
  enrollToTokenEnabled: false,
  enrollNameClaimsSelector: null,
  enrollAttributeClaimsSelector: null,
  enrollAuthPolicyId: null,
} as const;
const optional = {
  certPem: z.string().nullable().optional(),
  jwksEndpoint: url.nullable().optional(),
  kid: z.string().nullable().optional(),
  claimsProperty: text.nullable().optional(),
  useExternalId: z.boolean().nullable().optional(),
  // shown as '' while unset (see `str` below), so '' is accepted back as "unset"
  externalAuthUrl: url.or(z.literal('')).nullable().optional(),
  clientId: z.string().nullable().optional(),
  scopes: z.array(z.string()).nullable().optional(),
  targetToken: z.enum(['ACCESS', 'ID']).nullable().optional(),
  enrollToCertEnabled: z.boolean().nullable().optional(),
  enrollToTokenEnabled: z.boolean().nullable().optional(),
  enrollNameClaimsSelector: z.string().nullable().optional(),
  enrollAttributeClaimsSelector: z.string().nullable().optional(),
  enrollAuthPolicyId: z.string().nullable().optional(),
  tags: nullableTags.optional(),
};
const full = z.object({ name: nameSchema, enabled: z.boolean(), issuer: text, audience: text, ...optional });
const patch = z.object({
  name: nameSchema.nullable().optional(),
  enabled: z.boolean().nullable().optional(),
  issuer: text.nullable().optional(),
  audience: text.nullable().optional(),
  ...optional,
});

const col = (column: string, codec: 'string' | 'bool' | 'json' | 'datetime' = 'string', write = true) => ({ column, codec, write });
/** OpenZiti's spec lets none of these be null: an unset string shows as '', an unset time as Go's zero time. */
const str = (column: string, write = true) => ({ ...col(column, 'string', write), whenNull: '' });
const ZERO_TIME = '0001-01-01T00:00:00.000Z';

/** External JWT signers: trusted issuers whose JWTs authenticate identities (`POST /authenticate?method=ext-jwt`). */
export const externalJwtSigners: ResourceDef = {
  entity: 'external-jwt-signers',
  table: 'external_jwt_signers',
  permission: 'external-jwt-signer',
  columns: {
    name: col('name'),
    enabled: col('enabled', 'bool'),
    issuer: col('issuer'),
    audience: col('audience'),
    certPem: col('cert_pem'),
    jwksEndpoint: col('jwks_endpoint'),
    kid: str('kid'),
    fingerprint: str('fingerprint', false),
    commonName: str('common_name', false),
    notBefore: { ...col('not_before', 'datetime', false), whenNull: ZERO_TIME },
    notAfter: { ...col('not_after', 'datetime', false), whenNull: ZERO_TIME },
    claimsProperty: str('claims_property'),
    useExternalId: col('use_external_id', 'bool'),
    externalAuthUrl: str('external_auth_url'),
    clientId: str('client_id'),
    scopes: col('scopes', 'json'),
    targetToken: col('target_token'),
    enrollToCertEnabled: col('enroll_to_cert_enabled', 'bool'),
    enrollToTokenEnabled: col('enroll_to_token_enabled', 'bool'),
    enrollNameClaimsSelector: str('enroll_name_claims_selector'),
    enrollAttributeClaimsSelector: str('enroll_attribute_claims_selector'),
    enrollAuthPolicyId: str('enroll_auth_policy_id'),
  },
  fields: {
    name: scalar('string', 't.name'),
    issuer: scalar('string', 't.issuer'),
    audience: scalar('string', 't.audience'),
    enabled: scalar('boolean', 't.enabled'),
    kid: scalar('string', 't.kid'),
    fingerprint: scalar('string', 't.fingerprint'),
    commonName: scalar('string', 't.common_name'),
    claimsProperty: scalar('string', 't.claims_property'),
    useExternalId: scalar('boolean', 't.use_external_id'),
    externalAuthUrl: scalar('string', 't.external_auth_url'),
    clientId: scalar('string', 't.client_id'),
    notAfter: scalar('datetime', 't.not_after'),
    notBefore: scalar('datetime', 't.not_before'),
  },
  defaultSort: 't.name ASC',
  schemas: { create: full, update: full, patch },
  beforeWrite(op, input, existing, ctx) {
    for (const k of ['name', 'enabled', 'issuer', 'audience']) if (input[k] === null) delete input[k];
    for (const [k, v] of Object.entries(OPTIONAL_DEFAULTS)) {
      if (input[k] === null || (op !== 'patch' && input[k] === undefined) || (input[k] === '' && v === null)) input[k] = v;
    }
    if (input.tags === null) input.tags = {};
    const certPem = input.certPem !== undefined ? input.certPem : (existing?.cert_pem ?? null);
    const jwks = input.jwksEndpoint !== undefined ? input.jwksEndpoint : (existing?.jwks_endpoint ?? null);
    if (certPem && jwks) throw validationError('jwksEndpoint', 'certPem and jwksEndpoint are mutually exclusive', jwks);
    if (!certPem && !jwks) throw validationError('certPem', 'either certPem or jwksEndpoint is required', certPem);
    if (input.enrollAuthPolicyId && !ctx.core.store.getSql('SELECT 1 FROM auth_policies WHERE id = ?', input.enrollAuthPolicyId)) {
      throw validationError('enrollAuthPolicyId', 'auth policy not found', input.enrollAuthPolicyId);
    }
    if (!certPem) return { fingerprint: null, common_name: null, not_before: null, not_after: null };
    if (input.certPem === undefined) return;
    try {
      const cert = parseCertificate(certPem);
      return {
        fingerprint: cert.fingerprint,
        common_name: cert.subjectCN,
        not_before: cert.notBefore.toISOString(),
        not_after: cert.notAfter.toISOString(),
      };
    } catch {
      throw validationError('certPem', 'must be a PEM encoded X.509 certificate', certPem);
    }
  },
  afterWrite(_op, id, _input, _existing, ctx) {
    ctx.core.security.extJwt.invalidate(id);
  },
  beforeDelete(row, ctx) {
    const policy = ctx.core.store.getSql<{ name: string }>(
      `SELECT name FROM auth_policies WHERE json_extract(secondary_json, '$.requireExtJwtSigner') = ?
         OR EXISTS (SELECT 1 FROM json_each(primary_json, '$.extJwt.allowedSigners') WHERE value = ?) LIMIT 1`,
      row.id,
      row.id,
    );
    if (policy) throw referencedEntity(`the external JWT signer is used by auth policy '${policy.name}'`);
  },
  afterDelete(row, ctx) {
    ctx.core.security.extJwt.invalidate(row.id as string);
  },
};

/** The Client API's public view of the enabled signers: what a client needs to obtain a token from one. */
export const clientExternalJwtSigners: ResourceDef = {
  entity: 'external-jwt-signers',
  table: 'external_jwt_signers',
  permission: 'external-jwt-signer',
  columns: {
    name: col('name'),
    audience: col('audience'),
    clientId: col('client_id'),
    enrollToCertEnabled: col('enroll_to_cert_enabled', 'bool'),
    enrollToTokenEnabled: col('enroll_to_token_enabled', 'bool'),
    externalAuthUrl: str('external_auth_url'),
    scopes: col('scopes', 'json'),
    targetToken: col('target_token'),
  },
  fields: { name: scalar('string', 't.name') },
  defaultSort: 't.name ASC',
  schemas: {},
  decorate(items, rows) {
    items.forEach((item, i) => {
      const issuer = rows[i]!.issuer as string;
      item.openIdConfigurationUrl = /^https?:\/\//.test(issuer) ? `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration` : undefined;
    });
  },
};

export function loadSigner(ctx: Ctx, id: string): Row | undefined {
  return ctx.core.store.getSql<Row>('SELECT * FROM external_jwt_signers WHERE id = ?', id);
}
