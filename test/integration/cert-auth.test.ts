import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintSha1 } from '../../src/main/core/pki';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { certLogin, clientCert, csr, externalCa, type CertAndKey } from '../support/pki';
import { authPolicyBody } from '../support/users';

let app: TestApp;
let admin: ApiClient;
let thirdParty: CertAndKey;
let thirdPartyId: string;

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
  thirdParty = await externalCa('Cert Auth CA');
  thirdPartyId = await admin.create('/cas', {
    name: 'cert-auth-ca',
    certPem: thirdParty.certPem,
    isAuthEnabled: true,
    isAutoCaEnrollmentEnabled: false,
    isOttCaEnrollmentEnabled: true,
    identityRoles: [],
  });
  const token = (await admin.get(`/cas/${thirdPartyId}`)).body.data.verificationToken;
  const proof = await clientCert(thirdParty, { commonName: token });
  await admin.post(`/cas/${thirdPartyId}/verify`, undefined, { raw: proof.certPem, contentType: 'text/plain' });
});
afterAll(async () => {
  await admin.close();
  await app.stop();
});

/** An identity enrolled by ott; returns its certificate chain, key and authenticator id. */
async function enrolledDevice(name: string): Promise<{ id: string; cert: string; key: string; authenticatorId: string }> {
  const id = await admin.create('/identities', { name, type: 'Device', isAdmin: false, enrollment: { ott: true } });
  const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.token;
  const { csrPem, keyPem } = await csr('EC-P256', name);
  const r = await app.client().post('/enroll/ott', { token, clientCsr: csrPem }, { api: 'client' });
  const authenticatorId = (await admin.get(`/identities/${id}`)).body.data.authenticators.cert.id;
  return { id, cert: r.body.data.cert, key: keyPem, authenticatorId };
}

describe('certificate authenticators (management)', () => {
  it('POST /authenticators with method cert binds a certificate; bad ones are rejected', async () => {
    const id = await admin.create('/identities', { name: 'mgmt-cert', type: 'Device', isAdmin: false });
    const device = await clientCert(thirdParty, { commonName: 'mgmt-cert' });
    const garbage = await admin.post('/authenticators', { method: 'cert', identityId: id, certPem: 'garbage' });
    expect(garbage.status).toBe(400);
    expect(garbage.body.error.code).toBe('INVALID_CERT_PEM');
    const caCert = await admin.post('/authenticators', { method: 'cert', identityId: id, certPem: thirdParty.certPem });
    expect(caCert.body.error.code).toBe('INVALID_CERT_PEM');
    const noPem = await admin.post('/authenticators', { method: 'cert', identityId: id });
    expect(noPem.body.error.cause.field).toBe('certPem');

    const r = await admin.post('/authenticators', { method: 'cert', identityId: id, certPem: device.certPem, tags: { k: 'v' } });
    expect(r.status).toBe(201);
    const a = (await admin.get(`/authenticators/${r.body.data.id}`)).body.data;
    expect(a).toMatchObject({
      method: 'cert',
      identityId: id,
      fingerprint: fingerprintSha1(device.certPem),
      certPem: device.certPem,
      isIssuedByNetwork: false,
      tags: { k: 'v' },
    });
    const dup = await admin.post('/authenticators', {
      method: 'cert',
      identityId: await admin.create('/identities', { name: 'mgmt-cert-2', type: 'Device', isAdmin: false }),
      certPem: device.certPem,
    });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CERT_IN_USE');
    expect((await certLogin(app.client(), device.certPem, device.keyPem)).resp.status).toBe(200);
  });

  it('expired certificates log in only when the auth policy allows it', async () => {
    const id = await admin.create('/identities', { name: 'expired-cert', type: 'Device', isAdmin: false });
    const expired = await clientCert(thirdParty, { commonName: 'expired', validityDays: 1, now: new Date(Date.now() - 10 * 86_400_000) });
    await admin.create('/authenticators', { method: 'cert', identityId: id, certPem: expired.certPem });
    // the default policy allows expired certificates
    expect((await certLogin(app.client(), expired.certPem, expired.keyPem)).resp.status).toBe(200);
    const strict = await admin.create(
      '/auth-policies',
      authPolicyBody('no-expired-certs', { cert: { allowExpiredCerts: false }, extJwt: { allowed: false } }),
    );
    await admin.patch(`/identities/${id}`, { authPolicyId: strict });
    const denied = await certLogin(app.client(), expired.certPem, expired.keyPem);
    expect(denied.resp.status).toBe(401);
    expect(denied.resp.body.error.code).toBe('INVALID_AUTH');
    // a valid certificate still works under that policy; cert disallowed blocks every certificate
    const valid = await enrolledDevice('strict-valid');
    await admin.patch(`/identities/${valid.id}`, { authPolicyId: strict });
    expect((await certLogin(app.client(), valid.cert, valid.key)).resp.status).toBe(200);
    await admin.patch(`/auth-policies/${strict}`, { primary: { cert: { allowed: false } } });
    expect((await certLogin(app.client(), valid.cert, valid.key)).resp.status).toBe(401);
  });

  it('a certificate from an unknown CA, or of a disabled identity, does not log in', async () => {
    const stranger = await externalCa('Stranger CA');
    const id = await admin.create('/identities', { name: 'stranger', type: 'Device', isAdmin: false });
    const cert = await clientCert(stranger, { commonName: 'stranger' });
    await admin.create('/authenticators', { method: 'cert', identityId: id, certPem: cert.certPem });
    expect((await certLogin(app.client(), cert.certPem, cert.keyPem)).resp.status).toBe(401);
    const device = await enrolledDevice('to-disable');
    expect((await admin.post(`/identities/${device.id}/disable`, { durationMinutes: 0 })).status).toBe(200);
    expect((await certLogin(app.client(), device.cert, device.key)).resp.status).toBe(401);
  });
});

describe('re-enroll and request-extend', () => {
  it('re-enroll: cert -> ott, cert from a CA -> ottca, updb -> updb; the authenticator is gone', async () => {
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const device = await enrolledDevice('re-enroll-ott');
    const r = await admin.post(`/authenticators/${device.authenticatorId}/re-enroll`, { expiresAt });
    expect(r.status).toBe(201);
    expect((await admin.get(`/enrollments/${r.body.data.id}`)).body.data).toMatchObject({ method: 'ott', identityId: device.id, expiresAt });
    expect((await admin.get(`/authenticators/${device.authenticatorId}`)).status).toBe(404);
    expect((await certLogin(app.client(), device.cert, device.key)).resp.status).toBe(401);

    const caIdentity = await admin.create('/identities', { name: 're-enroll-ca', type: 'Device', isAdmin: false });
    const caCert = await clientCert(thirdParty, { commonName: 're-enroll-ca' });
    const caAuth = await admin.create('/authenticators', { method: 'cert', identityId: caIdentity, certPem: caCert.certPem });
    const r2 = await admin.post(`/authenticators/${caAuth}/re-enroll`, { expiresAt });
    expect((await admin.get(`/enrollments/${r2.body.data.id}`)).body.data).toMatchObject({ method: 'ottca', caId: thirdPartyId });

    const user = await admin.create('/identities', { name: 're-enroll-updb', type: 'User', isAdmin: false });
    const updb = await admin.create('/authenticators', { method: 'updb', identityId: user, username: 're-enroll-user', password: 'user-pass-1' });
    const r3 = await admin.post(`/authenticators/${updb}/re-enroll`, { expiresAt });
    const e3 = (await admin.get(`/enrollments/${r3.body.data.id}`)).body.data;
    expect(e3).toMatchObject({ method: 'updb', username: 're-enroll-user' });
    const anon = app.client();
    await expect(anon.login('re-enroll-user', 'user-pass-1', 'client')).rejects.toThrow();
    expect((await anon.post(`/enroll/updb?token=${e3.token}`, { password: 'new-pass-1' }, { api: 'client' })).status).toBe(200);
    await anon.login('re-enroll-user', 'new-pass-1', 'client');
    await anon.close();
  });

  it('re-enroll failures change nothing', async () => {
    const device = await enrolledDevice('re-enroll-fail');
    const past = await admin.post(`/authenticators/${device.authenticatorId}/re-enroll`, { expiresAt: '2001-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    // an outstanding ott enrollment makes the re-enroll a conflict: the authenticator stays
    await admin.post('/enrollments', { method: 'ott', identityId: device.id, expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    const conflict = await admin.post(`/authenticators/${device.authenticatorId}/re-enroll`, {
      expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    expect(conflict.status).toBe(409);
    expect((await admin.get(`/authenticators/${device.authenticatorId}`)).status).toBe(200);
    expect((await certLogin(app.client(), device.cert, device.key)).resp.status).toBe(200);
    expect((await admin.post('/authenticators/nope/re-enroll', { expiresAt: new Date(Date.now() + 3600_000).toISOString() })).status).toBe(404);
  });

  it('request-extend flags certificate authenticators (seen in the API session); 403 for others', async () => {
    const device = await enrolledDevice('flag-extend');
    const { client } = await certLogin(app.client(), device.cert, device.key);
    const before = (await client.get('/current-api-session', { api: 'client' })).body.data;
    expect(before).toMatchObject({ isCertExtendable: true, isCertExtendRequested: false, isCertKeyRollRequested: false });
    expect((await admin.post(`/authenticators/${device.authenticatorId}/request-extend`, { rollKeys: true })).status).toBe(200);
    const after = (await client.get('/current-api-session', { api: 'client' })).body.data;
    expect(after).toMatchObject({ isCertExtendRequested: true, isCertKeyRollRequested: true });
    expect((await admin.get(`/authenticators/${device.authenticatorId}`)).body.data).toMatchObject({
      isExtendRequested: true,
      isKeyRollRequested: true,
      extendRequestedAt: expect.any(String),
    });
    const updb = (await admin.get('/authenticators?filter=' + encodeURIComponent('method = "updb"'))).body.data[0].id;
    const forbidden = await admin.post(`/authenticators/${updb}/request-extend`, { rollKeys: false });
    expect(forbidden.status).toBe(403);
    expect((await admin.post('/authenticators/nope/request-extend', {})).status).toBe(404);
    await client.close();
  });
});

describe('certificate extension', () => {
  it('extend with a CSR; the old certificate works until extend-verify, then only the new one', async () => {
    const device = await enrolledDevice('extend-me');
    await admin.post(`/authenticators/${device.authenticatorId}/request-extend`, { rollKeys: true });
    const { client } = await certLogin(app.client(), device.cert, device.key);
    const next = await csr('EC-P384', 'extend-me');
    const path = `/current-identity/authenticators/${device.authenticatorId}`;
    const r = await client.post(`${path}/extend`, { clientCertCsr: next.csrPem }, { api: 'client' });
    expect(r.status).toBe(200);
    expect(r.body.data.ca).toBe(app.core.pki.caBundlePem);
    const newLeaf = new X509Certificate(r.body.data.clientCert);
    expect(newLeaf.subjectAltName).toBe(`URI:spiffe://${app.core.pki.trustDomain}/identity/${device.id}`);

    // not yet: the old certificate still logs in, the new one does not
    expect((await certLogin(app.client(), device.cert, device.key)).resp.status).toBe(200);
    expect((await certLogin(app.client(), r.body.data.clientCert, next.keyPem)).resp.status).toBe(401);

    const wrong = await client.post(`${path}/extend-verify`, { clientCert: device.cert }, { api: 'client' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('INVALID_CLIENT_CERT');
    expect((await client.post(`${path}/extend-verify`, { clientCert: r.body.data.clientCert }, { api: 'client' })).status).toBe(200);

    expect((await certLogin(app.client(), device.cert, device.key)).resp.status).toBe(401);
    const { resp, client: renewed } = await certLogin(app.client(), r.body.data.clientCert, next.keyPem);
    expect(resp.status).toBe(200);
    expect((await renewed.get('/current-identity', { api: 'client' })).body.data.id).toBe(device.id);
    expect((await admin.get(`/authenticators/${device.authenticatorId}`)).body.data).toMatchObject({
      fingerprint: fingerprintSha1(r.body.data.clientCert),
      isExtendRequested: false,
      isKeyRollRequested: false,
      lastExtendRolledKeys: true,
    });
    await client.close();
    await renewed.close();
  });

  it('needs the current certificate on the connection, a controller-issued certificate and a valid CSR', async () => {
    const device = await enrolledDevice('extend-guard');
    const path = `/current-identity/authenticators/${device.authenticatorId}/extend`;
    // a session made with the certificate, but a request over a connection without it
    const { resp } = await certLogin(app.client(), device.cert, device.key);
    const bare = app.client();
    bare.token = resp.body.data.token;
    const noCert = await bare.post(path, { clientCertCsr: (await csr()).csrPem }, { api: 'client' });
    expect(noCert.status).toBe(401);
    const { client } = await certLogin(app.client(), device.cert, device.key);
    const badCsr = await client.post(path, { clientCertCsr: 'nope' }, { api: 'client' });
    expect(badCsr.status).toBe(400);
    expect(badCsr.body.error.code).toBe('COULD_NOT_PROCESS_CSR');
    expect((await admin.get(`/authenticators/${device.authenticatorId}`)).body.data.fingerprint).toBe(fingerprintSha1(device.cert));
    const other = await enrolledDevice('extend-other');
    expect(
      (
        await client.post(
          `/current-identity/authenticators/${other.authenticatorId}/extend`,
          { clientCertCsr: (await csr()).csrPem },
          { api: 'client' },
        )
      ).status,
    ).toBe(404);
    // a third-party certificate cannot be extended
    const tpIdentity = await admin.create('/identities', { name: 'extend-third-party', type: 'Device', isAdmin: false });
    const tp = await clientCert(thirdParty, { commonName: 'tp' });
    const tpAuth = await admin.create('/authenticators', { method: 'cert', identityId: tpIdentity, certPem: tp.certPem });
    const { client: tpClient } = await certLogin(app.client(), tp.certPem, tp.keyPem);
    const tpExtend = await tpClient.post(
      `/current-identity/authenticators/${tpAuth}/extend`,
      { clientCertCsr: (await csr()).csrPem },
      { api: 'client' },
    );
    expect(tpExtend.status).toBe(409);
    expect(tpExtend.body.error.code).toBe('CAN_NOT_UPDATE_AUTHENTICATOR');
    await client.close();
    await tpClient.close();
  });
});

describe('ephemeral API session certificates', () => {
  it('list/create/get/delete, valid for the session lifetime, private to the session', async () => {
    const device = await enrolledDevice('ephemeral');
    const { client, resp } = await certLogin(app.client(), device.cert, device.key);
    const { csrPem } = await csr('EC-P256', 'ephemeral');
    const created = await client.post('/current-api-session/certificates', { csr: csrPem }, { api: 'client' });
    expect(created.status).toBe(201);
    const { id, certificate, cas } = created.body.data;
    expect(created.body.data._links.self.href).toBe(`./current-api-session/certificates/${id}`);
    expect(cas).toBe(app.core.pki.caBundlePem);
    const leaf = new X509Certificate(certificate);
    expect(leaf.verify(new X509Certificate(app.core.pki.signing.certPem).publicKey)).toBe(true);
    expect(Math.abs(Date.parse(leaf.validTo) - Date.parse(resp.body.data.expiresAt))).toBeLessThan(5000);
    const one = (await client.get(`/current-api-session/certificates/${id}`, { api: 'client' })).body.data;
    expect(one).toMatchObject({
      id,
      fingerprint: fingerprintSha1(certificate),
      subject: 'CN=ephemeral',
      validFrom: expect.any(String),
      validTo: expect.any(String),
    });
    const list = await client.get('/current-api-session/certificates', { api: 'client' });
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([id]);
    const bad = await client.post('/current-api-session/certificates', { csr: 'nope' }, { api: 'client' });
    expect(bad.body.error.code).toBe('COULD_NOT_PROCESS_CSR');

    const other = await app.adminClient();
    expect((await other.get(`/current-api-session/certificates/${id}`, { api: 'client' })).status).toBe(404);
    expect((await other.get('/current-api-session/certificates', { api: 'client' })).body.data).toEqual([]);
    expect((await other.del(`/current-api-session/certificates/${id}`, { api: 'client' })).status).toBe(404);
    expect((await client.del(`/current-api-session/certificates/${id}`, { api: 'client' })).status).toBe(200);
    expect((await client.get(`/current-api-session/certificates/${id}`, { api: 'client' })).status).toBe(404);
    // they go with the session
    await client.post('/current-api-session/certificates', { csr: csrPem }, { api: 'client' });
    await client.del('/current-api-session', { api: 'client' });
    expect(
      (await app.core.store.getSql<{ n: number }>('SELECT count(*) AS n FROM api_session_certificates WHERE api_session_id = ?', resp.body.data.id))!
        .n,
    ).toBe(0);
    expect((await app.client().get('/current-api-session/certificates', { api: 'client' })).status).toBe(401);
    await other.close();
  });
});
