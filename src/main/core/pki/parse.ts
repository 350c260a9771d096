import { X509Certificate as NodeX509 } from 'node:crypto';
import { PkiError } from './errors';
import { keyAlgorithmOf } from './keys';
import { certificateDer, fingerprintSha1 } from './pem';
import { x509 } from './x509Provider';

export interface CertificateInfo {
  subjectCN: string;
  /** RFC 4514 string, e.g. "CN=Weft Root CA, O=Weft". */
  subject: string;
  issuerCN: string;
  issuer: string;
  /** Lowercase hex. */
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  isCa: boolean;
  /** basicConstraints pathLenConstraint, when set. */
  pathLength?: number;
  /** fingerprintSha1 of the DER. */
  fingerprint: string;
  uris: string[];
  dnsNames: string[];
  ipAddresses: string[];
  /** e.g. 'EC-P256', 'RSA-2048' (see keyAlgorithmOf). */
  publicKeyAlgorithm: string;
  der: Buffer;
}

/** Parses a certificate given as PEM (first certificate block), base64 or DER. Throws PkiError('INVALID_CERTIFICATE'). */
export function parseCertificate(pemOrDer: string | Uint8Array): CertificateInfo {
  const der = certificateDer(pemOrDer);
  try {
    return describe(new x509.X509Certificate(der), new NodeX509(der), der);
  } catch (err) {
    throw new PkiError('INVALID_CERTIFICATE', 'not a valid X.509 certificate', { cause: err });
  }
}

function describe(cert: x509.X509Certificate, nodeCert: NodeX509, der: Buffer<ArrayBuffer>): CertificateInfo {
  const constraints = cert.getExtension(x509.BasicConstraintsExtension);
  const sans = cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? [];
  const sanValues = (type: x509.JsonGeneralName['type']) => sans.filter((n) => n.type === type).map((n) => n.value);
  return {
    subjectCN: cert.subjectName.getField('CN')[0] ?? '',
    subject: cert.subject,
    issuerCN: cert.issuerName.getField('CN')[0] ?? '',
    issuer: cert.issuer,
    serialNumber: cert.serialNumber.toLowerCase(),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    isCa: constraints?.ca ?? false,
    pathLength: constraints?.ca ? constraints.pathLength : undefined,
    fingerprint: fingerprintSha1(der),
    uris: sanValues('url'),
    dnsNames: sanValues('dns'),
    ipAddresses: sanValues('ip'),
    publicKeyAlgorithm: keyAlgorithmOf(nodeCert.publicKey),
    der,
  };
}
