import { execFileSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, X509Certificate, type KeyPairKeyObjectResult } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCsr,
  createIntermediateCa,
  createRootCa,
  generateKeyPair,
  PkiError,
  verifyCsr,
  type CertAndKey,
  type CertificateUsage,
  type KeyAlgorithm,
} from '../../src/main/core/pki';
import { issueLeafCertificateDetails } from '../../src/main/core/pki/certificates';
import { children, readTlv, whole } from '../../src/main/core/pki/der';
import { ipBytes } from '../../src/main/core/pki/leafCertificate';
import { x509 } from '../../src/main/core/pki/x509Provider';

// The enrollment hot path reads CSRs and writes leaf certificates with its own DER code (der.ts, csr.ts,
// leafCertificate.ts). These tests hold it to what @peculiar/x509 produced and accepted before.

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const derOf = (pem: string) => Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
const pemOf = (der: Buffer, label = 'CERTIFICATE REQUEST') => `-----BEGIN ${label}-----\n${der.toString('base64')}\n-----END ${label}-----\n`;
const tbsOf = (der: Buffer) => whole(children(readTlv(der, 0))[0]!);

/** A CSR for a node:crypto key pair, signed with any WebCrypto algorithm (as a client could). */
async function csrFor(pair: KeyPairKeyObjectResult, importAlg: object, signingAlgorithm: object, name = 'CN=client'): Promise<string> {
  const { subtle } = globalThis.crypto;
  const keys = {
    privateKey: await subtle.importKey(
      'pkcs8',
      new Uint8Array(pair.privateKey.export({ type: 'pkcs8', format: 'der' })),
      importAlg as EcKeyImportParams,
      false,
      ['sign'],
    ),
    publicKey: await subtle.importKey(
      'spki',
      new Uint8Array(pair.publicKey.export({ type: 'spki', format: 'der' })),
      importAlg as EcKeyImportParams,
      true,
      ['verify'],
    ),
  };
  return (await x509.Pkcs10CertificateRequestGenerator.create({ name, keys, signingAlgorithm: signingAlgorithm as Algorithm })).toString('pem');
}

async function invalidCsr(csrPem: string): Promise<string> {
  try {
    await verifyCsr(csrPem);
  } catch (e) {
    expect(e).toBeInstanceOf(PkiError);
    expect((e as PkiError).code).toBe('INVALID_CSR');
    return (e as PkiError).message;
  }
  return 'accepted';
}

describe('verifyCsr (DER reader)', () => {
  it('accepts the algorithms it always did, and gives the key as it exports', async () => {
    const ec256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const cases: Array<[KeyPairKeyObjectResult, object, object, string]> = [
      [ec256, { name: 'ECDSA', namedCurve: 'P-256' }, { name: 'ECDSA', hash: 'SHA-256' }, 'EC-P256'],
      [ec256, { name: 'ECDSA', namedCurve: 'P-256' }, { name: 'ECDSA', hash: 'SHA-1' }, 'EC-P256'],
      [ec256, { name: 'ECDSA', namedCurve: 'P-256' }, { name: 'ECDSA', hash: 'SHA-512' }, 'EC-P256'],
      [ec384, { name: 'ECDSA', namedCurve: 'P-384' }, { name: 'ECDSA', hash: 'SHA-384' }, 'EC-P384'],
      [rsa, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, { name: 'RSASSA-PKCS1-v1_5' }, 'RSA-2048'],
      [rsa, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' }, { name: 'RSASSA-PKCS1-v1_5' }, 'RSA-2048'],
      [rsa, { name: 'RSA-PSS', hash: 'SHA-256' }, { name: 'RSA-PSS', saltLength: 32 }, 'RSA-2048'],
      [rsa, { name: 'RSA-PSS', hash: 'SHA-512' }, { name: 'RSA-PSS', saltLength: 64 }, 'RSA-2048'],
    ];
    for (const [pair, importAlg, signing, alg] of cases) {
      const info = await verifyCsr(await csrFor(pair, importAlg, signing, 'CN=dev-1, O=Acme'));
      expect(info.commonName).toBe('dev-1');
      expect(info.publicKeyAlgorithm).toBe(alg);
      expect(info.publicKeyPem).toBe(pair.publicKey.export({ type: 'spki', format: 'pem' }));
      expect(info.spki.equals(pair.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
    }
  });

  it('reads the first CN in any directory string type, and none as empty', async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const alg = [
      { name: 'ECDSA', namedCurve: 'P-256' },
      { name: 'ECDSA', hash: 'SHA-256' },
    ] as const;
    expect((await verifyCsr(await csrFor(pair, ...alg, 'CN=Zoë ünïcode'))).commonName).toBe('Zoë ünïcode');
    expect((await verifyCsr(await csrFor(pair, ...alg, 'O=NoCommonName'))).commonName).toBe('');
    expect((await verifyCsr(await csrFor(pair, ...alg, 'CN=first+CN=second'))).commonName).toBe('first');
  });

  it('rejects keys it never accepted, naming them', async () => {
    const ed = generateKeyPairSync('ed25519');
    expect(await invalidCsr(await csrFor(ed, { name: 'Ed25519' }, { name: 'Ed25519' }))).toContain('ED25519 is not accepted');
    const p521 = generateKeyPairSync('ec', { namedCurve: 'P-521' });
    expect(await invalidCsr(await csrFor(p521, { name: 'ECDSA', namedCurve: 'P-521' }, { name: 'ECDSA', hash: 'SHA-512' }))).toContain('EC-P521');
    const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
    expect(await invalidCsr(await csrFor(rsa1024, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, { name: 'RSASSA-PKCS1-v1_5' }))).toContain(
      'RSA-1024',
    );
  });

  it('rejects a bad signature, a tampered body, a point off the curve and an unknown algorithm with clear errors', async () => {
    const der = derOf((await createCsr({ commonName: 'tampered' })).csrPem);
    const badSig = Buffer.from(der);
    badSig[badSig.length - 3] ^= 1;
    expect(await invalidCsr(pemOf(badSig))).toBe('CSR signature is invalid');
    const badBody = Buffer.from(der.toString('latin1').replace('tampered', 'tamperex'), 'latin1');
    expect(await invalidCsr(pemOf(badBody))).toBe('CSR signature is invalid');
    const point = der.indexOf(Buffer.from('034200', 'hex'));
    const offCurve = Buffer.from(der);
    offCurve[point + 10] ^= 1;
    expect(await invalidCsr(pemOf(offCurve))).toBe('CSR public key is malformed');
    const oid = der.indexOf(Buffer.from('2a8648ce3d040302', 'hex')); // ecdsa-with-SHA256
    const unknown = Buffer.from(der);
    unknown[oid + 7] = 9;
    expect(await invalidCsr(pemOf(unknown))).toBe('CSR signature could not be verified');
    const rsaAlg = Buffer.from(der.toString('hex').replace('06082a8648ce3d040302', '06092a864886f70d01010b'), 'hex');
    expect(await invalidCsr(pemOf(rsaAlg))).toMatch(/^CSR (is malformed|signature could not be verified)$/);
  });

  it('rejects every truncation, garbage and random corruption with INVALID_CSR, never another error', async () => {
    const der = derOf((await createCsr({ commonName: 'fuzz', keyAlg: 'EC-P256' })).csrPem);
    for (let n = 0; n < der.length; n++) expect(await invalidCsr(pemOf(der.subarray(0, n)))).not.toBe('accepted');
    for (const junk of ['', 'hello world', 'TUlJQmFk', '-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----', '\u0000\u0001']) {
      expect(await invalidCsr(junk)).not.toBe('accepted');
    }
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
    for (let i = 0; i < 400; i++) {
      const bytes = Buffer.from(der);
      for (let k = 0; k < 1 + (i % 3); k++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      if (bytes.equals(der)) continue;
      expect(await invalidCsr(pemOf(bytes))).not.toBe('accepted');
    }
    const noise = Buffer.from(Array.from({ length: 256 }, () => Math.floor(random() * 256)));
    expect(await invalidCsr(pemOf(noise))).toBe('CSR is malformed');
  });
});

describe('leaf certificates (DER writer)', () => {
  const now = new Date('2026-06-01T12:34:56.789Z');
  const dir = mkdtempSync(join(tmpdir(), 'weft-pki-der-'));
  dirs.push(dir);
  const chains: Record<string, { root: CertAndKey; signing: CertAndKey }> = {};

  beforeAll(async () => {
    for (const alg of ['EC-P256', 'EC-P384', 'RSA-2048'] as KeyAlgorithm[]) {
      const root = await createRootCa({ commonName: `Root ${alg}`, organization: 'Weft', keyAlg: alg, now });
      chains[alg] = { root, signing: await createIntermediateCa({ commonName: 'Signing CA', organization: 'Weft', issuer: root, keyAlg: alg, now }) };
    }
  });

  /** What @peculiar/x509's generator wrote for this leaf (the builder used before), with the same serial and times. */
  async function peculiarTbs(leafDer: Buffer, issuer: CertAndKey, publicKeyPem: string, usage: CertificateUsage, sans: x509.JsonGeneralName[]) {
    const leaf = new x509.X509Certificate(new Uint8Array(leafDer));
    const issuerCert = new x509.X509Certificate(new Uint8Array(derOf(issuer.certPem)));
    const key = createPrivateKey(issuer.keyPem);
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const importAlg = curve
      ? { name: 'ECDSA', namedCurve: curve === 'prime256v1' ? 'P-256' : 'P-384' }
      : { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const signingAlgorithm = curve ? { name: 'ECDSA', hash: curve === 'prime256v1' ? 'SHA-256' : 'SHA-384' } : { name: 'RSASSA-PKCS1-v1_5' };
    const signingKey = await crypto.subtle.importKey('pkcs8', new Uint8Array(key.export({ type: 'pkcs8', format: 'der' })), importAlg, false, [
      'sign',
    ]);
    const publicKey = new x509.PublicKey(derOf(publicKeyPem));
    const { KeyUsageFlags: F, ExtendedKeyUsage: E } = x509;
    const rsa = publicKeyPem.length > 300;
    const extensions: x509.Extension[] = [
      await x509.SubjectKeyIdentifierExtension.create(publicKey),
      new x509.AuthorityKeyIdentifierExtension(issuerCert.getExtension(x509.SubjectKeyIdentifierExtension)!.keyId),
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(rsa ? F.digitalSignature | F.keyEncipherment : F.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(usage === 'server' ? [E.serverAuth] : usage === 'client' ? [E.clientAuth] : [E.serverAuth, E.clientAuth]),
    ];
    if (sans.length) extensions.push(new x509.SubjectAlternativeNameExtension(sans));
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: leaf.serialNumber,
      subject: new x509.Name(leaf.subjectName.toJSON()),
      issuer: issuerCert.subjectName,
      notBefore: leaf.notBefore,
      notAfter: leaf.notAfter,
      publicKey,
      signingKey,
      signingAlgorithm,
      extensions,
    });
    return tbsOf(Buffer.from(cert.rawData));
  }

  it('writes what @peculiar/x509 wrote, byte for byte, for each CA and key type; node:crypto and openssl verify them', async () => {
    const variants: Array<{ commonName: string; usage: CertificateUsage; validityDays: number; dns?: string[]; ip?: string[]; uri?: string[] }> = [
      { commonName: 'abc', usage: 'client', validityDays: 365, uri: ['spiffe://weft.test/identity/abc'] },
      {
        commonName: 'router 1 + "x", é',
        usage: 'client-server',
        validityDays: 0.25,
        dns: ['r1.example', 'localhost'],
        ip: ['10.1.2.3', '::1', 'fe80::1:2'],
      },
      { commonName: ' #edge ', usage: 'server', validityDays: 100_000 },
    ];
    const openssl = (() => {
      try {
        execFileSync('openssl', ['version'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    })();
    for (const caAlg of Object.keys(chains)) {
      const { root, signing } = chains[caAlg]!;
      writeFileSync(join(dir, 'root.pem'), root.certPem);
      writeFileSync(join(dir, 'signing.pem'), signing.certPem);
      for (const keyAlg of ['EC-P256', 'EC-P384', 'RSA-2048'] as KeyAlgorithm[]) {
        const keys = await generateKeyPair(keyAlg);
        for (const v of variants) {
          const leaf = await issueLeafCertificateDetails({
            publicKey: keys.publicKeyPem,
            commonName: v.commonName,
            issuer: signing,
            usage: v.usage,
            validityDays: v.validityDays,
            dnsSans: v.dns,
            ipSans: v.ip,
            uriSans: v.uri,
            now,
          });
          const der = derOf(leaf.certPem);
          const sans: x509.JsonGeneralName[] = [
            ...(v.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
            ...(v.ip ?? []).map((value) => ({ type: 'ip' as const, value })),
            ...(v.uri ?? []).map((value) => ({ type: 'url' as const, value })),
          ];
          expect(tbsOf(der).equals(await peculiarTbs(der, signing, keys.publicKeyPem, v.usage, sans)), `${caAlg} ${keyAlg} ${v.commonName}`).toBe(
            true,
          );

          const node = new X509Certificate(der);
          expect(node.verify(new X509Certificate(signing.certPem).publicKey)).toBe(true);
          expect(node.checkIssued(new X509Certificate(signing.certPem))).toBe(true);
          expect(node.publicKey.export({ type: 'spki', format: 'pem' })).toBe(keys.publicKeyPem);
          expect(leaf.subject).toBe(new x509.X509Certificate(der).subject);
          expect(leaf.notBefore).toEqual(new Date(node.validFrom));
          expect(leaf.notAfter).toEqual(new Date(node.validTo));
          if (openssl) {
            writeFileSync(join(dir, 'leaf.pem'), leaf.certPem);
            const out = execFileSync(
              'openssl',
              [
                'verify',
                '-attime',
                String(Math.floor(now.getTime() / 1000)),
                '-CAfile',
                join(dir, 'root.pem'),
                '-untrusted',
                join(dir, 'signing.pem'),
                join(dir, 'leaf.pem'),
              ],
              { encoding: 'utf8' },
            );
            expect(out.trim()).toBe(`${join(dir, 'leaf.pem')}: OK`);
          }
        }
      }
    }
  });

  it('never outlives its issuer, and keeps whole seconds', async () => {
    const keys = await generateKeyPair();
    const { signing } = chains['EC-P256']!;
    const leaf = await issueLeafCertificateDetails({
      publicKey: keys.publicKeyPem,
      commonName: 'long',
      issuer: signing,
      usage: 'client',
      validityDays: 50_000,
      now,
    });
    expect(leaf.notAfter).toEqual(new Date(new X509Certificate(signing.certPem).validTo));
    const short = await issueLeafCertificateDetails({
      publicKey: keys.publicKeyPem,
      commonName: 's',
      issuer: signing,
      usage: 'client',
      validityDays: 1.0000001,
      now,
    });
    expect(short.notAfter.getMilliseconds()).toBe(0);
    expect(short.notBefore.getTime()).toBe(Math.floor((now.getTime() - 5 * 60_000) / 1000) * 1000);
  });

  it('rejects a bad IP SAN and an empty common name as before', async () => {
    const keys = await generateKeyPair();
    const base = { publicKey: keys.publicKeyPem, issuer: chains['EC-P256']!.signing, usage: 'client' as const, validityDays: 1 };
    await expect(issueLeafCertificateDetails({ ...base, commonName: 'x', ipSans: ['10.0.0.300'] })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(issueLeafCertificateDetails({ ...base, commonName: '' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('encodes IP addresses as RFC 5280 octets', () => {
    expect(ipBytes('192.0.2.7').toString('hex')).toBe('c0000207');
    expect(ipBytes('::1').toString('hex')).toBe('00000000000000000000000000000001');
    expect(ipBytes('2001:db8::8:800:200c:417a').toString('hex')).toBe('20010db8000000000008080020' + '0c417a');
    expect(ipBytes('::ffff:192.0.2.7').toString('hex')).toBe('00000000000000000000ffffc0000207');
    expect(ipBytes('fe80::1%eth0').toString('hex')).toBe('fe800000000000000000000000000001');
  });
});
