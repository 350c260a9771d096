// Self-signed server certificates for TLS tests (a frontend's own, a share's custom domain), with the SPKI hash
// Chromium's --ignore-certificate-errors-spki-list takes.
import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';

export interface TestCert {
  cert: string;
  key: string;
  /** base64 SHA-256 of the SubjectPublicKeyInfo */
  spki: string;
}

export function selfSignedCert(dnsNames: string[], opts: { validForMs?: number; notBeforeMs?: number } = {}): TestCert {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = createHash('sha1')
    .update(dnsNames.join(',') + Math.random())
    .digest('hex')
    .slice(0, 16);
  const notBefore = opts.notBeforeMs ?? Date.now() - 60_000;
  cert.validity.notBefore = new Date(notBefore);
  cert.validity.notAfter = new Date(notBefore + (opts.validForMs ?? 86_400_000));
  const attrs = [{ name: 'commonName', value: dnsNames[0]! }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([{ name: 'subjectAltName', altNames: dnsNames.map((value) => ({ type: 2, value })) }]);
  cert.sign(key, forge.md.sha256.create());
  const certPem = forge.pki.certificateToPem(cert);
  const spki = createHash('sha256')
    .update(createPublicKey(certPem).export({ type: 'spki', format: 'der' }))
    .digest('base64');
  return { cert: certPem, key: keyPem, spki };
}

/** Writes the certificate and key as cert.pem / key.pem (with a prefix) into `dir`; returns their paths. */
export function writeCert(dir: string, c: TestCert, prefix = ''): { cert_file: string; key_file: string } {
  const cert_file = join(dir, `${prefix}cert.pem`);
  const key_file = join(dir, `${prefix}key.pem`);
  writeFileSync(cert_file, c.cert);
  writeFileSync(key_file, c.key, { mode: 0o600 });
  return { cert_file, key_file };
}
