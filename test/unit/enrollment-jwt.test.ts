import { randomUUID, verify, X509Certificate } from 'node:crypto';
import { createLocalJWKSet, importX509, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/main/core/core';
import { enrollmentJwks, signEnrollmentJwt, signNonce } from '../../src/main/core/enrollment/jwt';
import { createIntermediateCa, createRootCa, fingerprintSha1, JwtSigner, type KeyAlgorithm } from '../../src/main/core/pki';

/** Just the parts of a core the enrollment JWT code reads. */
async function fakeCore(keyAlg: KeyAlgorithm): Promise<Core> {
  const root = await createRootCa({ commonName: 'root', keyAlg });
  // stands in for the API server certificate, whose key signs the controller's JWTs
  const signing = await createIntermediateCa({ commonName: 'signing', issuer: root, keyAlg });
  const now = new Date('2030-01-02T03:04:05Z');
  return {
    pki: { root, signing, caBundlePem: root.certPem + signing.certPem },
    jwt: new JwtSigner(signing, [root.certPem]),
    config: { apiPublicUrl: 'https://ctrl.example:1280' },
    clock: { now: () => now },
  } as unknown as Core;
}

describe('enrollment JWTs', () => {
  for (const [keyAlg, alg] of [
    ['EC-P256', 'ES256'],
    ['EC-P384', 'ES384'],
    ['RSA-2048', 'RS256'],
  ] as const) {
    it(`are signed with a ${keyAlg} key (${alg}) and verify against the certificate and the JWKS`, async () => {
      const core = await fakeCore(keyAlg);
      const jti = randomUUID();
      const exp = new Date('2030-01-02T06:04:05Z');
      const jwt = signEnrollmentJwt(core, { em: 'ott', sub: 'id-1', jti, exp });
      const currentDate = core.clock.now();
      const { payload, protectedHeader } = await jwtVerify(jwt, await importX509(core.pki.signing.certPem, alg), { currentDate });
      expect(protectedHeader).toEqual({ alg, kid: fingerprintSha1(core.pki.signing.certPem), typ: 'JWT' });
      expect(payload).toEqual({
        em: 'ott',
        iss: 'https://ctrl.example:1280',
        sub: 'id-1',
        jti,
        iat: currentDate.getTime() / 1000,
        exp: exp.getTime() / 1000,
        ctrls: ['https://ctrl.example:1280'],
      });
      const jwks = enrollmentJwks(core);
      expect(jwks.keys[0]).toMatchObject({ kid: fingerprintSha1(core.pki.signing.certPem), alg, use: 'sig' });
      expect(jwks.keys[0]!.d).toBeUndefined();
      await jwtVerify(jwt, createLocalJWKSet(jwks as never), { currentDate });
      // a tampered payload fails
      const [h, , s] = jwt.split('.');
      const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'id-2' })).toString('base64url')}.${s}`;
      await expect(jwtVerify(forged, await importX509(core.pki.signing.certPem, alg), { currentDate })).rejects.toThrow();

      const nonce = randomUUID();
      const signed = signNonce(core, nonce);
      expect(signed.algorithm).toBe(alg);
      const key = new X509Certificate(core.pki.signing.certPem).publicKey;
      const hash = alg === 'ES384' ? 'sha384' : 'sha256';
      expect(verify(hash, Buffer.from(nonce), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signed.signature, 'base64'))).toBe(true);
    });
  }
});
