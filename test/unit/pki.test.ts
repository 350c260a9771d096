import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { request, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCsr,
  createIntermediateCa,
  createRootCa,
  createServerCertificate,
  fingerprintSha1,
  generateKeyPair,
  isIssuedBy,
  issueLeafCertificate,
  jwsAlgorithmForKey,
  loadOrCreateControllerPki,
  parseCertificate,
  pkcs7ToPems,
  PkiError,
  signCsr,
  splitPemBundle,
  toPkcs7Base64,
  verifyChain,
  type ControllerPki,
} from '../../src/main/core/pki';
import { x509 } from '../../src/main/core/pki/x509Provider';

const DAY = 86_400_000;
const TRUST_DOMAIN = 'weft.test';
const tempDirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'weft-pki-'));
  tempDirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

async function expectPkiError(promise: Promise<unknown>, code: string): Promise<PkiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PkiError);
  expect((err as PkiError).code).toBe(code);
  return err as PkiError;
}

/** A CSR for a key the PKI module would not generate itself (weak or unsupported). */
async function csrFromNodeKey(
  pair: { privateKey: KeyObject; publicKey: KeyObject },
  algorithm: RsaHashedImportParams | (EcKeyImportParams & EcdsaParams),
): Promise<string> {
  const { subtle } = globalThis.crypto;
  const keys = {
    privateKey: await subtle.importKey('pkcs8', new Uint8Array(pair.privateKey.export({ type: 'pkcs8', format: 'der' })), algorithm, false, ['sign']),
    publicKey: await subtle.importKey('spki', new Uint8Array(pair.publicKey.export({ type: 'spki', format: 'der' })), algorithm, true, ['verify']),
  };
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: 'CN=weak', keys, signingAlgorithm: algorithm });
  return csr.toString('pem');
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('controller PKI', () => {
  let dir: string;
  let pki: ControllerPki;

  beforeAll(async () => {
    dir = tempDir();
    pki = await loadOrCreateControllerPki(dir, { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] } });
  });

  it('creates the hierarchy with the expected profiles', () => {
    expect(pki.status).toBe('created');
    const root = parseCertificate(pki.root.certPem);
    const intermediate = parseCertificate(pki.intermediate.certPem);
    const signing = parseCertificate(pki.signing.certPem);
    const server = parseCertificate(pki.server.certPem);

    expect(root.isCa && intermediate.isCa && signing.isCa).toBe(true);
    expect(root.pathLength).toBe(1);
    expect(intermediate.pathLength).toBe(0);
    expect(root.uris).toEqual([`spiffe://${TRUST_DOMAIN}`]);
    expect(root.publicKeyAlgorithm).toBe('EC-P256');
    expect(isIssuedBy(pki.intermediate.certPem, pki.root.certPem)).toBe(true);
    expect(isIssuedBy(pki.signing.certPem, pki.root.certPem)).toBe(true);
    expect(isIssuedBy(pki.server.certPem, pki.intermediate.certPem)).toBe(true);
    expect(isIssuedBy(pki.server.certPem, pki.signing.certPem)).toBe(false);

    expect(server.isCa).toBe(false);
    expect(server.dnsNames).toEqual(['localhost']);
    expect(server.ipAddresses.sort()).toEqual(['127.0.0.1', '::1']);
    expect(Math.round((server.notAfter.getTime() - server.notBefore.getTime()) / DAY)).toBe(365);
    expect(Math.round((root.notAfter.getTime() - root.notBefore.getTime()) / DAY)).toBe(3650);
    expect(BigInt(`0x${server.serialNumber}`) > 0n).toBe(true);
    expect(server.serialNumber).not.toBe(root.serialNumber);

    expect(pki.signingFingerprint).toBe(fingerprintSha1(pki.signing.certPem));
    expect(pki.signingFingerprint).toMatch(/^[0-9a-f]{40}$/);
    expect(splitPemBundle(pki.caBundlePem).map((c) => fingerprintSha1(c))).toEqual(
      [pki.root, pki.intermediate, pki.signing].map((p) => fingerprintSha1(p.certPem)),
    );
    expect(splitPemBundle(pki.serverChainPem)).toHaveLength(2);
    expect(jwsAlgorithmForKey(pki.signing.keyPem)).toBe('ES256');
  });

  it('writes keys with mode 0600', () => {
    if (process.platform === 'win32') return;
    for (const name of ['root-ca.key.pem', 'intermediate-ca.key.pem', 'signing-ca.key.pem', 'server.key.pem']) {
      expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    }
  });

  it('reloads the same PKI', async () => {
    const again = await loadOrCreateControllerPki(dir, { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] } });
    expect(again.status).toBe('loaded');
    for (const role of ['root', 'intermediate', 'signing', 'server'] as const) {
      expect(fingerprintSha1(again[role].certPem)).toBe(fingerprintSha1(pki[role].certPem));
      expect(again[role].keyPem).toBe(pki[role].keyPem);
    }
    expect(again.signingFingerprint).toBe(pki.signingFingerprint);
  });

  it('reissues only the server certificate when the SANs change', async () => {
    const sans = { dns: ['ctrl.example.com'], ip: ['10.1.2.3'] };
    const changed = await loadOrCreateControllerPki(dir, { trustDomain: TRUST_DOMAIN, serverSans: sans });
    expect(changed.status).toBe('server-reissued');
    expect(fingerprintSha1(changed.server.certPem)).not.toBe(fingerprintSha1(pki.server.certPem));
    for (const role of ['root', 'intermediate', 'signing'] as const) {
      expect(fingerprintSha1(changed[role].certPem)).toBe(fingerprintSha1(pki[role].certPem));
    }
    const info = parseCertificate(changed.server.certPem);
    expect(info.dnsNames.sort()).toEqual(['ctrl.example.com', 'localhost']);
    expect(info.ipAddresses.sort()).toEqual(['10.1.2.3', '127.0.0.1', '::1']);
    expect(isIssuedBy(changed.server.certPem, pki.intermediate.certPem)).toBe(true);

    // Same or fewer SANs (and an equivalent IPv6 spelling): nothing to do.
    const same = await loadOrCreateControllerPki(dir, { trustDomain: TRUST_DOMAIN, serverSans: { dns: ['CTRL.example.com'], ip: ['0:0::1'] } });
    expect(same.status).toBe('loaded');
    expect(same.server.certPem).toBe(changed.server.certPem);
  });

  it('reissues the server certificate when it expires within 30 days', async () => {
    const dir2 = tempDir();
    const first = await loadOrCreateControllerPki(dir2, { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] } });
    const later = new Date(Date.now() + 340 * DAY);
    const renewed = await loadOrCreateControllerPki(dir2, { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] }, now: later });
    expect(renewed.status).toBe('server-reissued');
    expect(fingerprintSha1(renewed.root.certPem)).toBe(fingerprintSha1(first.root.certPem));
    expect(parseCertificate(renewed.server.certPem).notAfter.getTime()).toBeGreaterThan(later.getTime() + 300 * DAY);
  });

  it('refuses a partial PKI and a different trust domain', async () => {
    const dir2 = tempDir();
    await loadOrCreateControllerPki(dir2, { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] } });
    await expectPkiError(loadOrCreateControllerPki(dir2, { trustDomain: 'other.test', serverSans: { dns: [], ip: [] } }), 'INVALID_PKI');
    const rootCert = readFileSync(join(dir2, 'root-ca.cert.pem'), 'utf8');
    unlinkSync(join(dir2, 'root-ca.key.pem'));
    const err = await expectPkiError(loadOrCreateControllerPki(dir2, { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] } }), 'PARTIAL_PKI');
    expect(err.message).toContain('root-ca.key.pem');
    // Nothing was regenerated behind our back.
    expect(readFileSync(join(dir2, 'root-ca.cert.pem'), 'utf8')).toBe(rootCert);
  });

  it('discards an uncommitted staging area and completes a committed one', async () => {
    const dir2 = tempDir();
    const first = await loadOrCreateControllerPki(dir2, { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] } });
    // Crash before the commit marker: ignored.
    mkdirSync(join(dir2, '.staging'));
    writeFileSync(join(dir2, '.staging', 'server.cert.pem'), 'garbage');
    let loaded = await loadOrCreateControllerPki(dir2, { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] } });
    expect(loaded.status).toBe('loaded');
    expect(loaded.server.certPem).toBe(first.server.certPem);

    // Crash after the marker, with one of two files already moved: completed on the next start.
    const replacement = await createServerCertificate({
      commonName: 'localhost',
      issuer: first.intermediate,
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
    });
    mkdirSync(join(dir2, '.staging'));
    writeFileSync(join(dir2, '.staging', 'server.key.pem'), replacement.keyPem);
    writeFileSync(join(dir2, 'server.cert.pem'), replacement.certPem);
    writeFileSync(join(dir2, '.staging', 'COMMITTED'), 'server.key.pem\nserver.cert.pem');
    loaded = await loadOrCreateControllerPki(dir2, { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] } });
    expect(loaded.status).toBe('loaded');
    expect(loaded.server).toEqual(replacement);
  });
});

describe('TLS with issued certificates', () => {
  let pki: ControllerPki;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    pki = await loadOrCreateControllerPki(tempDir(), { trustDomain: TRUST_DOMAIN, serverSans: { dns: [], ip: [] } });
    server = createServer(
      { key: pki.server.keyPem, cert: pki.serverChainPem, ca: pki.caBundlePem, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        const peer = socket.getPeerCertificate();
        res.end(
          JSON.stringify({
            authorized: socket.authorized,
            authorizationError: socket.authorizationError ?? null,
            fingerprint: peer.fingerprint?.replace(/:/g, '').toLowerCase() ?? null,
            rawSha1: peer.raw ? createHash('sha1').update(peer.raw).digest('hex') : null,
          }),
        );
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function get(client: { key?: string; cert?: string }, ca = pki.root.certPem): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', ca, agent: false, ...client }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(JSON.parse(body) as Record<string, unknown>));
      });
      req.on('error', reject);
      req.end();
    });
  }

  for (const keyAlg of ['RSA-2048', 'EC-P256', 'EC-P384'] as const) {
    it(`accepts a client certificate signed from an ${keyAlg} CSR`, async () => {
      const { csrPem, keyPem } = await createCsr({ keyAlg, commonName: `client-${keyAlg}` });
      const { certPem } = await signCsr({
        csrPem,
        issuer: pki.signing,
        validityDays: 365,
        uriSans: [`spiffe://${TRUST_DOMAIN}/identity/abc123`],
        usage: 'client',
      });
      expect(parseCertificate(certPem).publicKeyAlgorithm).toBe(keyAlg);
      const seen = await get({ key: keyPem, cert: certPem });
      expect(seen.authorized).toBe(true);
      expect(seen.fingerprint).toBe(fingerprintSha1(certPem));
      expect(seen.rawSha1).toBe(fingerprintSha1(certPem));
    });
  }

  it('is reachable without a client certificate, and rejected by a client trusting another root', async () => {
    expect((await get({})).authorized).toBe(false);
    const otherRoot = await createRootCa({ commonName: 'Other Root' });
    await expect(get({}, otherRoot.certPem)).rejects.toThrow();
  });
});

describe('signCsr', () => {
  let issuer: { certPem: string; keyPem: string };

  beforeAll(async () => {
    const root = await createRootCa({ commonName: 'CSR Root' });
    issuer = await createIntermediateCa({ commonName: 'CSR Signer', issuer: root });
  });

  it('issues a client certificate with the SPIFFE id and the requested validity', async () => {
    const { csrPem } = await createCsr({ commonName: 'from-csr' });
    const spiffe = `spiffe://${TRUST_DOMAIN}/identity/id-42`;
    const { certPem } = await signCsr({ csrPem, issuer, validityDays: 365, commonName: 'id-42', uriSans: [spiffe], usage: 'client' });
    const info = parseCertificate(certPem);
    expect(info.subjectCN).toBe('id-42');
    expect(info.issuerCN).toBe('CSR Signer');
    expect(info.uris).toEqual([spiffe]);
    expect(info.isCa).toBe(false);
    expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(365 * DAY);
    expect(Math.abs(info.notBefore.getTime() - Date.now())).toBeLessThan(10 * 60_000);
    const eku = new x509.X509Certificate(certPem).getExtension(x509.ExtendedKeyUsageExtension);
    expect(eku?.usages).toEqual([x509.ExtendedKeyUsage.clientAuth]);
  });

  it('uses the CSR CN by default and accepts base64 DER with CRLF', async () => {
    const { csrPem } = await createCsr({ keyAlg: 'EC-P384', commonName: 'router-1' });
    const bare = csrPem
      .replace(/-----[^-]+-----/g, '')
      .trim()
      .replace(/\n/g, '\r\n');
    const { certPem } = await signCsr({ csrPem: bare, issuer, validityDays: 30, usage: 'client-server', dnsSans: ['router-1.example'] });
    const info = parseCertificate(certPem);
    expect(info.subjectCN).toBe('router-1');
    expect(info.dnsNames).toEqual(['router-1.example']);
    const crlfPem = await signCsr({ csrPem: csrPem.replace(/\n/g, '\r\n'), issuer, validityDays: 30, usage: 'client' });
    expect(parseCertificate(crlfPem.certPem).subjectCN).toBe('router-1');
  });

  it('rejects a CSR with a tampered signature or body', async () => {
    const { csrPem } = await createCsr({ commonName: 'tampered-client' });
    const der = Buffer.from(csrPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const badSig = Buffer.from(der);
    badSig[badSig.length - 1] ^= 0x01;
    await expectPkiError(signCsr({ csrPem: badSig.toString('base64'), issuer, validityDays: 1, usage: 'client' }), 'INVALID_CSR');
    const badBody = Buffer.from(der.toString('latin1').replace('tampered-client', 'tampered-clienX'), 'latin1');
    expect(badBody.equals(der)).toBe(false);
    await expectPkiError(signCsr({ csrPem: badBody.toString('base64'), issuer, validityDays: 1, usage: 'client' }), 'INVALID_CSR');
  });

  it('rejects weak or unsupported keys', async () => {
    const rsa1024 = await csrFromNodeKey(generateKeyPairSync('rsa', { modulusLength: 1024 }), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' });
    let err = await expectPkiError(signCsr({ csrPem: rsa1024, issuer, validityDays: 1, usage: 'client' }), 'INVALID_CSR');
    expect(err.message).toContain('RSA-1024');
    const p521 = await csrFromNodeKey(generateKeyPairSync('ec', { namedCurve: 'P-521' }), { name: 'ECDSA', namedCurve: 'P-521', hash: 'SHA-512' });
    err = await expectPkiError(signCsr({ csrPem: p521, issuer, validityDays: 1, usage: 'client' }), 'INVALID_CSR');
    expect(err.message).toContain('EC-P521');
  });

  it('rejects garbage', async () => {
    for (const junk of ['', 'hello world', '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n', 'TUlJQmFk']) {
      await expectPkiError(signCsr({ csrPem: junk, issuer, validityDays: 1, usage: 'client' }), 'INVALID_CSR');
    }
  });

  it('refuses a non-CA issuer', async () => {
    const leaf = await createServerCertificate({ commonName: 'leaf', issuer, dnsNames: ['leaf'] });
    const { csrPem } = await createCsr({ commonName: 'x' });
    await expectPkiError(signCsr({ csrPem, issuer: leaf, validityDays: 1, usage: 'client' }), 'ISSUER_NOT_CA');
  });
});

describe('verifyChain', () => {
  let root: { certPem: string; keyPem: string };
  let intermediate: { certPem: string; keyPem: string };
  let leafPem: string;

  beforeAll(async () => {
    root = await createRootCa({ commonName: 'Chain Root' });
    intermediate = await createIntermediateCa({ commonName: 'Chain Intermediate', issuer: root });
    const { publicKeyPem } = await generateKeyPair();
    leafPem = await issueLeafCertificate({ publicKey: publicKeyPem, commonName: 'leaf', issuer: intermediate, usage: 'client', validityDays: 10 });
  });

  it('accepts a valid chain and returns it leaf first', () => {
    const result = verifyChain(leafPem, { intermediates: [intermediate.certPem], roots: [root.certPem] });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.chain.map((c) => parseCertificate(c).subjectCN)).toEqual(['leaf', 'Chain Intermediate', 'Chain Root']);
    // Bundles are accepted as list entries.
    expect(verifyChain(leafPem, { roots: [intermediate.certPem + root.certPem] }).ok).toBe(true);
  });

  it('rejects a wrong root and a missing intermediate', async () => {
    const other = await createRootCa({ commonName: 'Chain Root' }); // same name, different key
    const wrong = verifyChain(leafPem, { intermediates: [intermediate.certPem], roots: [other.certPem] });
    expect(wrong).toEqual({ ok: false, reason: expect.stringContaining('no trusted issuer') });
    expect(verifyChain(leafPem, { roots: [root.certPem] }).ok).toBe(false);
  });

  it('checks validity windows unless allowExpired', async () => {
    const longAgo = new Date(Date.now() - 30 * DAY);
    const oldRoot = await createRootCa({ commonName: 'Old Root', now: longAgo });
    const oldIntermediate = await createIntermediateCa({ commonName: 'Old Intermediate', issuer: oldRoot, now: longAgo });
    const { publicKeyPem } = await generateKeyPair();
    const expired = await issueLeafCertificate({
      publicKey: publicKeyPem,
      commonName: 'old',
      issuer: oldIntermediate,
      usage: 'client',
      validityDays: 1,
      now: new Date(Date.now() - 10 * DAY),
    });
    const opts = { intermediates: [oldIntermediate.certPem], roots: [oldRoot.certPem] };
    const result = verifyChain(expired, opts);
    expect(result).toEqual({ ok: false, reason: expect.stringContaining('expired') });
    expect(verifyChain(expired, { ...opts, allowExpired: true }).ok).toBe(true);
    expect(verifyChain(expired, { ...opts, at: new Date(Date.now() - 9.5 * DAY) }).ok).toBe(true);
    const early = verifyChain(leafPem, { intermediates: [intermediate.certPem], roots: [root.certPem], at: new Date(Date.now() - DAY) });
    expect(early).toEqual({ ok: false, reason: expect.stringContaining('not yet valid') });
  });

  it('rejects a certificate issued by a non-CA', async () => {
    // Our issuers refuse to sign with a non-CA, so forge one with @peculiar/x509 directly.
    const intermediateKey = await globalThis.crypto.subtle.importKey(
      'pkcs8',
      new Uint8Array(createPrivateKey(intermediate.keyPem).export({ type: 'pkcs8', format: 'der' })),
      { name: 'ECDSA', namedCurve: 'P-256' },
      false,
      ['sign'],
    );
    const keys = await globalThis.crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const nonCaCert = await x509.X509CertificateGenerator.create({
      subject: 'CN=not a ca',
      issuer: new x509.X509Certificate(intermediate.certPem).subjectName,
      publicKey: keys.publicKey,
      signingKey: intermediateKey,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams,
      extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
    });
    const victim = await x509.X509CertificateGenerator.create({
      subject: 'CN=victim',
      issuer: nonCaCert.subjectName,
      publicKey: keys.publicKey,
      signingKey: keys.privateKey,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams,
    });
    const result = verifyChain(victim.toString('pem'), {
      intermediates: [nonCaCert.toString('pem'), intermediate.certPem],
      roots: [root.certPem],
    });
    expect(result).toEqual({ ok: false, reason: expect.stringContaining('is not a CA') });
    expect(verifyChain(nonCaCert.toString('pem'), { intermediates: [intermediate.certPem], roots: [root.certPem] }).ok).toBe(true);
  });

  it('reports unparseable input', () => {
    expect(verifyChain('nope', { roots: [root.certPem] })).toEqual({ ok: false, reason: expect.any(String) });
  });
});

describe('PKCS#7', () => {
  let certs: string[];

  beforeAll(async () => {
    const root = await createRootCa({ commonName: 'P7 Root', keyAlg: 'RSA-2048' });
    const intermediate = await createIntermediateCa({ commonName: 'P7 Intermediate', issuer: root });
    certs = [root.certPem, intermediate.certPem];
  });

  it('round-trips certificates in order', () => {
    const b64 = toPkcs7Base64(certs);
    expect(b64).toMatch(/^([A-Za-z0-9+/]{64}\n)*[A-Za-z0-9+/]{1,64}=*$/); // OpenZiti's 64-column lines
    expect(pkcs7ToPems(b64)).toEqual(certs);
    expect(pkcs7ToPems(b64.replace(/.{1,64}/g, '$&\r\n'))).toEqual(certs);
  });

  it('is readable by openssl pkcs7 -print_certs', (ctx) => {
    if (!hasOpenssl()) ctx.skip();
    const dir = tempDir();
    const file = join(dir, 'cacerts.p7b');
    writeFileSync(file, Buffer.from(toPkcs7Base64(certs), 'base64'));
    const out = execFileSync('openssl', ['pkcs7', '-inform', 'DER', '-in', file, '-print_certs'], { encoding: 'utf8' });
    expect(splitPemBundle(out)).toEqual(certs);
  });

  it('rejects non-PKCS#7 input', () => {
    expect(() => pkcs7ToPems(certs[0])).toThrow(PkiError);
    expect(() => pkcs7ToPems('garbage!')).toThrow(PkiError);
  });
});

describe('parsing helpers', () => {
  it('fingerprints PEM and DER identically and rejects junk', async () => {
    const root = await createRootCa({ commonName: 'FP Root' });
    const der = parseCertificate(root.certPem).der;
    expect(fingerprintSha1(der)).toBe(createHash('sha1').update(der).digest('hex'));
    expect(fingerprintSha1(root.certPem.replace(/\n/g, '\r\n'))).toBe(fingerprintSha1(der));
    expect(() => parseCertificate('junk!')).toThrow(PkiError);
    expect(() => parseCertificate(Buffer.from('not der'))).toThrow(PkiError);
  });

  it('splits bundles, ignoring other PEM blocks', async () => {
    const a = await createRootCa({ commonName: 'A' });
    const b = await createRootCa({ commonName: 'B' });
    const text = `junk\r\n${a.certPem.replace(/\n/g, '\r\n')}${a.keyPem}${b.certPem}`;
    expect(splitPemBundle(text)).toEqual([a.certPem, b.certPem]);
  });
});
