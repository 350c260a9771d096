import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import type { Core } from '../core';

/** The claims of a session's token, as OpenZiti names them (a "service access" JWT bound to an API session). */
export interface ServiceAccessClaims {
  iss: string;
  sub: string;
  aud: string[];
  jti: string;
  iat: number;
  z_t: 's';
  z_asid: string;
  z_iid: string;
  z_st: string;
}

const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
const HASH = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512', RS256: 'sha256' } as const;
const CURVES: Record<string, keyof typeof HASH> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** The JWS algorithm of a key, read with node:crypto (cheap enough to do per token). */
function algorithmOf(key: KeyObject): keyof typeof HASH {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  const alg = CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''];
  if (!alg) throw new Error(`no JWS algorithm for ${key.asymmetricKeyType} ${key.asymmetricKeyDetails?.namedCurve ?? ''} keys`);
  return alg;
}

/**
 * Signs and verifies session tokens with the controller's signing key (synchronously, so signing can happen inside a
 * transaction). The parsed keys are kept per core: parsing a PEM key costs more than the signature.
 */
export class ServiceAccessTokens {
  private keys?: { privateKey: KeyObject; publicKey: KeyObject; alg: keyof typeof HASH };

  constructor(private readonly core: Core) {}

  private get parsed() {
    if (!this.keys) {
      const privateKey = createPrivateKey(this.core.pki.signing.keyPem);
      this.keys = { privateKey, publicKey: createPublicKey(this.core.pki.signing.certPem), alg: algorithmOf(privateKey) };
    }
    return this.keys;
  }

  sign(claims: Omit<ServiceAccessClaims, 'iss' | 'aud' | 'z_t'>): string {
    const { privateKey, alg } = this.parsed;
    const body = `${b64({ alg, typ: 'JWT', kid: this.core.pki.signingFingerprint })}.${b64({ iss: this.core.config.apiPublicUrl, aud: ['openziti'], z_t: 's', ...claims })}`;
    const signature = sign(HASH[alg], Buffer.from(body), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    return `${body}.${signature.toString('base64url')}`;
  }

  /** The claims of a valid token of ours, or undefined. */
  verify(token: string): ServiceAccessClaims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    try {
      const { publicKey, alg } = this.parsed;
      const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()) as { alg?: string };
      if (header.alg !== alg) return undefined;
      const ok = verify(HASH[alg], Buffer.from(`${parts[0]}.${parts[1]}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(parts[2]!, 'base64url'));
      if (!ok) return undefined;
      const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as ServiceAccessClaims;
      return claims.z_t === 's' && Array.isArray(claims.aud) && claims.aud.includes('openziti') ? claims : undefined;
    } catch {
      return undefined;
    }
  }
}
