import { describe, expect, it } from 'vitest';
import { swaggerMismatch, type Checked } from '../support/swagger';

/** The response validator of the integration tests catches what OpenZiti's go-swagger clients choke on. */
const base = { _links: { self: { href: './x/1' } }, id: '1', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', tags: {} };
const check = (method: string, path: string, status: number, body: unknown): string | undefined =>
  swaggerMismatch({ method, path, status, contentType: 'application/json', body, text: JSON.stringify(body) } satisfies Checked);
const meta = { apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' };
const ca = {
  ...base,
  name: 'ca',
  fingerprint: 'f',
  certPem: 'p',
  isVerified: false,
  isAutoCaEnrollmentEnabled: true,
  isOttCaEnrollmentEnabled: true,
  isAuthEnabled: true,
  identityRoles: [],
  identityNameFormat: '',
  verificationToken: '6c1bd3ab-6c1b-4bb4-8e8a-ae9f1c2a0b6e',
};

describe('swagger response validation', () => {
  it('accepts a conforming detail and refuses null where the spec does not allow it', () => {
    expect(check('GET', '/edge/management/v1/cas/1', 200, { data: ca, meta })).toBeUndefined();
    const m = check('GET', '/edge/management/v1/cas/1', 200, { data: { ...ca, externalIdClaim: null }, meta });
    expect(m).toContain('/data/externalIdClaim must be object');
    expect(m).toContain('management GET /cas/{id} 200');
  });

  it('allows null where the spec says x-nullable, and any value in go-swagger "any" maps (tags)', () => {
    expect(check('GET', '/edge/management/v1/cas/1', 200, { data: { ...ca, tags: null }, meta })).toBeUndefined();
    expect(check('GET', '/edge/management/v1/cas/1', 200, { data: { ...ca, tags: { a: 'x', b: true, c: null } }, meta })).toBeUndefined();
    // `roles` is not x-nullable
    expect(check('GET', '/edge/management/v1/cas/1', 200, { data: { ...ca, identityRoles: null }, meta })).toContain(
      '/data/identityRoles must be array',
    );
  });

  it('dispatches on a discriminator: a posture check is checked as its typeId says', () => {
    const check0 = { ...base, name: 'd', typeId: 'DOMAIN', version: 1, roleAttributes: [] };
    const list = (item: object) => ({ data: [item], meta: { ...meta, pagination: { limit: 10, offset: 0, totalCount: 1 } } });
    expect(check('GET', '/edge/management/v1/posture-checks', 200, list({ ...check0, domains: ['x'] }))).toBeUndefined();
    expect(check('GET', '/edge/management/v1/posture-checks', 200, list(check0))).toContain("required property 'domains'");
    expect(check('GET', '/edge/management/v1/posture-checks', 200, list({ ...check0, typeId: 'NOPE' }))).toContain(
      'must be equal to one of the allowed values',
    );
  });

  it('checks errors against the error envelope, documented or not, and skips what the spec does not know', () => {
    const envelope = { error: { code: 'NOT_FOUND', message: 'm', requestId: 'r' }, meta };
    expect(check('GET', '/edge/management/v1/identities/x', 404, envelope)).toBeUndefined();
    expect(check('GET', '/edge/management/v1/identities/x', 414, { statusCode: 414, error: 'Bad Request' })).toContain("required property 'meta'");
    expect(check('GET', '/edge/management/v1/weft-only', 200, { anything: true })).toBeUndefined();
    expect(
      swaggerMismatch({ method: 'GET', path: '/edge/management/v1/identities', status: 431, contentType: 'text/plain', body: 'x', text: 'x' }),
    ).toContain('expected the JSON error envelope');
  });
});
