import { createHash, createPrivateKey, createPublicKey, randomUUID, sign } from 'node:crypto';
import type { Core } from '../core';
import { certificateDer } from '../pki/pem';
import { jwsAlgorithmForKey } from '../pki/index';

/** The `em` (enrollment method) values of the JWTs the controller signs. */
export type EnrollmentMethod = 'ott' | 'ottca' | 'updb' | 'erott' | 'trott' | 'ca' | 'network';

export interface EnrollmentClaims {
  em: EnrollmentMethod;
  sub: string;
  jti: string;
  exp?: Date;
  aud?: string[];
}

const HASHES = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512', RS256: 'sha256' } as const;
const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** Signs `data` with the signing CA's key; ECDSA signatures in the JOSE (r||s) form. */
function signWithSigningKey(core: Core, data: string): { alg: keyof typeof HASHES; signature: Buffer } {
  const keyPem = core.pki.signing.keyPem;
  const alg = jwsAlgorithmForKey(keyPem);
  const signature = sign(HASHES[alg], Buffer.from(data), { key: createPrivateKey(keyPem), dsaEncoding: 'ieee-p1363' });
  return { alg, signature };
}

/**
 * An enrollment JWT signed by the controller's signing CA key (synchronous, so it can be issued inside a write
 * transaction). `kid` is the SHA-1 fingerprint of the signing certificate; `iss` and `ctrls` are the API's public URL.
 */
export function signEnrollmentJwt(core: Core, claims: EnrollmentClaims): string {
  const iss = core.config.apiPublicUrl;
  const payload: Record<string, unknown> = {
    em: claims.em,
    iss,
    sub: claims.sub,
    jti: claims.jti,
    iat: Math.floor(core.clock.now().getTime() / 1000),
    ctrls: [iss],
  };
  if (claims.exp) payload.exp = Math.floor(claims.exp.getTime() / 1000);
  if (claims.aud) payload.aud = claims.aud;
  const alg = jwsAlgorithmForKey(core.pki.signing.keyPem);
  const input = `${b64url(JSON.stringify({ alg, kid: core.pki.signingFingerprint, typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}`;
  return `${input}.${b64url(signWithSigningKey(core, input).signature)}`;
}

/** The trust ("network") JWT: lets a client bootstrap trust in this controller before it has an enrollment. */
export function networkJwt(core: Core): string {
  return signEnrollmentJwt(core, { em: 'network', sub: core.config.apiPublicUrl, jti: randomUUID(), aud: ['openziti-enroller'] });
}

/** JWKS of the enrollment signing key (public part only), with its certificate chain in x5c. */
export function enrollmentJwks(core: Core): { keys: Record<string, unknown>[] } {
  const { signing, root } = core.pki;
  const jwk = createPublicKey(signing.certPem).export({ format: 'jwk' }) as Record<string, unknown>;
  const der = certificateDer(signing.certPem);
  return {
    keys: [{
      ...jwk,
      kid: core.pki.signingFingerprint,
      alg: jwsAlgorithmForKey(signing.keyPem),
      use: 'sig',
      key_ops: ['verify'],
      x5c: [der.toString('base64'), certificateDer(root.certPem).toString('base64')],
      x5t: createHash('sha1').update(der).digest('base64url'),
      'x5t#S256': createHash('sha256').update(der).digest('base64url'),
    }],
  };
}

/** Signs a client's nonce with the key named by `kid`: proof that this controller holds the enrollment key. */
export function signNonce(core: Core, nonce: string): { algorithm: string; caPool: string; kid: string; signature: string } {
  const { alg, signature } = signWithSigningKey(core, nonce);
  return { algorithm: alg, caPool: core.pki.caBundlePem, kid: core.pki.signingFingerprint, signature: signature.toString('base64') };
}
