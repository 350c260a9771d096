import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { children, DerError, expectTlv, oidText, stringValue, TAG, value, whole, type Tlv } from './der';
import { PkiError } from './errors';
import { issueLeafCertificateDetails, type CertAndKey, type CertificateUsage, type IssuedLeaf } from './certificates';
import { generateKeyPair, importPublicKey, keyAlgorithmOf, toWebCryptoSigner, type KeyAlgorithm } from './keys';
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
  /** its SubjectPublicKeyInfo, DER (as the key exports it) */
  spki: Buffer;
}

const CSR_LABELS = ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'];
const ACCEPTED_EC = new Set(['EC-P256', 'EC-P384']);
const MIN_RSA_BITS = 2048;
const MAX_RSA_BITS = 8192;

/**
 * Parses a CSR and checks it: well formed, an acceptable key (RSA 2048..8192 bits, EC P-256/P-384) and a valid
 * self-signature (proof of possession). Throws PkiError('INVALID_CSR') otherwise. Read with a small DER reader
 * and checked with node:crypto directly: this runs once per enrollment.
 */
export async function verifyCsr(csrPem: string): Promise<CsrInfo> {
  const der = decodePemOrBase64(csrPem, CSR_LABELS);
  let csr: CsrParts;
  try {
    if (!der) throw new Error('no PEM or base64 data');
    csr = readCsr(der);
  } catch (err) {
    throw new PkiError('INVALID_CSR', 'CSR is malformed', { cause: err });
  }

  let key: KeyObject;
  let spki: Buffer;
  try {
    ({ key, spki } = importCsrKey(csr.spki));
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
    signatureOk = checkSignature(csr, key);
  } catch (err) {
    throw new PkiError('INVALID_CSR', 'CSR signature could not be verified', { cause: err });
  }
  if (!signatureOk) throw new PkiError('INVALID_CSR', 'CSR signature is invalid');

  return {
    commonName: csr.commonName,
    publicKeyAlgorithm: alg,
    publicKeyPem: toPem(spki, 'PUBLIC KEY'),
    publicKey: key,
    spki,
  };
}

/** SPKI prefixes of EC P-256/P-384 keys with an uncompressed point, as node:crypto exports them. */
const EC_SPKI = [
  { crv: 'P-256', prefix: Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex'), size: 32 },
  { crv: 'P-384', prefix: Buffer.from('3076301006072a8648ce3d020106052b81040022036200', 'hex'), size: 48 },
];

/**
 * The CSR's key and its SPKI as the key exports it. An EC P-256/P-384 key in the usual encoding is imported from its
 * coordinates (OpenSSL checks the point is on the curve), which costs a third of decoding the DER and needs no
 * export afterwards; any other key goes through the DER decoder and is exported again.
 */
function importCsrKey(der: Buffer): { key: KeyObject; spki: Buffer } {
  for (const { crv, prefix, size } of EC_SPKI) {
    if (der.length === prefix.length + 1 + 2 * size && der.subarray(0, prefix.length).equals(prefix) && der[prefix.length] === 0x04) {
      const point = der.subarray(prefix.length + 1);
      const x = point.subarray(0, size).toString('base64url');
      const y = point.subarray(size).toString('base64url');
      try {
        return { key: createPublicKey({ key: { kty: 'EC', crv, x, y }, format: 'jwk' }), spki: Buffer.from(der) };
      } catch (err) {
        throw new PkiError('INVALID_KEY', 'not a valid SPKI public key', { cause: err });
      }
    }
  }
  const key = importPublicKey(der);
  return { key, spki: key.export({ type: 'spki', format: 'der' }) };
}

/** What verifyCsr needs of a CertificationRequest (RFC 2986). */
interface CsrParts {
  /** the DER of certificationRequestInfo: what the signature covers */
  signed: Buffer;
  /** the first CN of the subject, '' without one */
  commonName: string;
  spki: Buffer;
  signatureAlgorithm: string;
  /** the AlgorithmIdentifier's parameters, if any */
  signatureParams?: Tlv;
  signature: Buffer;
}

const OID_CN = '2.5.4.3';

function readCsr(der: Buffer): CsrParts {
  // bytes after the CertificationRequest are ignored, as they always were
  const outer = expectTlv(der, 0, der.length, TAG.SEQUENCE, 'CertificationRequest');
  const [info, sigAlg, sig, ...extra] = children(outer);
  if (!info || !sigAlg || !sig || extra.length) throw new DerError('CertificationRequest needs 3 elements');
  if (info.tag !== TAG.SEQUENCE || sigAlg.tag !== TAG.SEQUENCE || sig.tag !== TAG.BIT_STRING)
    throw new DerError('CertificationRequest: unexpected element');
  const [version, subject, spki, attributes, ...more] = children(info);
  if (!version || !subject || !spki || more.length) throw new DerError('CertificationRequestInfo needs 4 elements');
  if (version.tag !== TAG.INTEGER || subject.tag !== TAG.SEQUENCE || spki.tag !== TAG.SEQUENCE)
    throw new DerError('CertificationRequestInfo: unexpected element');
  if (attributes && attributes.tag !== 0xa0) throw new DerError('CertificationRequestInfo: attributes must be [0]');
  const [algId, algParams, ...algMore] = children(sigAlg);
  if (!algId || algMore.length) throw new DerError('malformed signature AlgorithmIdentifier');
  const sigBytes = value(sig);
  if (!sigBytes.length || sigBytes[0] !== 0) throw new DerError('signature BIT STRING must have no unused bits');
  return {
    signed: whole(info),
    commonName: firstCommonName(subject),
    spki: whole(spki),
    signatureAlgorithm: oidText(algId),
    signatureParams: algParams && algParams.tag !== TAG.NULL ? algParams : undefined,
    signature: sigBytes.subarray(1),
  };
}

function firstCommonName(name: Tlv): string {
  for (const rdn of children(name)) {
    if (rdn.tag !== TAG.SET) throw new DerError('malformed RelativeDistinguishedName');
    for (const atv of children(rdn)) {
      const [type, val] = atv.tag === TAG.SEQUENCE ? children(atv) : [];
      if (!type || !val) throw new DerError('malformed AttributeTypeAndValue');
      if (oidText(type) === OID_CN) return stringValue(val);
    }
  }
  return '';
}

/** Signature algorithms a CSR may be signed with: the digest, and which key type signs with it. */
const SIGNATURE_ALGORITHMS: Record<string, { hash: string; key: 'ec' | 'rsa' }> = {
  '1.2.840.10045.4.1': { hash: 'sha1', key: 'ec' },
  '1.2.840.10045.4.3.2': { hash: 'sha256', key: 'ec' },
  '1.2.840.10045.4.3.3': { hash: 'sha384', key: 'ec' },
  '1.2.840.10045.4.3.4': { hash: 'sha512', key: 'ec' },
  '1.2.840.113549.1.1.5': { hash: 'sha1', key: 'rsa' },
  '1.2.840.113549.1.1.11': { hash: 'sha256', key: 'rsa' },
  '1.2.840.113549.1.1.12': { hash: 'sha384', key: 'rsa' },
  '1.2.840.113549.1.1.13': { hash: 'sha512', key: 'rsa' },
};
const OID_RSASSA_PSS = '1.2.840.113549.1.1.10';
const HASH_OIDS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** True when the signature is valid; throws when it cannot be checked (an unknown algorithm, the wrong key type). */
function checkSignature(csr: CsrParts, key: KeyObject): boolean {
  if (csr.signatureAlgorithm === OID_RSASSA_PSS) {
    if (key.asymmetricKeyType !== 'rsa') throw new Error('RSASSA-PSS needs an RSA key');
    const { hash, saltLength } = pssParams(csr.signatureParams);
    return verify(hash, csr.signed, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }, csr.signature);
  }
  const alg = SIGNATURE_ALGORITHMS[csr.signatureAlgorithm];
  if (!alg) throw new Error(`unsupported signature algorithm ${csr.signatureAlgorithm}`);
  if (alg.key !== key.asymmetricKeyType) throw new Error(`a ${key.asymmetricKeyType} key cannot check a ${csr.signatureAlgorithm} signature`);
  return verify(alg.hash, csr.signed, key, csr.signature);
}

/** RSASSA-PSS-params (RFC 4055): hashAlgorithm [0] (default SHA-1), saltLength [2] (default 20). */
function pssParams(params: Tlv | undefined): { hash: string; saltLength: number } {
  let hash = 'sha1';
  let saltLength = 20;
  if (params) {
    if (params.tag !== TAG.SEQUENCE) throw new DerError('malformed RSASSA-PSS parameters');
    for (const field of children(params)) {
      const [inner] = children(field);
      if (!inner) throw new DerError('malformed RSASSA-PSS parameters');
      if (field.tag === 0xa0) {
        const [id] = children(inner);
        const name = id && HASH_OIDS[oidText(id)];
        if (!name) throw new Error('unsupported RSASSA-PSS hash');
        hash = name;
      } else if (field.tag === 0xa2) {
        if (inner.tag !== TAG.INTEGER || inner.end - inner.valueStart > 4) throw new DerError('malformed RSASSA-PSS salt length');
        saltLength = value(inner).readUIntBE(0, inner.end - inner.valueStart);
      }
    }
  }
  return { hash, saltLength };
}

/**
 * Issues a certificate for a verified CSR. Only the CSR's key and (by default) CN are used: other subject fields
 * and any requested extensions are ignored, so SANs come only from the caller.
 */
export async function signCsr(opts: SignCsrOptions): Promise<IssuedLeaf> {
  return certifyCsr(await verifyCsr(opts.csrPem), opts);
}

/** signCsr for a CSR already checked with verifyCsr: its key is certified without parsing and verifying it again. */
export async function certifyCsr(
  csr: Pick<CsrInfo, 'commonName' | 'publicKey'> & { spki?: Buffer },
  opts: Omit<SignCsrOptions, 'csrPem'>,
): Promise<IssuedLeaf> {
  const commonName = opts.commonName ?? csr.commonName;
  if (!commonName) throw new PkiError('INVALID_CSR', 'CSR has no common name and none was given');
  return issueLeafCertificateDetails({
    publicKey: csr.publicKey,
    publicKeyDer: csr.spki,
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
