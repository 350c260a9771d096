import { describe, expect, it } from 'vitest';
import { fingerprintSha1 } from '../../src/main/core/pki';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { certLogin, clientCert, decodeJwt, externalCa, type CertAndKey } from '../support/pki';

let app: TestApp;
let admin: ApiClient;

useTestApp((a, c) => ((app = a), (admin = c)));

interface CaOptions {
  isAuthEnabled?: boolean;
  isAutoCaEnrollmentEnabled?: boolean;
  isOttCaEnrollmentEnabled?: boolean;
  identityRoles?: string[];
  identityNameFormat?: string;
  externalIdClaim?: object;
}

async function createCa(name: string, ca: CertAndKey, opts: CaOptions = {}): Promise<string> {
  return admin.create('/cas', {
    name,
    certPem: ca.certPem,
    isAuthEnabled: true,
    isAutoCaEnrollmentEnabled: true,
    isOttCaEnrollmentEnabled: true,
    identityRoles: [],
    ...opts,
  });
}

async function verify(id: string, ca: CertAndKey): Promise<void> {
  const token = (await admin.get(`/cas/${id}`)).body.data.verificationToken;
  const proof = await clientCert(ca, { commonName: token });
  const r = await admin.post(`/cas/${id}/verify`, undefined, { raw: proof.certPem, contentType: 'text/plain' });
  if (r.status !== 200) throw new Error(`verify failed: ${r.text}`);
}

describe('CAs', () => {
  it('are created unverified with a verificationToken; verification needs the token as CN and the CA signature', async () => {
    const ca = await externalCa('Verify CA');
    const other = await externalCa('Other CA');
    const id = await createCa('verify-ca', ca, { identityRoles: ['third-party'], identityNameFormat: '[caName]-[commonName]' });
    const v = (await admin.get(`/cas/${id}`)).body.data;
    expect(v).toMatchObject({
      id,
      name: 'verify-ca',
      certPem: ca.certPem,
      fingerprint: fingerprintSha1(ca.certPem),
      isVerified: false,
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: true,
      identityRoles: ['third-party'],
      identityNameFormat: '[caName]-[commonName]',
      tags: {},
    });
    expect(v).not.toHaveProperty('externalIdClaim'); // no claim: left out, as OpenZiti (never null)
    expect(v.verificationToken).toMatch(/^[0-9a-f-]{36}$/);

    const post = (pem: string) => admin.post(`/cas/${id}/verify`, undefined, { raw: pem, contentType: 'text/plain' });
    const wrongCn = await post((await clientCert(ca, { commonName: 'not-the-token' })).certPem);
    expect(wrongCn.status).toBe(400);
    expect(wrongCn.body.error.code).toBe('INVALID_COMMON_NAME');
    const notChaining = await post((await clientCert(other, { commonName: v.verificationToken })).certPem);
    expect(notChaining.status).toBe(400);
    expect(notChaining.body.error.code).toBe('CERTIFICATE_FAILED_VALIDATION');
    const notPem = await post('hello');
    expect(notPem.status).toBe(400);
    const keyPem = await post(ca.keyPem);
    expect(keyPem.body.error.code).toBe('EXPECTED_PEM_CERTIFICATE');
    expect((await admin.get(`/cas/${id}`)).body.data.isVerified).toBe(false);

    expect((await post((await clientCert(ca, { commonName: v.verificationToken })).certPem)).status).toBe(200);
    expect((await admin.get(`/cas/${id}`)).body.data.isVerified).toBe(true);
    const again = await post((await clientCert(ca, { commonName: v.verificationToken })).certPem);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CA_ALREADY_VERIFIED');
  });

  it('create validation: not a CA, garbage, duplicate certificate; update cannot change isVerified or the certificate', async () => {
    const ca = await externalCa('Validation CA');
    const leaf = await clientCert(ca, { commonName: 'leaf' });
    const notCa = await admin.post('/cas', {
      name: 'leaf-ca',
      certPem: leaf.certPem,
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: false,
      identityRoles: [],
    });
    expect(notCa.status).toBe(400);
    expect(notCa.body.error.code).toBe('CERTIFICATE_IS_NOT_CA');
    const garbage = await admin.post('/cas', {
      name: 'garbage-ca',
      certPem: 'xyz',
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: false,
      identityRoles: [],
    });
    expect(garbage.body.error.cause.field).toBe('certPem');
    const missing = await admin.post('/cas', { name: 'partial-ca', certPem: ca.certPem });
    expect(missing.status).toBe(400);
    const id = await createCa('validation-ca', ca);
    const dup = await admin.post('/cas', {
      name: 'dup-ca',
      certPem: ca.certPem,
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: false,
      identityRoles: [],
    });
    expect(dup.body.error.cause.field).toBe('certPem');

    const put = await admin.put(`/cas/${id}`, {
      name: 'validation-ca-2',
      isAuthEnabled: false,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: true,
      identityRoles: ['x'],
      identityNameFormat: '[requestedName]',
      isVerified: true,
      certPem: 'nope',
    });
    expect(put.status).toBe(200);
    const patch = await admin.patch(`/cas/${id}`, {
      externalIdClaim: { location: 'COMMON_NAME', matcher: 'PREFIX', matcherCriteria: 'u-', parser: 'NONE', parserCriteria: '', index: 0 },
    });
    expect(patch.status).toBe(200);
    expect((await admin.get(`/cas/${id}`)).body.data).toMatchObject({
      name: 'validation-ca-2',
      isAuthEnabled: false,
      isOttCaEnrollmentEnabled: true,
      identityRoles: ['x'],
      identityNameFormat: '[requestedName]',
      isVerified: false,
      certPem: ca.certPem,
      externalIdClaim: { location: 'COMMON_NAME', matcher: 'PREFIX', matcherCriteria: 'u-' },
    });
    const badClaim = await admin.patch(`/cas/${id}`, { externalIdClaim: { location: 'COMMON_NAME', matcher: 'PREFIX', parser: 'NONE' } });
    expect(badClaim.body.error.cause.field).toBe('externalIdClaim.matcherCriteria');
    const list = await admin.get(`/cas?filter=${encodeURIComponent('isVerified = false and name contains "validation"')}`);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([id]);
  });

  it('serves the CA enrollment JWT (em ca) as application/jwt', async () => {
    const id = await createCa('jwt-ca', await externalCa('JWT CA'));
    const r = await admin.get(`/cas/${id}/jwt`);
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toContain('application/jwt');
    const { header, payload } = decodeJwt(r.text);
    expect(header.kid).toBe(app.core.jwt.kid);
    expect(payload).toMatchObject({ em: 'ca', sub: id, iss: app.urls.api, ctrls: [app.urls.api] });
    expect((await admin.get('/cas/nope/jwt')).status).toBe(404);
  });
});

describe('ottca enrollment', () => {
  it('needs a verified CA and a certificate that chains to it; then the certificate logs in', async () => {
    const ca = await externalCa('OttCa CA');
    const wrongCa = await externalCa('Wrong CA');
    const caId = await createCa('ottca-ca', ca);
    const identityId = await admin.create('/identities', { name: 'ottca-device', type: 'Device', isAdmin: false, enrollment: { ottca: caId } });
    const e = (await admin.get(`/identities/${identityId}`)).body.data.enrollment.ottca;
    expect(e).toMatchObject({ caId, ca: { id: caId, name: 'ottca-ca', entity: 'cas' }, token: expect.any(String) });
    expect(decodeJwt(e.jwt).payload).toMatchObject({ em: 'ottca', jti: e.token, sub: identityId });
    const device = await clientCert(ca, { commonName: 'ottca-device', keyAlg: 'RSA-2048' });
    const anon = app.client();

    // an unverified CA cannot be used
    const unverified = await anon.withCert(device.certPem, device.keyPem).post('/enroll/ottca', { token: e.token }, { api: 'client' });
    expect(unverified.status).toBe(400);
    expect(unverified.body.error.code).toBe('ENROLLMENT_CA_NOT_VALID');
    await verify(caId, ca);

    const noCert = await anon.post('/enroll/ottca', { token: e.token }, { api: 'client' });
    expect(noCert.body.error.code).toBe('CERT_FAILED_VALIDATION');
    const wrong = await clientCert(wrongCa, { commonName: 'ottca-device' });
    const wrongResp = await anon.withCert(wrong.certPem, wrong.keyPem).post('/enroll/ottca', { token: e.token }, { api: 'client' });
    expect(wrongResp.status).toBe(400);
    expect(wrongResp.body.error.code).toBe('CERT_FAILED_VALIDATION');
    expect((await admin.get(`/identities/${identityId}/authenticators`)).body.data).toEqual([]);

    const ok = await anon.withCert(device.certPem, device.keyPem).post('/enroll/ottca', { token: e.token }, { api: 'client' });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({});
    const auth = (await admin.get(`/identities/${identityId}/authenticators`)).body.data;
    expect(auth).toMatchObject([{ method: 'cert', fingerprint: fingerprintSha1(device.certPem), isIssuedByNetwork: false }]);

    const { resp, client } = await certLogin(anon, device.certPem, device.keyPem);
    expect(resp.status).toBe(200);
    expect((await client.get('/current-identity', { api: 'client' })).body.data.id).toBe(identityId);

    // a CA with authentication disabled no longer logs its certificates in
    await admin.patch(`/cas/${caId}`, { isAuthEnabled: false });
    expect((await certLogin(anon, device.certPem, device.keyPem)).resp.status).toBe(401);
    await admin.patch(`/cas/${caId}`, { isAuthEnabled: true });
    expect((await certLogin(anon, device.certPem, device.keyPem)).resp.status).toBe(200);

    // deleting the CA deletes its certificate authenticators
    expect((await admin.del(`/cas/${caId}`)).status).toBe(200);
    expect((await admin.get(`/identities/${identityId}/authenticators`)).body.data).toEqual([]);
    expect((await certLogin(anon, device.certPem, device.keyPem)).resp.status).toBe(401);
    await client.close();
    await anon.close();
  });

  it('a certificate already bound to an authenticator cannot enroll again', async () => {
    const ca = await externalCa('InUse CA');
    const caId = await createCa('inuse-ca', ca);
    await verify(caId, ca);
    const device = await clientCert(ca, { commonName: 'inuse' });
    const anon = app.client().withCert(device.certPem, device.keyPem);
    for (const [i, name] of ['inuse-1', 'inuse-2'].entries()) {
      const id = await admin.create('/identities', { name, type: 'Device', isAdmin: false, enrollment: { ottca: caId } });
      const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.ottca.token;
      const r = await anon.post('/enroll/ottca', { token }, { api: 'client' });
      expect(r.status).toBe(i === 0 ? 200 : 409);
      if (i === 1) expect(r.body.error.code).toBe('CERT_IN_USE');
    }
    await anon.close();
  });
});

describe('CA auto enrollment', () => {
  it('creates an identity named by identityNameFormat with the CA identityRoles; the certificate logs in', async () => {
    const ca = await externalCa('Auto CA');
    const caId = await createCa('auto-ca', ca, { identityRoles: ['auto', 'fleet'], identityNameFormat: '[caName]/[commonName]/[requestedName]' });
    const device = await clientCert(ca, { commonName: 'sensor-7' });
    const anon = app.client().withCert(device.certPem, device.keyPem);
    const unverified = await anon.post('/enroll/ca', { name: 'east' }, { api: 'client' });
    expect(unverified.status).toBe(400);
    // no usable CA at all, or none the certificate chains to (other tests' CAs)
    expect(['ENROLLMENT_NO_VALID_CAS', 'CERT_FAILED_VALIDATION']).toContain(unverified.body.error.code);
    await verify(caId, ca);

    const r = await anon.post('/enroll/ca', { name: 'east' }, { api: 'client' });
    expect(r.status).toBe(200);
    const found = (await admin.get(`/identities?filter=${encodeURIComponent('name = "auto-ca/sensor-7/east"')}`)).body.data;
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      roleAttributes: ['auto', 'fleet'],
      typeId: 'Default',
      isAdmin: false,
      authenticators: { cert: { fingerprint: fingerprintSha1(device.certPem) } },
    });
    const { resp, client } = await certLogin(app.client(), device.certPem, device.keyPem);
    expect(resp.status).toBe(200);
    expect((await client.get('/current-identity', { api: 'client' })).body.data.name).toBe('auto-ca/sensor-7/east');

    // a second device with the same name gets a numbered suffix; the same certificate cannot enroll twice
    const twin = await clientCert(ca, { commonName: 'sensor-7', keyAlg: 'RSA-2048' });
    expect((await app.client().withCert(twin.certPem, twin.keyPem).post('/enroll/ca', { name: 'east' }, { api: 'client' })).status).toBe(200);
    expect((await admin.get(`/identities?filter=${encodeURIComponent('name = "auto-ca/sensor-7/east000001"')}`)).body.data).toHaveLength(1);
    const twinLogin = await certLogin(app.client(), twin.certPem, twin.keyPem);
    expect((await twinLogin.client.get('/current-identity', { api: 'client' })).body.data.name).toBe('auto-ca/sensor-7/east000001');
    await twinLogin.client.close();
    const again = await anon.post('/enroll/ca', {}, { api: 'client' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CERT_IN_USE');

    // a CA that does not allow auto enrollment, or a foreign certificate, does not enroll
    await admin.patch(`/cas/${caId}`, { isAutoCaEnrollmentEnabled: false });
    const third = await clientCert(ca, { commonName: 'sensor-8' });
    const disabled = await app.client().withCert(third.certPem, third.keyPem).post('/enroll/ca', {}, { api: 'client' });
    expect(['ENROLLMENT_NO_VALID_CAS', 'CERT_FAILED_VALIDATION']).toContain(disabled.body.error.code);
    await client.close();
    await anon.close();
  });

  it('with an externalIdClaim the identity gets the claim as externalId and logs in by it with any certificate carrying it', async () => {
    const root = await externalCa('Claim Root');
    const ca = await externalCa('Claim Issuing', root);
    const caId = await createCa('claim-ca', root, {
      identityNameFormat: '[commonName]',
      externalIdClaim: { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', parserCriteria: '', index: 0 },
    });
    await verify(caId, root);
    const chain = (c: CertAndKey) => c.certPem + ca.certPem; // leaf + intermediate, the root is the CA
    const first = await clientCert(ca, { commonName: 'workload', uriSans: ['https://example.com/x', 'spiffe://example.org/workload/42'] });
    const noClaim = await clientCert(ca, { commonName: 'no-claim', uriSans: ['https://example.com/y'] });
    const missing = await app.client().withCert(chain(noClaim), noClaim.keyPem).post('/enroll/ca', {}, { api: 'client' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('MISSING_CERT_CLAIM');

    expect((await app.client().withCert(chain(first), first.keyPem).post('/enroll/ca', {}, { api: 'client' })).status).toBe(200);
    const identity = (await admin.get(`/identities?filter=${encodeURIComponent('name = "workload"')}`)).body.data[0];
    expect(identity).toMatchObject({ externalId: 'spiffe://example.org/workload/42', authenticators: {} });

    // a rotated certificate with the same claim logs in as the same identity
    const rotated = await clientCert(ca, { commonName: 'workload-rotated', uriSans: ['spiffe://example.org/workload/42'] });
    const { resp, client } = await certLogin(app.client(), chain(rotated), rotated.keyPem);
    expect(resp.status).toBe(200);
    expect(resp.body.data.identityId).toBe(identity.id);
    const dup = await app.client().withCert(chain(rotated), rotated.keyPem).post('/enroll/ca', {}, { api: 'client' });
    expect(dup.status).toBe(409);
    await client.close();
  });
});
