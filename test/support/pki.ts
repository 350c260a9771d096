import {
  createCsr,
  createIntermediateCa,
  createRootCa,
  generateKeyPair,
  issueLeafCertificate,
  type CertAndKey,
  type KeyAlgorithm,
} from '../../src/main/core/pki';
import { x509 } from '../../src/main/core/pki/x509Provider';
import type { Api, ApiClient, Resp } from './client';

export { createCsr };
export type { CertAndKey, KeyAlgorithm };

/** A key pair and a CSR for it (what a real SDK sends at enrollment). */
export async function csr(keyAlg: KeyAlgorithm = 'EC-P256', commonName = 'device'): Promise<{ csrPem: string; keyPem: string }> {
  return createCsr({ keyAlg, commonName });
}

/** The same CSR with one bit of its signature flipped: well formed, but not signed by its key. */
export function tamperCsrSignature(csrPem: string): string {
  const der = Buffer.from(new x509.Pkcs10CertificateRequest(csrPem).rawData);
  der[der.length - 3] ^= 0x01;
  return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE REQUEST-----\n`;
}

/** A third-party CA (root, or an intermediate under `issuer`). */
export async function externalCa(commonName = 'Third Party CA', issuer?: CertAndKey): Promise<CertAndKey> {
  return issuer
    ? createIntermediateCa({ commonName, issuer, organization: 'Third Party' })
    : createRootCa({ commonName, organization: 'Third Party', pathLength: 2 });
}

export interface LeafOptions {
  commonName: string;
  keyAlg?: KeyAlgorithm;
  uriSans?: string[];
  validityDays?: number;
  now?: Date;
}

/** A client certificate (with a fresh key) issued by `ca`. */
export async function clientCert(ca: CertAndKey, opts: LeafOptions): Promise<CertAndKey> {
  const keys = await generateKeyPair(opts.keyAlg ?? 'EC-P256');
  const certPem = await issueLeafCertificate({
    publicKey: keys.publicKeyPem,
    commonName: opts.commonName,
    issuer: ca,
    usage: 'client',
    validityDays: opts.validityDays ?? 30,
    uriSans: opts.uriSans,
    now: opts.now,
  });
  return { certPem, keyPem: keys.privateKeyPem };
}

/** Logs in with a TLS client certificate; returns the response and a client carrying the session token. */
export async function certLogin(client: ApiClient, certPem: string, keyPem: string, api: Api = 'client'): Promise<{ resp: Resp; client: ApiClient }> {
  const c = client.withCert(certPem, keyPem);
  const resp = await c.post('/authenticate?method=cert', {}, { api });
  if (resp.status === 200) c.token = resp.body.data.token;
  return { resp, client: c };
}

/** Decodes a JWT's header and payload without verifying it. */
export function decodeJwt(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p] = jwt.split('.');
  return { header: JSON.parse(Buffer.from(h!, 'base64url').toString()), payload: JSON.parse(Buffer.from(p!, 'base64url').toString()) };
}

/** An EC P-256 CSR that requests DNS / IP subject alternative names (a router's server certificate). */
export function csrWithSans(commonName: string, dns: string[], ip: string[]): Promise<{ csrPem: string; keyPem: string }> {
  return createCsr({ commonName, dnsSans: dns, ipSans: ip });
}
