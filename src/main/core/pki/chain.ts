import { X509Certificate as NodeX509 } from 'node:crypto';
import { PkiError } from './errors';
import { parseCertificate } from './parse';
import { certificateDer, fingerprintSha1, splitPemBundle, toPem } from './pem';
import { x509 } from './x509Provider';

export interface VerifyChainOptions {
  /** Untrusted CA certificates that may complete the path; each entry may itself be a PEM bundle. */
  intermediates?: string[];
  /** Trust anchors; each entry may itself be a PEM bundle. */
  roots: string[];
  /** Time at which validity is checked (default now). */
  at?: Date;
  allowExpired?: boolean;
}

/** `chain` runs from the leaf to the trust anchor, as PEM. */
export type VerifyChainResult = { ok: true; chain: string[] } | { ok: false; reason: string };

interface Cert {
  node: NodeX509;
  parsed: x509.X509Certificate;
  pem: string;
  name: string;
}

const MAX_DEPTH = 8;

/**
 * Builds and checks a path from `leafPem` to one of `roots`: every signature, the validity windows (unless
 * allowExpired), and that every issuer is a CA allowed to sign certificates (basicConstraints CA, keyCertSign
 * when keyUsage is present, pathLen). Revocation and EKU are not checked.
 */
export function verifyChain(leafPem: string, opts: VerifyChainOptions): VerifyChainResult {
  let leaf: Cert;
  let roots: Cert[];
  let intermediates: Cert[];
  try {
    leaf = load(leafPem);
    roots = opts.roots.flatMap(splitPemBundle).map(load);
    intermediates = (opts.intermediates ?? []).flatMap(splitPemBundle).map(load);
  } catch {
    return { ok: false, reason: 'a certificate could not be parsed' };
  }
  const at = opts.at ?? new Date();
  const chain = [leaf];

  for (let current = leaf; chain.length <= MAX_DEPTH;) {
    if (!opts.allowExpired) {
      if (at < current.parsed.notBefore) return { ok: false, reason: `certificate "${current.name}" is not yet valid` };
      if (at > current.parsed.notAfter) return { ok: false, reason: `certificate "${current.name}" has expired` };
    }
    if (roots.some((r) => r.node.fingerprint256 === current.node.fingerprint256)) {
      return { ok: true, chain: chain.map((c) => c.pem) };
    }
    const issuer = roots.find((c) => signedBy(current, c)) ?? intermediates.find((c) => !chain.includes(c) && signedBy(current, c));
    if (!issuer) return { ok: false, reason: `no trusted issuer found for "${current.name}"` };

    const problem = issuerProblem(issuer, chain.length - 1);
    if (problem) return { ok: false, reason: problem };
    chain.push(issuer);
    current = issuer;
  }
  return { ok: false, reason: 'certificate chain is too long' };
}

/** True if `caPem`'s subject is `certPem`'s issuer and its key verifies `certPem`'s signature. */
export function isIssuedBy(certPem: string, caPem: string): boolean {
  return signedBy(load(certPem), load(caPem));
}

function load(pem: string): Cert {
  const der = certificateDer(pem);
  try {
    const parsed = new x509.X509Certificate(der);
    return { node: new NodeX509(der), parsed, pem: toPem(der, 'CERTIFICATE'), name: parsed.subject };
  } catch (err) {
    throw new PkiError('INVALID_CERTIFICATE', 'not a valid X.509 certificate', { cause: err });
  }
}

function signedBy(cert: Cert, issuer: Cert): boolean {
  if (cert.node.issuer !== issuer.node.subject) return false;
  try {
    return cert.node.verify(issuer.node.publicKey);
  } catch {
    return false;
  }
}

/** Why `issuer` may not sign here, given how many CA certificates already sit between it and the leaf. */
function issuerProblem(issuer: Cert, casBelow: number): string | null {
  const constraints = issuer.parsed.getExtension(x509.BasicConstraintsExtension);
  if (!constraints?.ca) return `issuer "${issuer.name}" is not a CA`;
  const keyUsage = issuer.parsed.getExtension(x509.KeyUsagesExtension);
  if (keyUsage && !(keyUsage.usages & x509.KeyUsageFlags.keyCertSign)) return `issuer "${issuer.name}" may not sign certificates`;
  if (constraints.pathLength !== undefined && casBelow > constraints.pathLength) {
    return `path length constraint of "${issuer.name}" exceeded`;
  }
  return null;
}

/**
 * Verifies that `leafPem` chains (through the presented intermediates) to one of the trust `anchors`.
 * Validity dates are checked unless `allowExpired`; the anchor reached is returned by fingerprint.
 */
export function chainToAnchor(
  leafPem: string,
  intermediates: string[],
  anchors: string[],
  at: Date,
  allowExpired = false,
): { ok: true; anchorFingerprint: string } | { ok: false; reason: string } {
  if (!anchors.length) return { ok: false, reason: 'no trust anchors' };
  const result = verifyChain(leafPem, { roots: anchors, intermediates, at, allowExpired });
  if (!result.ok) return result;
  return { ok: true, anchorFingerprint: fingerprintSha1(result.chain[result.chain.length - 1]!) };
}

/** Whether the certificate is within its validity window at `at`. */
export function isCurrentlyValid(certPem: string, at: Date): boolean {
  const info = parseCertificate(certPem);
  return info.notBefore <= at && at <= info.notAfter;
}
