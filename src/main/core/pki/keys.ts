import { createPrivateKey, createPublicKey, generateKeyPair as generateKeyPairCb, KeyObject } from 'node:crypto';
import { PkiError } from './errors';
import { subtle } from './x509Provider';

/** Key types the controller can generate. EC-P256 is the default everywhere: small and fast. */
export type KeyAlgorithm = 'EC-P256' | 'EC-P384' | 'RSA-2048' | 'RSA-3072' | 'RSA-4096';

export interface KeyPairPem {
  /** PKCS#8 PEM ("PRIVATE KEY"). */
  privateKeyPem: string;
  /** SPKI PEM ("PUBLIC KEY"). */
  publicKeyPem: string;
}

const PEM_OUT = { publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } } as const;
const CURVE_LABELS: Record<string, string> = { prime256v1: 'P256', secp384r1: 'P384', secp521r1: 'P521' };

/** Generates a key pair off the main thread (RSA generation can take a while). */
export function generateKeyPair(alg: KeyAlgorithm = 'EC-P256'): Promise<KeyPairPem> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, publicKeyPem: string, privateKeyPem: string) => (err ? reject(err) : resolve({ privateKeyPem, publicKeyPem }));
    if (alg === 'EC-P256' || alg === 'EC-P384') {
      generateKeyPairCb('ec', { namedCurve: alg === 'EC-P256' ? 'P-256' : 'P-384', ...PEM_OUT }, done);
    } else {
      generateKeyPairCb('rsa', { modulusLength: Number(alg.slice(4)), ...PEM_OUT }, done);
    }
  });
}

/** Parses a private key (PKCS#8, or legacy PKCS#1 / SEC1 PEM). Throws PkiError('INVALID_KEY'). */
export function importPrivateKey(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new PkiError('INVALID_KEY', 'not a valid private key', { cause: err });
  }
}

/** Parses a public key given as SPKI PEM or DER. Throws PkiError('INVALID_KEY'). */
export function importPublicKey(spki: string | Uint8Array): KeyObject {
  try {
    return typeof spki === 'string' ? createPublicKey(spki) : createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
  } catch (err) {
    throw new PkiError('INVALID_KEY', 'not a valid SPKI public key', { cause: err });
  }
}

/** A key as PEM: PKCS#8 for a private key, SPKI for a public one (node:crypto gives PEM as text; its types allow a Buffer). */
export function pemOf(key: KeyObject, type: 'pkcs8' | 'spki'): string {
  const pem = key.export({ type, format: 'pem' });
  return typeof pem === 'string' ? pem : pem.toString('utf8');
}

/** Re-encodes any supported private key PEM as PKCS#8 PEM. */
export function toPkcs8Pem(privateKeyPem: string): string {
  return pemOf(importPrivateKey(privateKeyPem), 'pkcs8');
}

/** SPKI PEM of a private or public key. */
export function publicKeyPemOf(keyPem: string): string {
  const key = keyPem.includes('PRIVATE KEY') ? createPublicKey(importPrivateKey(keyPem)) : importPublicKey(keyPem);
  return pemOf(key, 'spki');
}

/** Label like 'EC-P256', 'EC-P384', 'RSA-2048', 'RSA-PSS-2048' or 'ED25519' (the KeyAlgorithm names where they apply). */
export function keyAlgorithmOf(key: KeyObject | string): string {
  const k = typeof key === 'string' ? (key.includes('PRIVATE KEY') ? importPrivateKey(key) : importPublicKey(key)) : key;
  const details = k.asymmetricKeyDetails ?? {};
  switch (k.asymmetricKeyType) {
    case 'ec':
      return `EC-${CURVE_LABELS[details.namedCurve ?? ''] ?? details.namedCurve ?? 'unknown'}`;
    case 'rsa':
      return `RSA-${details.modulusLength}`;
    case 'rsa-pss':
      return `RSA-PSS-${details.modulusLength}`;
    default:
      return (k.asymmetricKeyType ?? 'unknown').toUpperCase();
  }
}

/** JWS `alg` to use when signing with this private key (e.g. enrollment JWTs signed by the signing CA key). */
export function jwsAlgorithmForKey(privateKeyPem: string): 'ES256' | 'ES384' | 'ES512' | 'RS256' {
  const alg = keyAlgorithmOf(importPrivateKey(privateKeyPem));
  if (alg === 'EC-P256') return 'ES256';
  if (alg === 'EC-P384') return 'ES384';
  if (alg === 'EC-P521') return 'ES512';
  if (alg.startsWith('RSA-') && !alg.startsWith('RSA-PSS')) return 'RS256';
  throw new PkiError('INVALID_KEY', `no JWS algorithm for ${alg} keys`);
}

export interface WebCryptoSigner {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** Signature algorithm for @peculiar/x509 (hash matched to the curve; SHA-256 for RSA). */
  signingAlgorithm: Algorithm | EcdsaParams;
}

/** Imports a private key into WebCrypto for signing certificates and CSRs with @peculiar/x509. */
export async function toWebCryptoSigner(privateKeyPem: string): Promise<WebCryptoSigner> {
  const key = importPrivateKey(privateKeyPem);
  const alg = keyAlgorithmOf(key);
  let importAlg: EcKeyImportParams | RsaHashedImportParams;
  let signingAlgorithm: Algorithm | EcdsaParams;
  if (alg === 'EC-P256' || alg === 'EC-P384') {
    const namedCurve = alg === 'EC-P256' ? 'P-256' : 'P-384';
    importAlg = { name: 'ECDSA', namedCurve };
    signingAlgorithm = { name: 'ECDSA', hash: alg === 'EC-P256' ? 'SHA-256' : 'SHA-384' } as EcdsaParams;
  } else if (/^RSA-\d+$/.test(alg)) {
    importAlg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    signingAlgorithm = { name: 'RSASSA-PKCS1-v1_5' };
  } else {
    throw new PkiError('INVALID_KEY', `unsupported signing key ${alg}`);
  }
  const pkcs8 = key.export({ type: 'pkcs8', format: 'der' });
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  return {
    privateKey: await subtle.importKey('pkcs8', pkcs8, importAlg, false, ['sign']),
    publicKey: await subtle.importKey('spki', spki, importAlg, true, ['verify']),
    signingAlgorithm,
  };
}
