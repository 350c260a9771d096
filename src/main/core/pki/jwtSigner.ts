import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import type { CertAndKey } from './certificates';
import { importPrivateKey, jwsAlgorithmForKey } from './keys';
import { certificateDer, fingerprintSha1 } from './pem';

const HASHES = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512', RS256: 'sha256' } as const;
type Alg = keyof typeof HASHES;
const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/**
 * Signs and verifies the controller's own JWTs (enrollment, TOTP and service access tokens) with the key of the
 * API's TLS server certificate, as OpenZiti does: SDKs verify an enrollment JWT with the public key of the
 * certificate the issuer URL presents. `kid` is that certificate's SHA-1 fingerprint. Synchronous, so tokens can
 * be issued inside a write transaction.
 */
export class JwtSigner {
  readonly kid: string;
  /** `kid` and the fingerprints of the retired certificates of the same key: tokens naming any of them verify. */
  readonly kids: ReadonlySet<string>;
  readonly alg: Alg;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  /** `pair` signs; `chain` (issuers, leaf excluded) goes into the JWKS x5c; `retired`: earlier certificates of the key. */
  constructor(
    private readonly pair: CertAndKey,
    private readonly chain: string[],
    private readonly retired: string[] = [],
  ) {
    this.kid = fingerprintSha1(pair.certPem);
    this.kids = new Set([this.kid, ...retired.map((pem) => fingerprintSha1(pem))]);
    this.alg = jwsAlgorithmForKey(pair.keyPem);
    this.privateKey = importPrivateKey(pair.keyPem);
    this.publicKey = createPublicKey(pair.certPem);
  }

  /** Raw JWS signature of `data` (ECDSA in the JOSE r||s form). */
  signBytes(data: string | Buffer): Buffer {
    return sign(HASHES[this.alg], Buffer.from(data), { key: this.privateKey, dsaEncoding: 'ieee-p1363' });
  }

  sign(payload: object, header: object = { typ: 'JWT' }): string {
    const input = `${b64url(JSON.stringify({ alg: this.alg, kid: this.kid, ...header }))}.${b64url(JSON.stringify(payload))}`;
    return `${input}.${b64url(this.signBytes(input))}`;
  }

  /** The payload of a token this signer made (signature and algorithm checked, nothing else), or undefined. */
  verify(token: string): Record<string, unknown> | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    try {
      const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()) as { alg?: string };
      if (header.alg !== this.alg) return undefined;
      const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
      const ok = verify(HASHES[this.alg], signed, { key: this.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(parts[2]!, 'base64url'));
      if (!ok) return undefined;
      const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as unknown;
      return payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The certificates of the key, current first: each names a `kid` tokens may carry. */
  certificatePems(): string[] {
    return [this.pair.certPem, ...this.retired];
  }

  /** The public key verifying tokens that name `kid` (this key's current or a retired certificate), or undefined. */
  keyFor(kid: string): KeyObject | undefined {
    return this.kids.has(kid) ? this.publicKey : undefined;
  }

  /** The public key as JWKs: one with the current certificate chain, then one per retired certificate. */
  jwks(): Array<Record<string, unknown>> {
    return [this.jwk(), ...this.retired.map((pem) => this.jwk(pem))];
  }

  /** The public key as a JWK with its certificate chain. */
  jwk(certPem = this.pair.certPem): Record<string, unknown> {
    const der = certificateDer(certPem);
    return {
      ...(this.publicKey.export({ format: 'jwk' }) as Record<string, unknown>),
      kid: fingerprintSha1(der),
      alg: this.alg,
      use: 'sig',
      key_ops: ['verify'],
      x5c: [der, ...this.chain.map((pem) => certificateDer(pem))].map((d) => d.toString('base64')),
      x5t: createHash('sha1').update(der).digest('base64url'),
      'x5t#S256': createHash('sha256').update(der).digest('base64url'),
    };
  }
}
