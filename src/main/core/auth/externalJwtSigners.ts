import { z } from 'zod';
import type { Core } from '../core';
import type { ListParams } from '../query/list';
import { listResource } from '../entities/resource';
import { referencedEntity, validationError } from '../errors';
import { parseCertificate } from '../pki/index';
import { nameSchema } from '../entities/common';
import { defineResource } from '../entities/define';
import { allRows, decodeRow, json, rowShape } from '../store/rows';
import { extJwtVerifierOf } from './extJwt';

/** An http(s) URL; '' means none, as OpenZiti's CLI sends for an unset URL. */
const url = z.union([z.literal('').transform(() => null), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })]);
const text = z.string().trim().min(1, 'must not be empty');
/** A string that may be unset; '' means none. */
const orNone = z.string().transform((v) => (v === '' ? null : v));
/** OpenZiti's spec lets several fields not be null: an unset string shows as '' (`whenNull`), an unset time as Go's zero time. */
const ZERO_TIME = '0001-01-01T00:00:00.000Z';

/** External JWT signers: trusted issuers whose JWTs authenticate identities (`POST /authenticate?method=ext-jwt`). */
export const externalJwtSigners = defineResource({
  entity: 'external-jwt-signers',
  table: 'external_jwt_signers',
  permission: 'external-jwt-signer',
  // the optional fields take their zero when a PUT omits them or a body nulls them
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    enabled: { codec: 'bool', schema: z.boolean(), required: true, filter: true },
    issuer: { codec: 'string', schema: text, required: true, filter: true },
    audience: { codec: 'string', schema: text, required: true, filter: true },
    certPem: { codec: 'string', schema: orNone, nullable: true, zero: null },
    jwksEndpoint: { codec: 'string', schema: url, nullable: true, zero: null },
    kid: { codec: 'string', schema: orNone, nullable: true, zero: null, whenNull: '', filter: true },
    fingerprint: { codec: 'string', whenNull: '', filter: true },
    commonName: { codec: 'string', whenNull: '', filter: true },
    notBefore: { codec: 'datetime', whenNull: ZERO_TIME, filter: true },
    notAfter: { codec: 'datetime', whenNull: ZERO_TIME, filter: true },
    claimsProperty: { codec: 'string', schema: text, nullable: true, zero: 'sub', whenNull: '', filter: true },
    useExternalId: { codec: 'bool', schema: z.boolean(), nullable: true, zero: false, filter: true },
    // shown as '' while unset, so '' is accepted back as "unset"
    externalAuthUrl: { codec: 'string', schema: url.or(z.literal('')), nullable: true, zero: null, whenNull: '', filter: true },
    clientId: { codec: 'string', schema: orNone, nullable: true, zero: null, whenNull: '', filter: true },
    scopes: { codec: 'json', schema: z.array(z.string()), nullable: true, zero: [] },
    targetToken: { codec: 'string', schema: z.enum(['ACCESS', 'ID']), nullable: true, zero: 'ACCESS' },
    enrollToCertEnabled: { codec: 'bool', schema: z.boolean(), nullable: true, zero: false },
    enrollToTokenEnabled: { codec: 'bool', schema: z.boolean(), nullable: true, zero: false },
    enrollNameClaimsSelector: { codec: 'string', schema: orNone, nullable: true, zero: null, whenNull: '' },
    enrollAttributeClaimsSelector: { codec: 'string', schema: orNone, nullable: true, zero: null, whenNull: '' },
    enrollAuthPolicyId: { codec: 'string', schema: orNone, nullable: true, zero: null, whenNull: '' },
  },
  tags: { putOmitted: 'leave' },
  defaultSort: 't.name ASC',
  async beforeWrite(_op, input, existing, ctx) {
    const certPem = input.certPem !== undefined ? input.certPem : (existing?.cert_pem ?? null);
    const jwks = input.jwksEndpoint !== undefined ? input.jwksEndpoint : (existing?.jwks_endpoint ?? null);
    if (certPem && jwks) throw validationError('jwksEndpoint', 'certPem and jwksEndpoint are mutually exclusive', jwks);
    if (!certPem && !jwks) throw validationError('certPem', 'either certPem or jwksEndpoint is required', certPem);
    if (input.enrollAuthPolicyId && !(await ctx.core.store.getSql('SELECT 1 FROM auth_policies WHERE id = ?', input.enrollAuthPolicyId))) {
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
    extJwtVerifierOf(ctx.core).invalidate(id);
  },
  async beforeDelete(row, ctx) {
    const sql = ctx.core.store.sql;
    const policy = await ctx.core.store.getSql<{ name: string }>(
      `SELECT name FROM auth_policies WHERE ${sql.jsonExtract('secondary_json', '$.requireExtJwtSigner')} = ?
         OR EXISTS (SELECT 1 FROM ${sql.jsonEach('primary_json', 's', '$.extJwt.allowedSigners')} WHERE s.value = ?) LIMIT 1`,
      row.id,
      row.id,
    );
    if (policy) throw referencedEntity(`the external JWT signer is used by auth policy '${policy.name}'`);
  },
  afterDelete(row, ctx) {
    extJwtVerifierOf(ctx.core).invalidate(row.id);
  },
});

const ISSUER = rowShape({ issuer: 'string' });

/** The Client API's public view of the enabled signers: what a client needs to obtain a token from one. */
export const clientExternalJwtSigners = defineResource({
  entity: 'external-jwt-signers',
  table: 'external_jwt_signers',
  permission: 'external-jwt-signer',
  fields: {
    name: { codec: 'string', filter: true },
    audience: { codec: 'string' },
    clientId: { codec: 'string' },
    enrollToCertEnabled: { codec: 'bool' },
    enrollToTokenEnabled: { codec: 'bool' },
    externalAuthUrl: { codec: 'string', whenNull: '' },
    scopes: { codec: 'json' },
    targetToken: { codec: 'string' },
  },
  defaultSort: 't.name ASC',
  writable: false,
  decorate(items, rows) {
    items.forEach((item, i) => {
      const { issuer } = decodeRow(ISSUER, rows[i]!);
      item.openIdConfigurationUrl = /^https?:\/\//.test(issuer) ? `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration` : undefined;
    });
  },
});

/** The enabled signers as the Client API shows them to anyone (before login: which IdPs a client may use). */
export async function listPublicExternalJwtSigners(core: Core, params: ListParams) {
  return listResource(core.system, clientExternalJwtSigners, params, { where: 't.enabled = 1' });
}

const LOGIN_SIGNER = rowShape({
  id: 'string',
  name: 'string',
  issuer: 'string',
  client_id: 'string',
  external_auth_url: 'string',
  scopes: json<unknown>('?'),
  target_token: 'string?',
});

/** An enabled signer that people can sign in with through its IdP (it has an `externalAuthUrl` and a `clientId`). */
export interface LoginSigner {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  externalAuthUrl: string;
  scopes: string[];
  /** which token of the IdP's answer the signer verifies */
  targetToken: 'ACCESS' | 'ID';
}

/**
 * The enabled signers with an `externalAuthUrl` and a `clientId`, by name: what a login page offers as "Sign in with
 * <name>" (the Client API shows the same to anyone). With `id`, that one only.
 */
export async function loginSigners(core: Core, id?: string): Promise<LoginSigner[]> {
  const rows = await allRows(
    core.store,
    LOGIN_SIGNER,
    `SELECT id, name, issuer, client_id, external_auth_url, scopes, target_token FROM external_jwt_signers
      WHERE enabled = 1 AND client_id IS NOT NULL AND client_id <> '' AND external_auth_url IS NOT NULL AND external_auth_url <> ''
      ${id === undefined ? '' : 'AND id = ?'} ORDER BY name`,
    ...(id === undefined ? [] : [id]),
  );
  return rows.map((row) => {
    const scopes = Array.isArray(row.scopes) ? row.scopes.filter((s): s is string => typeof s === 'string') : [];
    return {
      id: row.id,
      name: row.name,
      issuer: row.issuer,
      clientId: row.client_id,
      externalAuthUrl: row.external_auth_url,
      scopes,
      targetToken: row.target_token === 'ID' ? 'ID' : 'ACCESS',
    };
  });
}
