import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprintSha1 } from '../../src/main/core/pki';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { csr, csrWithSans, decodeJwt, tamperCsrSignature } from '../support/pki';

let app: TestApp;
let admin: ApiClient;

useTestApp((a, c) => ((app = a), (admin = c)));

async function routerCsrs(id: string) {
  const server = await csrWithSans('router.example.com', ['router.example.com', 'localhost'], ['10.0.0.7']);
  const client = await csr('EC-P256', id);
  return { server, client, body: { serverCertCsr: server.csrPem, certCsr: client.csrPem } };
}

const leafOf = (chain: string) => new X509Certificate(chain.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)![0]);

describe('edge routers', () => {
  it('create carries an erott enrollment JWT; every seed field is present', async () => {
    const before = Date.now();
    const id = await admin.create('/edge-routers', {
      name: 'er-1',
      cost: 7,
      roleAttributes: ['east', 'public'],
      isTunnelerEnabled: true,
      tags: { t: 'x' },
    });
    const er = (await admin.get(`/edge-routers/${id}`)).body.data;
    expect(er).toMatchObject({
      id,
      name: 'er-1',
      cost: 7,
      roleAttributes: ['east', 'public'],
      isTunnelerEnabled: true,
      noTraversal: false,
      isOnline: false,
      isVerified: false,
      fingerprint: '',
      hostname: '',
      supportedProtocols: {},
      tags: { t: 'x' },
      enrollmentToken: expect.any(String),
      enrollmentJwt: expect.any(String),
      enrollmentCreatedAt: expect.any(String),
      enrollmentExpiresAt: expect.any(String),
    });
    const { header, payload } = decodeJwt(er.enrollmentJwt);
    expect(header.kid).toBe(app.core.jwt.kid);
    expect(payload).toMatchObject({ em: 'erott', sub: id, jti: er.enrollmentToken, iss: app.urls.api, ctrls: [app.urls.ctrl] });
    // the control channel's advertised address, as `ziti router enroll` writes it into the router's endpoints file
    expect(app.urls.ctrl).toMatch(/^tls:127\.0\.0\.1:\d+$/);
    expect(Date.parse(er.enrollmentExpiresAt)).toBeGreaterThanOrEqual(before + 179 * 60_000);
    expect((payload.exp as number) * 1000).toBe(Math.floor(Date.parse(er.enrollmentExpiresAt) / 1000) * 1000);
  });

  it('enrolls by one-time token: {ca, cert, serverCert}; fingerprint and isVerified afterwards; the token dies', async () => {
    const id = await admin.create('/edge-routers', { name: 'er-enroll' });
    const er = (await admin.get(`/edge-routers/${id}`)).body.data;
    const { server, client, body } = await routerCsrs(id);
    const anon = app.client();

    const wrongCn = await anon.post(
      '/enroll/erott',
      { token: er.enrollmentToken, ...body, certCsr: (await csr('EC-P256', 'not-the-id')).csrPem },
      { api: 'client' },
    );
    expect(wrongCn.status).toBe(400);
    expect(wrongCn.body.error.code).toBe('EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID');
    const badSig = await anon.post(
      '/enroll/erott',
      { token: er.enrollmentToken, ...body, serverCertCsr: tamperCsrSignature(server.csrPem) },
      { api: 'client' },
    );
    expect(badSig.body.error.code).toBe('COULD_NOT_PROCESS_CSR');
    const noServer = await anon.post('/enroll/erott', { token: er.enrollmentToken, certCsr: client.csrPem }, { api: 'client' });
    expect(noServer.body.error.code).toBe('MISSING_OR_INVALID_CSR');
    expect((await admin.get(`/edge-routers/${id}`)).body.data).toMatchObject({
      isVerified: false,
      fingerprint: '',
      enrollmentToken: er.enrollmentToken,
    });

    const r = await anon.post('/enroll/erott', { token: er.enrollmentToken, ...body }, { api: 'client' });
    expect(r.status).toBe(200);
    expect(r.body.data.ca).toBe(app.core.pki.caBundlePem);
    const clientLeaf = leafOf(r.body.data.cert);
    const serverLeaf = leafOf(r.body.data.serverCert);
    expect(clientLeaf.subject).toBe(`CN=${id}`);
    expect(serverLeaf.subjectAltName).toContain('DNS:router.example.com');
    expect(serverLeaf.subjectAltName).toContain('IP Address:10.0.0.7');
    expect(clientLeaf.subjectAltName).toBe(`URI:spiffe://${app.core.pki.trustDomain}/router/${id}`);
    expect(clientLeaf.verify(new X509Certificate(app.core.pki.signing.certPem).publicKey)).toBe(true);

    const after = (await admin.get(`/edge-routers/${id}`)).body.data;
    expect(after).toMatchObject({
      isVerified: true,
      fingerprint: fingerprintSha1(r.body.data.cert),
      certPem: expect.stringContaining('BEGIN CERTIFICATE'),
      enrollmentToken: null,
      enrollmentJwt: null,
      enrollmentCreatedAt: null,
      enrollmentExpiresAt: null,
    });
    const filtered = await admin.get(`/edge-routers?filter=${encodeURIComponent(`fingerprint = "${after.fingerprint}"`)}`);
    expect(filtered.body.data.map((e: { id: string }) => e.id)).toEqual([id]);
    const reuse = await anon.post('/enroll/erott', { token: er.enrollmentToken, ...(await routerCsrs(id)).body }, { api: 'client' });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    await anon.close();
  });

  it('an expired router token is rejected', async () => {
    const id = await admin.create('/edge-routers', { name: 'er-expired' });
    await app.core.store.runSql('UPDATE edge_routers SET enrollment_expires_at = ? WHERE id = ?', new Date(Date.now() - 1000).toISOString(), id);
    const token = (await admin.get(`/edge-routers/${id}`)).body.data.enrollmentToken;
    const r = await app.client().post('/enroll/erott', { token, ...(await routerCsrs(id)).body }, { api: 'client' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('ENROLLMENT_EXPIRED');
    expect((await admin.get(`/edge-routers/${id}`)).body.data.isVerified).toBe(false);
  });

  it('extends its certificates with the current client certificate; the old one is invalid afterwards', async () => {
    const id = await admin.create('/edge-routers', { name: 'er-extend' });
    const token = (await admin.get(`/edge-routers/${id}`)).body.data.enrollmentToken;
    const first = await routerCsrs(id);
    const enrolled = (await app.client().post('/enroll/erott', { token, ...first.body }, { api: 'client' })).body.data;
    const asRouter = app.client().withCert(enrolled.cert, first.client.keyPem);

    const next = await routerCsrs(id);
    const missing = await asRouter.post('/enroll/extend/router', { certCsr: next.client.csrPem }, { api: 'client' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.cause.field).toBe('serverCertCsr');
    const r = await asRouter.post('/enroll/extend/router', next.body, { api: 'client' });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ ca: app.core.pki.caBundlePem, cert: expect.any(String), serverCert: expect.any(String) });
    expect((await admin.get(`/edge-routers/${id}`)).body.data.fingerprint).toBe(fingerprintSha1(r.body.data.cert));
    // the previous certificate is no longer the router's
    const stale = await asRouter.post('/enroll/extend/router', (await routerCsrs(id)).body, { api: 'client' });
    expect(stale.status).toBe(401);
    const renewed = app.client().withCert(r.body.data.cert, next.client.keyPem);
    expect((await renewed.post('/enroll/extend/router', (await routerCsrs(id)).body, { api: 'management' })).status).toBe(200);
    // no certificate at all
    expect((await app.client().post('/enroll/extend/router', next.body, { api: 'client' })).status).toBe(401);
  });

  it('re-enroll removes the certificate and replaces the outstanding JWT', async () => {
    const id = await admin.create('/edge-routers', { name: 'er-reenroll' });
    const outstanding = (await admin.get(`/edge-routers/${id}`)).body.data;
    // re-enroll before enrolling: a new JWT replaces the old one, whose token is dead
    expect((await admin.post(`/edge-routers/${id}/re-enroll`)).status).toBe(200);
    const replaced = (await admin.get(`/edge-routers/${id}`)).body.data;
    expect(replaced.enrollmentToken).not.toBe(outstanding.enrollmentToken);
    expect(replaced.enrollmentJwt).not.toBe(outstanding.enrollmentJwt);
    const dead = await app.client().post('/enroll/erott', { token: outstanding.enrollmentToken, ...(await routerCsrs(id)).body }, { api: 'client' });
    expect(dead.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');

    const csrs = await routerCsrs(id);
    const enrolled = (await app.client().post('/enroll/erott', { token: replaced.enrollmentToken, ...csrs.body }, { api: 'client' })).body.data;
    expect((await admin.get(`/edge-routers/${id}`)).body.data.isVerified).toBe(true);
    expect((await admin.post(`/edge-routers/${id}/re-enroll`)).status).toBe(200);
    const after = (await admin.get(`/edge-routers/${id}`)).body.data;
    expect(after).toMatchObject({ isVerified: false, fingerprint: '', certPem: null, enrollmentToken: expect.any(String) });
    expect(decodeJwt(after.enrollmentJwt).payload).toMatchObject({ em: 'erott', sub: id, jti: after.enrollmentToken });
    // the removed certificate cannot extend any more
    const asRouter = app.client().withCert(enrolled.cert, csrs.client.keyPem);
    expect((await asRouter.post('/enroll/extend/router', (await routerCsrs(id)).body, { api: 'client' })).status).toBe(401);
    expect((await admin.post('/edge-routers/nope/re-enroll')).status).toBe(404);
  });

  it('role attributes, roleFilter and the edge-router role-attribute listing', async () => {
    await admin.create('/edge-routers', { name: 'er-role-a', roleAttributes: ['zone-a', 'shared'] });
    await admin.create('/edge-routers', { name: 'er-role-b', roleAttributes: ['zone-b', 'shared'] });
    const names = async (q: string) => (await admin.get(`/edge-routers?${q}`)).body.data.map((e: { name: string }) => e.name).sort();
    expect(await names('roleFilter=%23shared')).toEqual(['er-role-a', 'er-role-b']);
    expect(await names('roleFilter=%23zone-a&roleFilter=%23shared&roleSemantic=AllOf')).toEqual(['er-role-a']);
    const attrs = (await admin.get('/edge-router-role-attributes?limit=100')).body.data;
    expect(attrs).toEqual(expect.arrayContaining(['zone-a', 'zone-b', 'shared']));
  });
});

describe('routers (transit)', () => {
  it('CRUD with every seed field at /routers and /transit-routers; enrollment JWT on create (em trott)', async () => {
    const r = await admin.post('/routers', {
      name: 'tr-1',
      cost: 3,
      noTraversal: true,
      disabled: false,
      ctrlChanListeners: { 'tls:0.0.0.0:6262': ['x'] },
      tags: { a: 'b' },
    });
    expect(r.status).toBe(201);
    const id = r.body.data.id;
    const tr = (await admin.get(`/routers/${id}`)).body.data;
    expect(tr).toMatchObject({
      id,
      name: 'tr-1',
      cost: 3,
      noTraversal: true,
      disabled: false,
      ctrlChanListeners: { 'tls:0.0.0.0:6262': ['x'] },
      tags: { a: 'b' },
      isOnline: false,
      isVerified: false,
      fingerprint: '',
      interfaces: [],
      unverifiedCertPem: null,
      unverifiedFingerprint: null,
      enrollmentToken: expect.any(String),
      enrollmentJwt: expect.any(String),
      enrollmentCreatedAt: expect.any(String),
      enrollmentExpiresAt: expect.any(String),
    });
    expect(decodeJwt(tr.enrollmentJwt).payload).toMatchObject({ em: 'trott', sub: id, jti: tr.enrollmentToken });
    expect((await admin.get(`/transit-routers/${id}`)).body.data.name).toBe('tr-1');
    expect((await admin.patch(`/transit-routers/${id}`, { cost: 9 })).status).toBe(200);
    expect((await admin.put(`/routers/${id}`, { name: 'tr-1b' })).status).toBe(200);
    expect((await admin.get(`/routers/${id}`)).body.data).toMatchObject({ name: 'tr-1b', cost: 0, noTraversal: false, ctrlChanListeners: {} });
    const bad = await admin.post('/routers', { name: 'tr-bad', cost: 70000 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.cause.field).toBe('cost');
    expect((await admin.get('/summary')).body.data).toMatchObject({ routers: 1 });
    expect((await admin.del(`/routers/${id}`)).status).toBe(200);
    expect((await admin.get(`/transit-routers/${id}`)).status).toBe(404);
  });

  it('enrolls through the legacy /enroll form and re-enrolls', async () => {
    const id = await admin.create('/routers', { name: 'tr-enroll' });
    const token = (await admin.get(`/routers/${id}`)).body.data.enrollmentToken;
    const csrs = await routerCsrs(id);
    const r = await app.client().post(`/enroll?method=trott&token=${token}`, csrs.body, { api: 'client' });
    expect(r.status).toBe(200);
    expect((await admin.get(`/routers/${id}`)).body.data).toMatchObject({
      isVerified: true,
      fingerprint: fingerprintSha1(r.body.data.cert),
      enrollmentJwt: null,
    });
    expect((await admin.post(`/routers/${id}/re-enroll`)).status).toBe(200);
    expect((await admin.get(`/routers/${id}`)).body.data).toMatchObject({ isVerified: false, fingerprint: '', enrollmentJwt: expect.any(String) });
  });

  it('requires the router permission', async () => {
    const reader = await admin.create('/identities', { name: 'router-reader', type: 'User', isAdmin: false, permissions: ['router.read'] });
    await admin.post('/authenticators', { method: 'updb', identityId: reader, username: 'router-reader', password: 'reader-pass-1' });
    const c = app.client();
    await c.login('router-reader', 'reader-pass-1');
    expect((await c.get('/routers')).status).toBe(200);
    expect((await c.post('/routers', { name: 'nope' })).status).toBe(401);
    const er = (await admin.get('/edge-routers')).body.data[0].id;
    expect((await c.post(`/edge-routers/${er}/re-enroll`)).status).toBe(401);
    await c.close();
  });
});
