import { KeyObject, randomBytes, X509Certificate as NodeX509 } from 'node:crypto';
import { isIP } from 'node:net';
import { PkiError } from './errors';
import {
  generateKeyPair,
  importPrivateKey,
  importPublicKey,
  keyAlgorithmOf,
  publicKeyPemOf,
  toWebCryptoSigner,
  type KeyAlgorithm,
  type WebCryptoSigner,
} from './keys';
import { leafIssuer, writeLeafCertificate, type CertificateUsage, type LeafIssuer } from './leafCertificate';
import { certificateDer, fingerprintSha1, toPem } from './pem';
import { x509 } from './x509Provider';

const DAY_MS = 86_400_000;
/** Certificates start slightly in the past so peers with a lagging clock accept them. */
const CLOCK_SKEW_MS = 5 * 60_000;

export interface CertAndKey {
  certPem: string;
  /** PKCS#8 PEM. */
  keyPem: string;
}

export type { CertificateUsage };

interface TimingOptions {
  validityDays?: number;
  /** Reference time (default: now). notBefore = now - 5 min; notAfter = notBefore + validityDays. */
  now?: Date;
}

export interface CreateRootCaOptions extends TimingOptions {
  commonName: string;
  organization?: string;
  keyAlg?: KeyAlgorithm;
  /** Max CA certificates below this one (default 1: root -> intermediate -> leaf). */
  pathLength?: number;
  uriSans?: string[];
}

export interface CreateIntermediateCaOptions extends CreateRootCaOptions {
  issuer: CertAndKey;
}

export interface CreateServerCertificateOptions extends TimingOptions {
  commonName: string;
  issuer: CertAndKey;
  dnsNames?: string[];
  ipAddresses?: string[];
  keyAlg?: KeyAlgorithm;
  /** Also allow the certificate as a TLS client certificate (default false). */
  clientAuth?: boolean;
  /** Certify this existing private key (PKCS#8 PEM) instead of a fresh one: a renewal that keeps the key. */
  keyPem?: string;
}

export interface IssueLeafCertificateOptions extends TimingOptions {
  /** Subject public key, SPKI PEM or DER (or imported already). */
  publicKey: string | Uint8Array | KeyObject;
  /** the same key's SPKI DER as it exports it, when the caller has it already (saves exporting it again) */
  publicKeyDer?: Buffer;
  commonName: string;
  issuer: CertAndKey;
  usage: CertificateUsage;
  validityDays: number;
  dnsSans?: string[];
  ipSans?: string[];
  uriSans?: string[];
}

interface BuildParams extends TimingOptions {
  subject: x509.JsonName;
  /** the subject's public key */
  subjectKey: KeyObject;
  /** Absent for a self-signed certificate, whose signer is then `selfKeyPem`. */
  issuer?: CertAndKey;
  selfKeyPem?: string;
  ca?: { pathLength?: number };
  usage?: CertificateUsage;
  sans?: { dns?: string[]; ip?: string[]; uri?: string[] };
  validityDays: number;
}

export async function createRootCa(opts: CreateRootCaOptions): Promise<CertAndKey> {
  const keys = await generateKeyPair(opts.keyAlg);
  const certPem = await buildCertificate({
    ...opts,
    subject: subjectName(opts.commonName, opts.organization),
    subjectKey: subjectKeyOf(keys.publicKeyPem),
    selfKeyPem: keys.privateKeyPem,
    ca: { pathLength: opts.pathLength ?? 1 },
    sans: { uri: opts.uriSans },
    validityDays: opts.validityDays ?? 3650,
  });
  return { certPem, keyPem: keys.privateKeyPem };
}

export async function createIntermediateCa(opts: CreateIntermediateCaOptions): Promise<CertAndKey> {
  const keys = await generateKeyPair(opts.keyAlg);
  const certPem = await buildCertificate({
    ...opts,
    subject: subjectName(opts.commonName, opts.organization),
    subjectKey: subjectKeyOf(keys.publicKeyPem),
    ca: { pathLength: opts.pathLength ?? 0 },
    sans: { uri: opts.uriSans },
    validityDays: opts.validityDays ?? 3650,
  });
  return { certPem, keyPem: keys.privateKeyPem };
}

/** TLS server certificate (serverAuth) with a fresh key and the given DNS / IP SANs. */
export async function createServerCertificate(opts: CreateServerCertificateOptions): Promise<CertAndKey> {
  const keys = opts.keyPem ? { publicKeyPem: publicKeyPemOf(opts.keyPem), privateKeyPem: opts.keyPem } : await generateKeyPair(opts.keyAlg);
  const certPem = await buildCertificate({
    ...opts,
    subject: subjectName(opts.commonName),
    subjectKey: subjectKeyOf(keys.publicKeyPem),
    usage: opts.clientAuth ? 'client-server' : 'server',
    sans: { dns: opts.dnsNames, ip: opts.ipAddresses },
    validityDays: opts.validityDays ?? 365,
  });
  return { certPem, keyPem: keys.privateKeyPem };
}

/** Issues an end-entity certificate for an existing public key (signCsr builds on this). Returns the PEM. */
export async function issueLeafCertificate(opts: IssueLeafCertificateOptions): Promise<string> {
  return (await issueLeafCertificateDetails(opts)).certPem;
}

/** A new end-entity certificate with what callers record of it. */
export interface IssuedLeaf {
  certPem: string;
  fingerprint: string;
  subject: string;
  notBefore: Date;
  notAfter: Date;
}

/**
 * issueLeafCertificate, with what callers record of the new certificate (no parsing it again). Written with a small
 * DER writer and signed with node:crypto directly (enrollment issues one per request); the certificate has the same
 * fields and extensions as the CA and server certificates @peculiar/x509 builds (see leafCertificate.ts).
 */
export async function issueLeafCertificateDetails(opts: IssueLeafCertificateOptions): Promise<IssuedLeaf> {
  subjectName(opts.commonName);
  const subjectKey = subjectKeyOf(opts.publicKey);
  const issuer = await issuerMaterial(opts.issuer);
  const notBefore = new Date(Math.floor(((opts.now ?? new Date()).getTime() - CLOCK_SKEW_MS) / 1000) * 1000);
  let notAfter = new Date(notBefore.getTime() + opts.validityDays * DAY_MS);
  if (notAfter > issuer.cert.notAfter) notAfter = issuer.cert.notAfter;
  notAfter = new Date(Math.floor(notAfter.getTime() / 1000) * 1000);
  const leaf = writeLeafCertificate({
    serial: Buffer.from(randomSerial(), 'hex'),
    issuer: issuer.leafSigner,
    commonName: opts.commonName,
    notBefore,
    notAfter,
    spki: opts.publicKeyDer ?? subjectKey.export({ type: 'spki', format: 'der' }),
    rsaKey: keyAlgorithmOf(subjectKey).startsWith('RSA'),
    usage: opts.usage,
    sans: { dns: opts.dnsSans, ip: opts.ipSans, uri: opts.uriSans },
  });
  return { certPem: toPem(leaf.der, 'CERTIFICATE'), fingerprint: fingerprintSha1(leaf.der), subject: leaf.subject, notBefore, notAfter };
}

function subjectName(commonName: string, organization?: string): x509.JsonName {
  if (!commonName) throw new PkiError('INVALID_ARGUMENT', 'a common name is required');
  return organization ? [{ CN: [commonName] }, { O: [organization] }] : [{ CN: [commonName] }];
}

function subjectKeyOf(publicKey: string | Uint8Array | KeyObject): KeyObject {
  return publicKey instanceof KeyObject ? publicKey : importPublicKey(publicKey);
}

async function buildCertificate(p: BuildParams): Promise<string> {
  return toPem((await buildX509(p)).rawData, 'CERTIFICATE');
}

/** What signing with an issuer needs: its checked certificate, its key in WebCrypto and its key id. */
interface IssuerMaterial {
  cert: x509.X509Certificate;
  signer: WebCryptoSigner;
  keyId: string;
  /** the same issuer for writeLeafCertificate */
  leafSigner: LeafIssuer;
}

/**
 * Issuers already checked and imported, by certificate and key (both immutable text): issuing many certificates with
 * one CA (enrollment bursts) parses its certificate, checks its key and imports it into WebCrypto once. A few
 * entries: the controller's CAs, and renewed ones while the old ones are still in use.
 */
const issuers = new Map<string, Promise<IssuerMaterial>>();
const MAX_ISSUERS = 8;

function issuerMaterial(issuer: CertAndKey): Promise<IssuerMaterial> {
  const key = `${issuer.certPem}\0${issuer.keyPem}`;
  let material = issuers.get(key);
  if (!material) {
    const cert = checkedIssuer(issuer);
    material = (async () => {
      const signer = await toWebCryptoSigner(issuer.keyPem);
      const keyId =
        cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId ?? (await x509.SubjectKeyIdentifierExtension.create(cert.publicKey)).keyId;
      const leafSigner = leafIssuer(importPrivateKey(issuer.keyPem), Buffer.from(cert.subjectName.toArrayBuffer()), Buffer.from(keyId, 'hex'));
      return { cert, signer, keyId, leafSigner };
    })();
    if (issuers.size >= MAX_ISSUERS) issuers.delete(issuers.keys().next().value!);
    issuers.set(key, material);
    material.catch(() => issuers.delete(key));
  }
  return material;
}

async function buildX509(p: BuildParams): Promise<x509.X509Certificate> {
  const issuer = p.issuer ? await issuerMaterial(p.issuer) : undefined;
  const issuerCert = issuer?.cert;
  const signer = issuer?.signer ?? (await toWebCryptoSigner(p.selfKeyPem!));

  const notBefore = new Date(Math.floor(((p.now ?? new Date()).getTime() - CLOCK_SKEW_MS) / 1000) * 1000);
  let notAfter = new Date(notBefore.getTime() + p.validityDays * DAY_MS);
  // A certificate cannot usefully outlive its issuer.
  if (issuerCert && notAfter > issuerCert.notAfter) notAfter = issuerCert.notAfter;

  const publicKey = new x509.PublicKey(new Uint8Array(p.subjectKey.export({ type: 'spki', format: 'der' })));
  const ski = await x509.SubjectKeyIdentifierExtension.create(publicKey);
  const akiKeyId = issuer ? issuer.keyId : ski.keyId;

  const extensions: x509.Extension[] = [ski, new x509.AuthorityKeyIdentifierExtension(akiKeyId)];
  if (p.ca) {
    const { KeyUsageFlags: F } = x509;
    extensions.push(
      new x509.BasicConstraintsExtension(true, p.ca.pathLength, true),
      // digitalSignature too: the signing CA's key also signs enrollment JWTs.
      new x509.KeyUsagesExtension(F.keyCertSign | F.cRLSign | F.digitalSignature, true),
    );
  } else {
    const usage = p.usage ?? 'client';
    const rsa = keyAlgorithmOf(p.subjectKey).startsWith('RSA');
    const { KeyUsageFlags: F, ExtendedKeyUsage: E } = x509;
    extensions.push(
      new x509.BasicConstraintsExtension(false, undefined, true),
      // keyEncipherment only means something for RSA key transport.
      new x509.KeyUsagesExtension(rsa ? F.digitalSignature | F.keyEncipherment : F.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(usage === 'server' ? [E.serverAuth] : usage === 'client' ? [E.clientAuth] : [E.serverAuth, E.clientAuth]),
    );
  }
  const sans = sanList(p.sans);
  if (sans.length) extensions.push(new x509.SubjectAlternativeNameExtension(sans));

  const subject = new x509.Name(p.subject);
  return x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject,
    // The issuer's own parsed subject, so the issuer name matches it exactly.
    issuer: issuerCert ? issuerCert.subjectName : subject,
    notBefore,
    notAfter,
    publicKey,
    signingKey: signer.privateKey,
    signingAlgorithm: signer.signingAlgorithm,
    extensions,
  });
}

/** Parses the issuer and checks it is a CA whose certificate matches its key. */
function checkedIssuer(issuer: CertAndKey): x509.X509Certificate {
  const der = certificateDer(issuer.certPem);
  let nodeCert: NodeX509;
  try {
    nodeCert = new NodeX509(der);
  } catch (err) {
    throw new PkiError('INVALID_CERTIFICATE', 'issuer certificate is not a valid X.509 certificate', { cause: err });
  }
  if (!nodeCert.ca) throw new PkiError('ISSUER_NOT_CA', `issuer "${nodeCert.subject.replace(/\n/g, ', ')}" is not a CA`);
  if (!nodeCert.checkPrivateKey(importPrivateKey(issuer.keyPem))) {
    throw new PkiError('KEY_MISMATCH', 'issuer key does not belong to the issuer certificate');
  }
  return new x509.X509Certificate(der);
}

/** 16 random bytes, top bit cleared so the DER INTEGER is positive, never zero. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function sanList(sans: BuildParams['sans'] = {}): x509.JsonGeneralName[] {
  for (const ip of sans.ip ?? []) {
    if (!isIP(ip)) throw new PkiError('INVALID_ARGUMENT', `not an IP address: ${ip}`);
  }
  return [
    ...(sans.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(sans.ip ?? []).map((value) => ({ type: 'ip' as const, value })),
    ...(sans.uri ?? []).map((value) => ({ type: 'url' as const, value })),
  ];
}
