import { oid, tlv } from './der';
import { PkiError } from './errors';
import { certificateDer, decodePemOrBase64, splitPemBundle, toPem } from './pem';
import { x509 } from './x509Provider';

const OID_SIGNED_DATA = oid('1.2.840.113549.1.7.2');
const OID_DATA = oid('1.2.840.113549.1.7.1');

/**
 * DER of a degenerate ("certs-only") PKCS#7 SignedData, byte-identical to `openssl crl2pkcs7 -nocrl`: version 1,
 * no digest algorithms, no content, the certificates in the given order, no signers. Entries may be bundles.
 */
export function toPkcs7Der(certPems: string[]): Buffer {
  const ders = certPems.flatMap((pem) => (pem.includes('-----BEGIN') ? splitPemBundle(pem) : [pem])).map(certificateDer);
  const signedData = tlv(
    0x30,
    Buffer.from('020101', 'hex'), // version 1
    tlv(0x31), // digestAlgorithms: empty SET
    tlv(0x30, OID_DATA), // encapContentInfo without content
    tlv(0xa0, ...ders), // [0] IMPLICIT certificates
    tlv(0x31), // signerInfos: empty SET
  );
  return tlv(0x30, OID_SIGNED_DATA, tlv(0xa0, signedData));
}

/**
 * Base64 of toPkcs7Der in lines of 64 characters (no newline after the last), byte for byte the body of OpenZiti's
 * `/.well-known/est/cacerts` (application/pkcs7-mime): the C SDK reads it through OpenSSL's line-based base64 decoder,
 * which finds nothing in one long line.
 */
export function toPkcs7Base64(certPems: string[]): string {
  return toPkcs7Der(certPems)
    .toString('base64')
    .replace(/.{64}(?!$)/g, '$&\n');
}

/** Certificates of a PKCS#7 / CMS SignedData given as base64 (whitespace allowed), PEM or DER, as PEM strings. */
export function pkcs7ToPems(input: string | Uint8Array): string[] {
  const der = decodePemOrBase64(input, ['PKCS7', 'CMS']);
  try {
    if (!der) throw new Error('no PEM or base64 data');
    return [...new x509.X509Certificates(der)].map((cert) => toPem(cert.rawData, 'CERTIFICATE'));
  } catch (err) {
    throw new PkiError('INVALID_ARGUMENT', 'not a PKCS#7 SignedData structure', { cause: err });
  }
}
