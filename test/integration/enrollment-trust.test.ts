import { randomUUID, verify as verifySignature, X509Certificate } from 'node:crypto';
import { importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import { decodeJwt } from '../support/pki';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.stop();
});

describe('network trust', () => {
  it('GET /network-jwts (both APIs, no session) lists a trust JWT signed by the enrollment key', async () => {
    for (const api of ['client', 'management'] as const) {
      const r = await app.client().get('/network-jwts', { api });
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(1);
      const { name, token } = r.body.data[0];
      expect(name).toBe('default');
      const { header, payload } = decodeJwt(token);
      expect(header.kid).toBe(app.core.pki.signingFingerprint);
      expect(payload).toMatchObject({ em: 'network', iss: app.urls.api, sub: app.urls.api, ctrls: [app.urls.api], aud: ['openziti-enroller'] });
      await jwtVerify(token, await importX509(app.core.pki.signing.certPem, 'ES256'));
    }
  });

  it('POST /enroll/challenge signs the nonce with the key named by keyId', async () => {
    const nonce = randomUUID();
    const r = await app.client().post('/enroll/challenge', { keyId: app.core.pki.signingFingerprint, nonce }, { api: 'client' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ algorithm: 'ES256', kid: app.core.pki.signingFingerprint, caPool: app.core.pki.caBundlePem });
    const key = new X509Certificate(app.core.pki.signing.certPem).publicKey;
    expect(verifySignature('sha256', Buffer.from(nonce), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(r.body.signature, 'base64'))).toBe(true);
    const badKid = await app.client().post('/enroll/challenge', { keyId: 'nope', nonce }, { api: 'client' });
    expect(badKid.status).toBe(400);
    expect(badKid.body.error.cause.field).toBe('keyId');
    const badNonce = await app.client().post('/enroll/challenge', { keyId: app.core.pki.signingFingerprint, nonce: 'not-a-uuid' }, { api: 'client' });
    expect(badNonce.body.error.cause.field).toBe('nonce');
  });

  it('an unknown enroll method or token is rejected', async () => {
    const r = await app.client().post('/enroll?method=bogus&token=x', {}, { api: 'client' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_ENROLL_METHOD');
    const t = await app.client().post(`/enroll?token=${randomUUID()}`, {}, { api: 'client' });
    expect(t.body.error.code).toBe('INVALID_ENROLL_METHOD');
  });
});
