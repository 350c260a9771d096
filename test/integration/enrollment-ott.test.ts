import { X509Certificate } from 'node:crypto';
import { importX509, jwtVerify, createLocalJWKSet } from 'jose';
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { certLogin, csr, decodeJwt, tamperCsrSignature } from '../support/pki';

let app: TestApp;
let admin: ApiClient;

useTestApp((a, c) => ((app = a), (admin = c)));

async function ottIdentity(name: string): Promise<{ id: string; jwt: string; token: string; enrollmentId: string }> {
  const id = await admin.create('/identities', { name, type: 'Device', isAdmin: false, enrollment: { ott: true } });
  const ott = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott;
  return { id, jwt: ott.jwt, token: ott.token, enrollmentId: ott.id };
}

const authenticatorCount = async (identityId: string) =>
  (await admin.get(`/identities/${identityId}/authenticators`)).body.meta.pagination.totalCount;

describe('one-time token enrollment', () => {
  it('identity create with enrollment.ott carries a JWT signed with the API server certificate key (kid = its SHA-1 fingerprint)', async () => {
    const before = Date.now();
    const { id, jwt, token } = await ottIdentity('ott-jwt');
    const { header, payload } = decodeJwt(jwt);
    expect(header).toMatchObject({ alg: 'ES256', kid: app.core.jwt.kid, typ: 'JWT' });
    expect(payload).toMatchObject({ em: 'ott', jti: token, sub: id, iss: app.urls.api, ctrls: [app.urls.api] });
    // default expiry: 180 minutes
    expect((payload.exp as number) * 1000).toBeGreaterThanOrEqual(before + 179 * 60_000);
    expect((payload.exp as number) * 1000).toBeLessThanOrEqual(Date.now() + 180 * 60_000 + 1000);
    // verifiable with the server certificate SDKs fetch and with the published JWKS
    await jwtVerify(jwt, await importX509(app.core.pki.server.certPem, 'ES256'), { issuer: app.urls.api });
    const jwks = await app.client().get('/enroll/jwks', { api: 'client' });
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys[0]).toMatchObject({ kid: app.core.jwt.kid, kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256' });
    expect(jwks.body.keys[0].d).toBeUndefined();
    await jwtVerify(jwt, createLocalJWKSet(jwks.body));
    // and listed under /enrollments
    const list = await admin.get(`/enrollments?filter=${encodeURIComponent(`identityId = "${id}"`)}`);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ method: 'ott', token, jwt, identity: { id, name: 'ott-jwt', urlName: 'identities' } });
  });

  for (const keyAlg of ['EC-P256', 'EC-P384', 'RSA-2048'] as const) {
    it(`enrolls with a ${keyAlg} CSR, then logs in with the issued certificate and reads /current-identity`, async () => {
      const { id, token } = await ottIdentity(`ott-${keyAlg}`);
      const { csrPem, keyPem } = await csr(keyAlg, 'my-device');
      const anon = app.client();
      const r = await anon.post('/enroll/ott', { token, clientCsr: csrPem }, { api: 'client' });
      expect(r.status).toBe(200);
      const { cert, ca } = r.body.data;
      expect(ca).toBe(app.core.pki.caBundlePem);
      const certs = cert.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
      expect(certs).toHaveLength(2); // leaf + signing CA
      const leaf = new X509Certificate(certs[0]);
      expect(leaf.verify(new X509Certificate(app.core.pki.signing.certPem).publicKey)).toBe(true);
      expect(leaf.subjectAltName).toBe(`URI:spiffe://${app.core.pki.trustDomain}/identity/${id}`);
      expect(leaf.subject).toContain('CN=my-device');
      const days = (Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)) / 86_400_000;
      expect(Math.round(days)).toBe(365);

      const { resp, client } = await certLogin(anon, cert, keyPem);
      expect(resp.status).toBe(200);
      expect(resp.body.data.identityId).toBe(id);
      const me = await client.get('/current-identity', { api: 'client' });
      expect(me.status).toBe(200);
      expect(me.body.data).toMatchObject({ id, name: `ott-${keyAlg}`, enrollment: {} });
      expect(me.body.data.authenticators.cert.fingerprint).toBe(leaf.fingerprint.replace(/:/g, '').toLowerCase());
      // the enrollment is gone; the management view shows the network-issued certificate authenticator
      expect((await admin.get(`/identities/${id}/enrollments`)).body.data).toEqual([]);
      const auths = (await admin.get(`/identities/${id}/authenticators`)).body.data;
      expect(auths).toHaveLength(1);
      expect(auths[0]).toMatchObject({ method: 'cert', isIssuedByNetwork: true, certPem: `${certs[0]}\n` });
      await client.close();
      await anon.close();
    });
  }

  it('the legacy /enroll?method=ott&token= form takes a raw PEM CSR and answers PEM (or JSON when asked)', async () => {
    const a = await ottIdentity('ott-legacy-pem');
    const { csrPem, keyPem } = await csr('EC-P256');
    const anon = app.client();
    const r = await anon.post(`/enroll?method=ott&token=${a.token}`, undefined, {
      api: 'client',
      raw: csrPem,
      contentType: 'application/x-pem-file',
    });
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toContain('application/x-pem-file');
    expect(r.text).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect((await certLogin(anon, r.text, keyPem)).resp.status).toBe(200);

    const b = await ottIdentity('ott-legacy-json');
    const second = await csr('RSA-2048');
    const j = await anon.post(`/enroll?token=${b.token}`, undefined, {
      api: 'client',
      raw: second.csrPem,
      contentType: 'text/plain',
      headers: { accept: 'application/json' },
    });
    expect(j.status).toBe(200);
    expect(j.body.data.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect((await certLogin(anon, j.body.data.cert, second.keyPem)).resp.status).toBe(200);
    await anon.close();
  });

  it('a used token is rejected and changes nothing', async () => {
    const { id, token } = await ottIdentity('ott-reuse');
    const anon = app.client();
    expect((await anon.post('/enroll/ott', { token, clientCsr: (await csr()).csrPem }, { api: 'client' })).status).toBe(200);
    const again = await anon.post('/enroll/ott', { token, clientCsr: (await csr()).csrPem }, { api: 'client' });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    expect(await authenticatorCount(id)).toBe(1);
    const unknown = await anon.post(
      '/enroll/ott',
      { token: '00000000-0000-4000-8000-000000000000', clientCsr: (await csr()).csrPem },
      { api: 'client' },
    );
    expect(unknown.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    await anon.close();
  });

  it('an expired token is rejected and changes nothing', async () => {
    const { id, token, enrollmentId } = await ottIdentity('ott-expired');
    await app.core.store.runSql('UPDATE enrollments SET expires_at = ? WHERE id = ?', new Date(Date.now() - 1000).toISOString(), enrollmentId);
    const anon = app.client();
    const r = await anon.post('/enroll/ott', { token, clientCsr: (await csr()).csrPem }, { api: 'client' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('ENROLLMENT_EXPIRED');
    expect(await authenticatorCount(id)).toBe(0);
    expect((await admin.get(`/enrollments/${enrollmentId}`)).status).toBe(200);
    await anon.close();
  });

  it('CSRs with a bad signature, weak keys or garbage are rejected and the token stays usable', async () => {
    const { id, token } = await ottIdentity('ott-bad-csr');
    const anon = app.client();
    const good = await csr('EC-P256');
    const bad = await anon.post('/enroll/ott', { token, clientCsr: tamperCsrSignature(good.csrPem) }, { api: 'client' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('COULD_NOT_PROCESS_CSR');
    expect(bad.body.error.cause.field).toBe('clientCsr');
    const garbage = await anon.post('/enroll/ott', { token, clientCsr: 'not a csr' }, { api: 'client' });
    expect(garbage.body.error.code).toBe('COULD_NOT_PROCESS_CSR');
    const missing = await anon.post('/enroll/ott', { token }, { api: 'client' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('MISSING_OR_INVALID_CSR');
    expect(await authenticatorCount(id)).toBe(0);
    // the token still works afterwards
    expect((await anon.post('/enroll/ott', { token, clientCsr: good.csrPem }, { api: 'client' })).status).toBe(200);
    await anon.close();
  });

  it('certificate login fails without a certificate and with an unknown certificate', async () => {
    const anon = app.client();
    const none = await anon.post('/authenticate?method=cert', {}, { api: 'client' });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('INVALID_AUTH');
    // a certificate from the controller's own server chain is trusted but belongs to no identity
    const { resp } = await certLogin(anon, app.core.pki.server.certPem, app.core.pki.server.keyPem);
    expect(resp.status).toBe(401);
    await anon.close();
  });
});
