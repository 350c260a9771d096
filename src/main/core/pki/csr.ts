import type { KeyObject } from 'node:crypto';
import { PkiError } from './errors';
import { issueLeafCertificateDetails, type CertAndKey, type CertificateUsage, type IssuedLeaf } from './certificates';
import { generateKeyPair, importPublicKey, keyAlgorithmOf, pemOf, toWebCryptoSigner, type KeyAlgorithm } from './keys';
import { decodePemOrBase64, toPem } from './pem';
import { x509 } from './x509Provider';

export interface SignCsrOptions {
  /** PKCS#10 as PEM, or raw base64 DER without headers; CRLF tolerated. */
  csrPem: string;
  issuer: CertAndKey;
  validityDays: number;
  /** Subject CN of the issued certificate; defaults to the CSR's CN. */
  commonName?: string;
  /** e.g. a SPIFFE id `spiffe://<trust-domain>/identity/<id>`. */
  uriSans?: string[];
  dnsSans?: string[];
  ipSans?: string[];
  usage: CertificateUsage;
  now?: Date;
}

export interface CsrInfo {
  commonName: string;
  /** 'EC-P256', 'RSA-2048', ... */
  publicKeyAlgorithm: string;
  /** SPKI PEM of the requested key. */
  publicKeyPem: string;
  /** the requested key */
  publicKey: KeyObject;
}

const CSR_LABELS = ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'];
const ACCEPTED_EC = new Set(['EC-P256', 'EC-P384']);
const MIN_RSA_BITS = 2048;
const MAX_RSA_BITS = 8192;

/**
 * Parses a CSR and checks it: well formed, an acceptable key (RSA 2048..8192 bits, EC P-256/P-384) and a valid
 * self-signature (proof of possession). Throws PkiError('INVALID_CSR') otherwise.
 */
export async function verifyCsr(csrPem: string): Promise<CsrInfo> {
  const der = decodePemOrBase64(csrPem, CSR_LABELS);
  let csr: x509.Pkcs10CertificateRequest;
  try {
    if (!der) throw new Error('no PEM or base64 data');
    csr = new x509.Pkcs10CertificateRequest(der);
  } catch (err) {
    throw new PkiError('INVALID_CSR', 'CSR is malformed', { cause: err });
  }

  let key: KeyObject;
  try {
    key = importPublicKey(new Uint8Array(csr.publicKey.rawData));
  } catch (err) {
    throw new PkiError('INVALID_CSR', 'CSR public key is malformed', { cause: err });
  }
  const alg = keyAlgorithmOf(key);
  const bits = key.asymmetricKeyType === 'rsa' ? (key.asymmetricKeyDetails?.modulusLength ?? 0) : 0;
  if (!ACCEPTED_EC.has(alg) && !(bits >= MIN_RSA_BITS && bits <= MAX_RSA_BITS)) {
    throw new PkiError('INVALID_CSR', `CSR key ${alg} is not accepted (use EC P-256/P-384 or RSA >= ${MIN_RSA_BITS} bits)`);
  }

  let signatureOk: boolean;
  try {
    signatureOk = await csr.verify();
  } catch (err) {
    throw new PkiError('INVALID_CSR', 'CSR signature could not be verified', { cause: err });
  }
  if (!signatureOk) throw new PkiError('INVALID_CSR', 'CSR signature is invalid');

  return {
    commonName: csr.subjectName.getField('CN')[0] ?? '',
    publicKeyAlgorithm: alg,
    publicKeyPem: pemOf(key, 'spki'),
    publicKey: key,
  };
}

/**
 * Issues a certificate for a verified CSR. Only the CSR's key and (by default) CN are used: other subject fields
 * and any requested extensions are ignored, so SANs come only from the caller.
 */
export async function signCsr(opts: SignCsrOptions): Promise<IssuedLeaf> {
  return certifyCsr(await verifyCsr(opts.csrPem), opts);
}

/** signCsr for a CSR already checked with verifyCsr: its key is certified without parsing and verifying it again. */
export async function certifyCsr(csr: Pick<CsrInfo, 'commonName' | 'publicKey'>, opts: Omit<SignCsrOptions, 'csrPem'>): Promise<IssuedLeaf> {
  const commonName = opts.commonName ?? csr.commonName;
  if (!commonName) throw new PkiError('INVALID_CSR', 'CSR has no common name and none was given');
  return issueLeafCertificateDetails({
    publicKey: csr.publicKey,
    commonName,
    issuer: opts.issuer,
    usage: opts.usage,
    validityDays: opts.validityDays,
    dnsSans: opts.dnsSans,
    ipSans: opts.ipSans,
    uriSans: opts.uriSans,
    now: opts.now,
  });
}

/** Creates a key pair and a CSR for it (tests, and the controller acting as its own client). */
export async function createCsr(opts: {
  keyAlg?: KeyAlgorithm;
  commonName: string;
  /** subject alternative names to request (a server certificate) */
  dnsSans?: string[];
  ipSans?: string[];
}): Promise<{ csrPem: string; keyPem: string }> {
  const keys = await generateKeyPair(opts.keyAlg);
  const signer = await toWebCryptoSigner(keys.privateKeyPem);
  const sans = [
    ...(opts.dnsSans ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(opts.ipSans ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [opts.commonName] }],
    keys: { privateKey: signer.privateKey, publicKey: signer.publicKey },
    signingAlgorithm: signer.signingAlgorithm,
    extensions: sans.length ? [new x509.SubjectAlternativeNameExtension(sans)] : [],
  });
  return { csrPem: toPem(csr.rawData, 'CERTIFICATE REQUEST'), keyPem: keys.privateKeyPem };
}
