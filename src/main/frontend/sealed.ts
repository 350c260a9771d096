import { CompactEncrypt, compactDecrypt, errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';

// A sealed token is a JWT signed with HS256 and then encrypted (dir + A256GCM): the signature
// binds the claims to signing_key, the encryption hides them (refresh tokens, PKCE verifiers).

export interface SealKeys {
  signing: Uint8Array;
  encryption: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export async function seal(claims: JWTPayload, keys: SealKeys, typ: string, nowMs: number, expiresAtSec: number): Promise<string> {
  const jws = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ })
    .setIssuedAt(Math.floor(nowMs / 1000))
    .setExpirationTime(expiresAtSec)
    .sign(keys.signing);
  return new CompactEncrypt(encoder.encode(jws)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', cty: 'JWT', typ }).encrypt(keys.encryption);
}

export type UnsealResult<T> = { ok: true; claims: T } | { ok: false; expired: boolean; claims?: T };

/**
 * Opens a sealed token. An expired token whose signature is valid returns its (authentic) claims
 * with `expired: true`, so callers can offer a retry link or clear a stale session.
 */
export async function unseal<T extends JWTPayload>(token: string, keys: SealKeys, typ: string, nowMs: number): Promise<UnsealResult<T>> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 8192) return { ok: false, expired: false };
  try {
    const { plaintext, protectedHeader } = await compactDecrypt(token, keys.encryption, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
    if (protectedHeader.typ !== typ) return { ok: false, expired: false };
    const { payload } = await jwtVerify(decoder.decode(plaintext), keys.signing, {
      algorithms: ['HS256'],
      typ,
      currentDate: new Date(nowMs),
      requiredClaims: ['exp', 'iat'],
    });
    return { ok: true, claims: payload as T };
  } catch (err) {
    if (err instanceof errors.JWTExpired) return { ok: false, expired: true, claims: err.payload as T };
    return { ok: false, expired: false };
  }
}
