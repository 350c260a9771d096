import { randomUUID, verify as verifySignature, X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import { decodeJwt } from '../support/pki';

let app: TestApp;

/** The certificate the API presents, fetched without trusting it, as OpenZiti SDKs do to verify enrollment JWTs. */
function presentedCertificate(url: string): Promise<X509Certificate> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
      resolve(new X509Certificate(socket.getPeerCertificate().raw));
      socket.end();
    });
    socket.on('error', reject);
  });
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.stop();
});

describe('network trust', () => {
  it('GET /network-jwts (both APIs, no session) lists a trust JWT signed by the key of the presented server certificate', async () => {
    const presented = await presentedCertificate(app.urls.api);
    for (const api of ['client', 'management'] as const) {
      const r = await app.client().get('/network-jwts', { api });
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(1);
      const { name, token } = r.body.data[0];
      expect(name).toBe('default');
      const { header, payload } = decodeJwt(token);
      expect(header.kid).toBe(presented.fingerprint.replace(/:/g, '').toLowerCase());
      expect(payload).toMatchObject({ em: 'network', iss: app.urls.api, sub: app.urls.api, ctrls: [app.urls.api], aud: ['openziti-enroller'] });
      await jwtVerify(token, await importX509(presented.toString(), String(header.alg)));
    }
  });

  it('POST /enroll/challenge signs the nonce with the key named by keyId', async () => {
    const nonce = randomUUID();
    const r = await app.client().post('/enroll/challenge', { keyId: app.core.jwt.kid, nonce }, { api: 'client' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ algorithm: 'ES256', kid: app.core.jwt.kid, caPool: app.core.pki.caBundlePem });
    const key = (await presentedCertificate(app.urls.api)).publicKey;
    expect(verifySignature('sha256', Buffer.from(nonce), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(r.body.signature, 'base64'))).toBe(true);
    const badKid = await app.client().post('/enroll/challenge', { keyId: 'nope', nonce }, { api: 'client' });
    expect(badKid.status).toBe(400);
    expect(badKid.body.error.cause.field).toBe('keyId');
    const badNonce = await app.client().post('/enroll/challenge', { keyId: app.core.jwt.kid, nonce: 'not-a-uuid' }, { api: 'client' });
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
