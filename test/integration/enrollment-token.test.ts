import { SignJWT, importPKCS8 } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRootCa, fingerprintSha1 } from '../../src/main/core/pki';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { certLogin, csr } from '../support/pki';

let app: TestApp;
let admin: ApiClient;
let signerKey: CryptoKey;
let signerId: string;
const ISSUER = 'https://idp.example.test';
const AUDIENCE = 'weft-enroll';

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
  // the token issuer: an external JWT signer with a certificate
  const signer = await createRootCa({ commonName: 'IdP signer', keyAlg: 'EC-P256' });
  signerKey = await importPKCS8(signer.keyPem, 'ES256');
  signerId = await admin.create('/external-jwt-signers', {
    name: 'idp',
    enabled: true,
    issuer: ISSUER,
    audience: AUDIENCE,
    certPem: signer.certPem,
    claimsProperty: 'sub',
    useExternalId: true,
    enrollToCertEnabled: true,
    enrollToTokenEnabled: true,
    enrollNameClaimsSelector: 'preferred_username',
    enrollAttributeClaimsSelector: '/groups',
  });
});
afterAll(async () => {
  await admin.close();
  await app.stop();
});

async function token(claims: Record<string, unknown>, opts: { key?: CryptoKey; exp?: string } = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setExpirationTime(opts.exp ?? '5m')
    .setIssuedAt()
    .sign(opts.key ?? signerKey);
}

const enroll = (jwt: string, body: object = {}, headers: Record<string, string> = {}) =>
  app.client().post('/enroll/token', body, { api: 'client', headers: { authorization: `Bearer ${jwt}`, ...headers } });

describe('token header enrollment', () => {
  it('with a clientCsr: creates the identity from the claims and returns a certificate that logs in', async () => {
    const { csrPem, keyPem } = await csr('EC-P384', 'token-device');
    const jwt = await token({ sub: 'ext-user-1', preferred_username: 'token-user-1', groups: ['staff', 'vpn'] });
    const r = await enroll(jwt, { clientCsr: csrPem }, { 'svc-token-issuer-id': signerId });
    expect(r.status).toBe(200);
    expect(r.body.data.ca).toBe(app.core.pki.caBundlePem);
    const identity = (await admin.get(`/identities?filter=${encodeURIComponent('externalId = "ext-user-1"')}`)).body.data[0];
    expect(identity).toMatchObject({
      name: 'token-user-1',
      roleAttributes: ['staff', 'vpn'],
      authenticators: { cert: { fingerprint: fingerprintSha1(r.body.data.cert) } },
    });
    const { resp, client } = await certLogin(app.client(), r.body.data.cert, keyPem);
    expect(resp.status).toBe(200);
    expect((await client.get('/current-identity', { api: 'client' })).body.data.id).toBe(identity.id);
    // the same external id cannot enroll twice
    const again = await enroll(await token({ sub: 'ext-user-1', preferred_username: 'other' }), { clientCsr: (await csr()).csrPem });
    expect(again.status).toBe(409);
    await client.close();
  });

  it('without a CSR: a token-only identity (it authenticates with such tokens)', async () => {
    const r = await enroll(await token({ sub: 'ext-user-2', preferred_username: 'token-user-2' }), {}, { 'ziti-token-issuer-id': signerId });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({});
    const identity = (await admin.get(`/identities?filter=${encodeURIComponent('externalId = "ext-user-2"')}`)).body.data[0];
    expect(identity).toMatchObject({ name: 'token-user-2', authenticators: {} });
  });

  it('rejects bad tokens, a wrong issuer id and disabled enrollment types without creating anything', async () => {
    const before = (await admin.get('/identities')).body.meta.pagination.totalCount;
    const forged = await createRootCa({ commonName: 'forger', keyAlg: 'EC-P256' });
    const cases = [
      await enroll(await token({ sub: 'x1', preferred_username: 'x1' }, { key: await importPKCS8(forged.keyPem, 'ES256') })),
      await enroll(await token({ sub: 'x2', preferred_username: 'x2' }, { exp: '-1m' })),
      await enroll(await token({ sub: 'x3', preferred_username: 'x3' }), {}, { 'svc-token-issuer-id': 'other-signer' }),
      // stock OpenZiti clients' spelling of the header is read too
      await enroll(await token({ sub: 'x6', preferred_username: 'x6' }), {}, { 'ziti-token-issuer-id': 'other-signer' }),
      await enroll('not-a-jwt'),
      await app.client().post('/enroll/token', {}, { api: 'client' }),
    ];
    for (const r of cases) {
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    }
    await admin.patch(`/external-jwt-signers/${signerId}`, { enrollToTokenEnabled: false });
    const notAllowed = await enroll(await token({ sub: 'x4', preferred_username: 'x4' }));
    expect(notAllowed.status).toBe(400);
    expect(notAllowed.body.error.code).toBe('INVALID_ENROLLMENT_NOT_ALLOWED');
    await admin.patch(`/external-jwt-signers/${signerId}`, { enrollToTokenEnabled: true });
    const badCsr = await enroll(await token({ sub: 'x5', preferred_username: 'x5' }), { clientCsr: 'garbage' });
    expect(badCsr.body.error.code).toBe('COULD_NOT_PROCESS_CSR');
    expect((await admin.get('/identities')).body.meta.pagination.totalCount).toBe(before);
  });
});
