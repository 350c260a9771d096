import { createHash } from 'node:crypto';
import { PkiError } from './errors';

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
const BASE64 = /^[A-Za-z0-9+/=_-]+$/;

/** Encodes DER bytes as a PEM block (64-column base64, LF line endings, trailing newline). */
export function toPem(der: Uint8Array | ArrayBuffer, label: string): string {
  const b64 = Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der).toString('base64');
  return `-----BEGIN ${label}-----\n${b64.replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`;
}

/**
 * DER bytes from the first PEM block whose label is in `labels`, or from raw base64 (no headers) or raw DER.
 * Whitespace and CRLF line endings are tolerated. Returns null if nothing decodable was found.
 */
export function decodePemOrBase64(input: string | Uint8Array, labels: readonly string[]): Buffer<ArrayBuffer> | null {
  if (typeof input !== 'string') return input.length > 0 ? Buffer.from(input) : null;
  if (input.includes('-----BEGIN ')) {
    for (const [, label, body] of input.matchAll(PEM_BLOCK)) {
      if (labels.includes(label)) return decodeBase64(body);
    }
    return null;
  }
  return decodeBase64(input);
}

function decodeBase64(text: string): Buffer<ArrayBuffer> | null {
  const compact = text.replace(/\s+/g, '');
  if (!compact || !BASE64.test(compact)) return null;
  const der = Buffer.from(compact, 'base64');
  return der.length > 0 ? der : null;
}

/** DER of a certificate given as PEM, base64 or DER; throws PkiError('INVALID_CERTIFICATE') otherwise. */
export function certificateDer(pemOrDer: string | Uint8Array): Buffer<ArrayBuffer> {
  const der = decodePemOrBase64(pemOrDer, ['CERTIFICATE']);
  if (!der) throw new PkiError('INVALID_CERTIFICATE', 'not a PEM or DER certificate');
  return der;
}

/** Splits text containing any number of PEM certificates into normalised individual PEM certificates. */
export function splitPemBundle(text: string): string[] {
  const certs: string[] = [];
  for (const [, label, body] of text.matchAll(PEM_BLOCK)) {
    const der = label === 'CERTIFICATE' ? decodeBase64(body) : null;
    if (der) certs.push(toPem(der, 'CERTIFICATE'));
  }
  return certs;
}

/** Lowercase hex SHA-1 of the certificate's DER, without colons: how OpenZiti identifies certificates. */
export function fingerprintSha1(pemOrDer: string | Uint8Array): string {
  return createHash('sha1').update(certificateDer(pemOrDer)).digest('hex');
}

/** The TLS client certificate chain of a request as PEM (leaf first). */
export function peerPems(ders: Buffer[]): string[] {
  return ders.map((d) => toPem(d, 'CERTIFICATE'));
}
