import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRootCa } from '../../src/main/core/pki/index';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ManualClock, MINUTE } from '../support/clock';
import { JwksServer, pemSigningKey, signingKey, signJwt, type SigningKey } from '../support/jwks';
import { createUser, epochSeconds } from '../support/users';

const ISSUER = 'https://idp.example.test';
const AUDIENCE = 'weft-controller';

let app: TestApp;
let admin: ApiClient;
let clock: ManualClock;
let jwks: JwksServer;
let jwksUrl: string;
let k1: SigningKey;
let k2: SigningKey;
let signerId: string;
let aliceId: string;

const now = () => epochSeconds(clock);
const tokenFor = (key: SigningKey, claims: Record<string, unknown> = {}) =>
  signJwt(key, { iss: ISSUER, aud: AUDIENCE, sub: aliceId, ...claims }, now());

async function extJwtLogin(token: string | undefined, headers: Record<string, string> = {}) {
  const c = app.client();
  const r = await c.post(
    '/authenticate?method=ext-jwt',
    {},
    { api: 'client', headers: token ? { authorization: `Bearer ${token}`, ...headers } : headers },
  );
  if (r.status === 200) c.token = r.body.data.token;
  return { c, r };
}

beforeAll(async () => {
  clock = new ManualClock();
  jwks = new JwksServer();
  jwksUrl = await jwks.start();
  [k1, k2] = await Promise.all([signingKey('k1'), signingKey('k2', 'ES256')]);
  jwks.keys = [k1.jwk];
  app = await startTestApp({ clock });
  admin = await app.adminClient();
  aliceId = await admin.create('/identities', { name: 'alice', type: 'User', isAdmin: false });
});
afterAll(async () => {
  await admin.close();
  await app.stop();
  await jwks.stop();
});

describe('external JWT signers: CRUD', () => {
  it('creates a JWKS signer with defaults; the Client API lists a public view without authentication', async () => {
    const r = await admin.post('/external-jwt-signers', {
      name: 'idp',
      issuer: ISSUER,
      audience: AUDIENCE,
      enabled: true,
      jwksEndpoint: jwksUrl,
      externalAuthUrl: 'https://idp.example.test/authorize',
      clientId: 'weft',
      scopes: ['openid', 'email'],
      tags: { team: 'sec' },
    });
    expect(r.status).toBe(201);
    signerId = r.body.data.id;
    expect(r.body.data._links.self.href).toBe(`./external-jwt-signers/${signerId}`);
    const g = (await admin.get(`/external-jwt-signers/${signerId}`)).body.data;
    expect(g).toMatchObject({
      id: signerId,
      name: 'idp',
      issuer: ISSUER,
      audience: AUDIENCE,
      enabled: true,
      jwksEndpoint: jwksUrl,
      certPem: null,
      kid: '',
      // without a certificate: empty strings and Go's zero time, as OpenZiti (its spec lets none of these be null)
      fingerprint: '',
      commonName: '',
      notBefore: '0001-01-01T00:00:00.000Z',
      notAfter: '0001-01-01T00:00:00.000Z',
      claimsProperty: 'sub',
      useExternalId: false,
      externalAuthUrl: 'https://idp.example.test/authorize',
      clientId: 'weft',
      scopes: ['openid', 'email'],
      targetToken: 'ACCESS',
      enrollToCertEnabled: false,
      enrollToTokenEnabled: false,
      enrollAuthPolicyId: '',
      enrollNameClaimsSelector: '',
      enrollAttributeClaimsSelector: '',
      tags: { team: 'sec' },
    });

    const pub = await app.client().get('/external-jwt-signers', { api: 'client' });
    expect(pub.status).toBe(200);
    expect(pub.body.data).toHaveLength(1);
    expect(pub.body.data[0]).toMatchObject({
      id: signerId,
      name: 'idp',
      audience: AUDIENCE,
      clientId: 'weft',
      externalAuthUrl: 'https://idp.example.test/authorize',
      scopes: ['openid', 'email'],
      targetToken: 'ACCESS',
      enrollToCertEnabled: false,
      enrollToTokenEnabled: false,
      openIdConfigurationUrl: 'https://idp.example.test/.well-known/openid-configuration',
    });
    expect(pub.body.data[0]).not.toHaveProperty('issuer');
    expect(pub.body.data[0]).not.toHaveProperty('jwksEndpoint');
    expect(pub.body.meta.pagination.totalCount).toBe(1);
  });

  it('a certificate signer derives fingerprint, common name and validity; bad input is a field error', async () => {
    const ca = await createRootCa({ commonName: 'Cert Signer', keyAlg: 'EC-P256' });
    const r = await admin.post('/external-jwt-signers', {
      name: 'cert-signer',
      issuer: 'cert-issuer',
      audience: AUDIENCE,
      enabled: true,
      certPem: ca.certPem,
      kid: 'cert-kid',
      claimsProperty: 'email',
      useExternalId: true,
    });
    expect(r.status).toBe(201);
    const g = (await admin.get(`/external-jwt-signers/${r.body.data.id}`)).body.data;
    expect(g).toMatchObject({ commonName: 'Cert Signer', fingerprint: expect.stringMatching(/^[0-9a-f]{40}$/), kid: 'cert-kid', jwksEndpoint: null });
    expect(Date.parse(g.notAfter)).toBeGreaterThan(Date.parse(g.notBefore));

    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await admin.post('/external-jwt-signers', { name: 'x', issuer: 'x-iss', audience: 'a', enabled: true, ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.cause.field).toBe(field);
    };
    await bad({ certPem: ca.certPem, jwksEndpoint: jwksUrl }, 'jwksEndpoint');
    await bad({}, 'certPem');
    await bad({ certPem: 'not a certificate' }, 'certPem');
    await bad({ jwksEndpoint: 'ftp://example.test/keys' }, 'jwksEndpoint');
    await bad({ jwksEndpoint: jwksUrl, issuer: ISSUER }, 'issuer');
    await bad({ jwksEndpoint: jwksUrl, name: 'idp' }, 'name');
    await bad({ jwksEndpoint: jwksUrl, targetToken: 'REFRESH' }, 'targetToken');
    await bad({ jwksEndpoint: jwksUrl, enrollAuthPolicyId: 'nope' }, 'enrollAuthPolicyId');
    const missing = await admin.post('/external-jwt-signers', { name: 'y', jwksEndpoint: jwksUrl });
    expect(missing.status).toBe(400);
    expect((await admin.get('/external-jwt-signers')).body.meta.pagination.totalCount).toBe(2);

    // PATCH switches from certificate to JWKS only when the certificate is cleared too
    const id = r.body.data.id;
    expect((await admin.patch(`/external-jwt-signers/${id}`, { jwksEndpoint: jwksUrl })).status).toBe(400);
    // null leaves certPem alone (OpenZiti's PATCH), '' clears it (as the ziti CLI sends for "none")
    expect((await admin.patch(`/external-jwt-signers/${id}`, { jwksEndpoint: jwksUrl, certPem: null })).status).toBe(400);
    expect((await admin.patch(`/external-jwt-signers/${id}`, { jwksEndpoint: jwksUrl, certPem: '' })).status).toBe(200);
    expect((await admin.get(`/external-jwt-signers/${id}`)).body.data).toMatchObject({
      certPem: null,
      fingerprint: '',
      commonName: '',
      claimsProperty: 'email',
    });
    // PUT resets what it omits
    expect(
      (
        await admin.put(`/external-jwt-signers/${id}`, {
          name: 'cert-signer',
          issuer: 'cert-issuer',
          audience: AUDIENCE,
          enabled: false,
          certPem: ca.certPem,
        })
      ).status,
    ).toBe(200);
    expect((await admin.get(`/external-jwt-signers/${id}`)).body.data).toMatchObject({
      enabled: false,
      claimsProperty: 'sub',
      useExternalId: false,
      kid: '',
      jwksEndpoint: null,
    });
    // disabled signers are not listed publicly
    expect((await app.client().get('/external-jwt-signers', { api: 'client' })).body.data.map((s: any) => s.name)).toEqual(['idp']);
    expect((await admin.del(`/external-jwt-signers/${id}`)).status).toBe(200);
    expect((await admin.get(`/external-jwt-signers/${id}`)).status).toBe(404);
  });

  it('needs the external-jwt-signer permission', async () => {
    await createUser(admin, 'plain-user', 'plain-password');
    const plain = app.client();
    await plain.login('plain-user', 'plain-password');
    expect((await plain.get('/external-jwt-signers')).status).toBe(401);
    expect((await plain.post('/external-jwt-signers', { name: 'z', issuer: 'z', audience: 'z', enabled: true, jwksEndpoint: jwksUrl })).status).toBe(
      401,
    );
    const reader = await admin.create('/identities', {
      name: 'signer-reader',
      type: 'User',
      isAdmin: false,
      permissions: ['external-jwt-signer.read'],
    });
    await admin.create('/authenticators', { method: 'updb', identityId: reader, username: 'signer-reader', password: 'reader-password' });
    const rc = app.client();
    await rc.login('signer-reader', 'reader-password');
    expect((await rc.get('/external-jwt-signers')).status).toBe(200);
    expect((await rc.del(`/external-jwt-signers/${signerId}`)).status).toBe(401);
  });
});

describe('POST /authenticate?method=ext-jwt', () => {
  it('a JWT verified against the JWKS logs the identity named by sub in', async () => {
    const { c, r } = await extJwtLogin(await tokenFor(k1));
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ identityId: aliceId, authenticatorId: signerId, isMfaRequired: false, authQueries: [] });
    expect(r.body.data.token).toMatch(/^[0-9a-f-]{36}$/);
    expect((await c.get('/current-identity', { api: 'client' })).body.data.id).toBe(aliceId);
    expect(jwks.fetches).toBe(1);
    // cached: a second login does not fetch
    expect((await extJwtLogin(await tokenFor(k1))).r.status).toBe(200);
    expect(jwks.fetches).toBe(1);
  });

  it('refuses a wrong audience, an expired or not yet valid token, an unknown issuer, a bad signature, a missing subject', async () => {
    const refused = async (token: string | undefined, why: string) => {
      const { r } = await extJwtLogin(token);
      expect(r.status, why).toBe(401);
      expect(r.body.error.code, why).toBe('INVALID_AUTH');
    };
    await refused(await tokenFor(k1, { aud: 'someone-else' }), 'wrong audience');
    await refused(await tokenFor(k1, { exp: now() - 3600, iat: now() - 7200 }), 'expired');
    await refused(await tokenFor(k1, { nbf: now() + 3600 }), 'not yet valid');
    await refused(await tokenFor(k1, { iss: 'https://unknown.example.test' }), 'unknown issuer');
    await refused(await tokenFor(k1, { sub: 'no-such-identity' }), 'unknown identity');
    await refused(await tokenFor(k1, { sub: undefined }), 'no subject');
    await refused(await tokenFor(k1, { exp: undefined }), 'no exp');
    const forged = { ...(await signingKey('k1')) };
    await refused(await tokenFor(forged), 'signed by another key with a known kid');
    await refused('not.a.jwt', 'garbage');
    await refused(undefined, 'no Authorization header');
    // the clock decides: the same token is refused once the clock passes its exp
    const short = await tokenFor(k1, { exp: now() + 60 });
    expect((await extJwtLogin(short)).r.status).toBe(200);
    clock.advance(2 * MINUTE);
    await refused(short, 'expired by the clock');
  });

  it('rotated keys: an unknown kid refetches the JWKS (at most every few seconds); a stale cache is refreshed', async () => {
    const before = jwks.fetches;
    // the issuer adds k2: a token with the unknown kid refetches (the last fetch is minutes old)
    jwks.keys = [k1.jwk, k2.jwk];
    expect((await extJwtLogin(await tokenFor(k2))).r.status).toBe(200);
    expect(jwks.fetches).toBe(before + 1);
    // an unknown kid right after a fetch does not refetch
    const k3 = await signingKey('k3');
    expect((await extJwtLogin(await tokenFor(k3))).r.status).toBe(401);
    expect(jwks.fetches).toBe(before + 1);
    // the issuer rotates to k2 + k3: after the cooldown the unknown kid refetches; k1 is gone with that fetch
    jwks.keys = [k2.jwk, k3.jwk];
    clock.advance(10_000);
    expect((await extJwtLogin(await tokenFor(k3))).r.status).toBe(200);
    expect(jwks.fetches).toBe(before + 2);
    expect((await extJwtLogin(await tokenFor(k1))).r.status).toBe(401);
    expect(jwks.fetches).toBe(before + 2);
    // the issuer drops k3: a cached set is used for ten minutes at most, then refetched
    jwks.keys = [k2.jwk];
    expect((await extJwtLogin(await tokenFor(k3))).r.status).toBe(200);
    clock.advance(11 * MINUTE);
    expect((await extJwtLogin(await tokenFor(k2))).r.status).toBe(200);
    expect(jwks.fetches).toBe(before + 3);
    expect((await extJwtLogin(await tokenFor(k3))).r.status).toBe(401);
    expect(jwks.fetches).toBe(before + 3);
  });

  it('a signer with useExternalId and a claims property matches identities by externalId', async () => {
    const ca = await createRootCa({ commonName: 'Email Signer', keyAlg: 'EC-P256' });
    await admin.create('/external-jwt-signers', {
      name: 'email-signer',
      issuer: 'email-issuer',
      audience: 'email-aud',
      enabled: true,
      certPem: ca.certPem,
      kid: 'email-kid',
      claimsProperty: 'email',
      useExternalId: true,
    });
    const bob = await admin.create('/identities', { name: 'bob', type: 'User', isAdmin: false, externalId: 'bob@example.test' });
    const key = pemSigningKey('email-kid', 'ES256', ca.keyPem);
    const sign = (claims: Record<string, unknown>) => signJwt(key, { iss: 'email-issuer', aud: 'email-aud', sub: 'ignored', ...claims }, now());
    const ok = await extJwtLogin(await sign({ email: 'bob@example.test' }));
    expect(ok.r.status).toBe(200);
    expect(ok.r.body.data.identityId).toBe(bob);
    expect((await extJwtLogin(await sign({ email: 'nobody@example.test' }))).r.status).toBe(401);
    expect((await extJwtLogin(await sign({ sub: bob }))).r.status).toBe(401);
    // a kid other than the signer's is refused
    expect(
      (await extJwtLogin(await signJwt({ ...key, kid: 'other' }, { iss: 'email-issuer', aud: 'email-aud', email: 'bob@example.test' }, now()))).r
        .status,
    ).toBe(401);
  });

  it('a failing JWKS endpoint refuses logins and is retried only after the cooldown; cached keys keep working', async () => {
    const k4 = await signingKey('k4');
    jwks.status = 500;
    clock.advance(10_000);
    const before = jwks.fetches;
    expect((await extJwtLogin(await tokenFor(k4))).r.status).toBe(401);
    expect((await extJwtLogin(await tokenFor(k4))).r.status).toBe(401);
    expect(jwks.fetches).toBe(before + 1);
    expect((await extJwtLogin(await tokenFor(k2))).r.status).toBe(200); // still cached
    jwks.status = 200;
    jwks.keys = [k2.jwk, k4.jwk];
    clock.advance(10_000);
    expect((await extJwtLogin(await tokenFor(k4))).r.status).toBe(200);
    expect(jwks.fetches).toBe(before + 2);
  });

  it('a disabled signer is refused', async () => {
    expect((await admin.patch(`/external-jwt-signers/${signerId}`, { enabled: false })).status).toBe(200);
    expect((await extJwtLogin(await tokenFor(k2))).r.status).toBe(401);
    expect((await admin.patch(`/external-jwt-signers/${signerId}`, { enabled: true })).status).toBe(200);
    expect((await extJwtLogin(await tokenFor(k2))).r.status).toBe(200);
  });
});
