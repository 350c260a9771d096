import { X509Certificate, type KeyObject } from 'node:crypto';
import type { Core } from '../core';
import { certifyCsr, decodePemOrBase64, PkiError, verifyCsr, x509, type CertificateUsage } from '../pki/index';
import { couldNotProcessCsr, missingCsr } from '../enrollmentErrors';

/** Client certificates issued at enrollment (and extension) are valid for one year. */
export const CLIENT_CERT_VALIDITY_DAYS = 365;
const DAY_MS = 86_400_000;
const SAN_OID = '2.5.29.17';

export type SpiffeKind = 'identity' | 'router';

/** `spiffe://<trust domain>/<kind>/<id>[/<more>...]`: the URI SAN of certificates the controller issues. */
export function spiffeId(core: Core, kind: SpiffeKind, id: string, ...more: string[]): string {
  return [`spiffe://${core.pki.trustDomain}`, kind, id, ...more].join('/');
}

export interface IssueOptions {
  csrPem: unknown;
  /** request field the CSR came from, named in errors */
  field: string;
  commonName?: string;
  /** used when neither commonName nor the CSR gives one */
  fallbackCommonName?: string;
  uriSans?: string[];
  dnsSans?: string[];
  ipSans?: string[];
  usage?: CertificateUsage;
  validityDays?: number;
  /** Absolute end of validity (API-session certificates); overrides validityDays. */
  notAfter?: Date;
}

export interface IssuedCertificate {
  certPem: string;
  /** leaf + signing CA: the chain a client presents (the root is in the CA bundle) */
  chainPem: string;
  fingerprint: string;
  subject: string;
  notBefore: Date;
  notAfter: Date;
}

/** Checks a CSR (RSA >= 2048, EC P-256/P-384, valid self-signature); bad ones become COULD_NOT_PROCESS_CSR. */
export async function checkCsr(
  csrPem: unknown,
  field: string,
): Promise<{ commonName: string; publicKeyPem: string; publicKey: KeyObject; spki: Buffer; pem: string }> {
  if (typeof csrPem !== 'string' || !csrPem.trim()) throw missingCsr({ field, reason: 'a PEM encoded CSR is required', value: csrPem ?? null });
  try {
    const info = await verifyCsr(csrPem);
    return { commonName: info.commonName, publicKeyPem: info.publicKeyPem, publicKey: info.publicKey, spki: info.spki, pem: csrPem };
  } catch (e) {
    if (e instanceof PkiError) throw couldNotProcessCsr({ field, reason: e.message });
    throw e;
  }
}

/** Signs a CSR with the controller's signing CA (checks it first). */
export async function issueFromCsr(core: Core, opts: IssueOptions): Promise<IssuedCertificate> {
  const csr = await checkCsr(opts.csrPem, opts.field);
  const now = core.clock.now();
  const validityDays = opts.notAfter
    ? Math.max(0, opts.notAfter.getTime() - now.getTime() + 5 * 60_000) / DAY_MS
    : (opts.validityDays ?? CLIENT_CERT_VALIDITY_DAYS);
  try {
    const issued = await certifyCsr(
      { publicKey: csr.publicKey, spki: csr.spki, commonName: opts.commonName || csr.commonName || opts.fallbackCommonName || '' },
      {
        issuer: core.pki.signing,
        validityDays,
        uriSans: opts.uriSans,
        dnsSans: opts.dnsSans,
        ipSans: opts.ipSans,
        usage: opts.usage ?? 'client',
        now,
      },
    );
    return { ...issued, chainPem: issued.certPem + core.pki.signing.certPem };
  } catch (e) {
    if (e instanceof PkiError) throw couldNotProcessCsr({ field: opts.field, reason: e.message });
    throw e;
  }
}

/** DNS / IP SANs a CSR asks for (routers' server certificates keep them; client certificates never do). */
export function csrRequestedSans(csrPem: string): { dns: string[]; ip: string[] } {
  const der = decodePemOrBase64(csrPem, ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST']);
  if (!der) return { dns: [], ip: [] };
  const ext = new x509.Pkcs10CertificateRequest(der).getExtension(SAN_OID);
  const names = ext ? new x509.SubjectAlternativeNameExtension(ext.rawData).names.items : [];
  return { dns: names.filter((n) => n.type === 'dns').map((n) => n.value), ip: names.filter((n) => n.type === 'ip').map((n) => n.value) };
}

/** True when the public keys of two certificates differ (the client rolled its key on extension). */
export function keyChanged(oldPem: string, newPem: string): boolean {
  const spki = (pem: string) => new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  return spki(oldPem) !== spki(newPem);
}
