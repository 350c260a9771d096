import { X509Certificate as NodeX509 } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { isIssuedBy } from './chain';
import { createIntermediateCa, createRootCa, createServerCertificate, type CertAndKey } from './certificates';
import { PkiError } from './errors';
import { importPrivateKey } from './keys';
import { parseCertificate, type CertificateInfo } from './parse';
import { fingerprintSha1, splitPemBundle } from './pem';
import { renewsAt } from './renewal';

export interface ControllerPkiOptions {
  /** SPIFFE trust domain, e.g. "weft.example.com"; written as a `spiffe://<trustDomain>` URI SAN into the CAs. */
  trustDomain: string;
  /** Extra server SANs; localhost, 127.0.0.1 and ::1 are always added. */
  serverSans: { dns: string[]; ip: string[] };
  /** Reference time for issuing and expiry checks (default now). */
  now?: Date;
}

export interface ControllerPki {
  dir: string;
  trustDomain: string;
  root: CertAndKey;
  /** Signs the TLS server certificate. */
  intermediate: CertAndKey;
  /** Signs enrollment client certificates; its key signs enrollment JWTs. */
  signing: CertAndKey;
  server: CertAndKey;
  /**
   * Earlier server certificates of the same key, not yet expired: renewal keeps the key, so JWTs signed before it
   * (whose `kid` names an earlier certificate) still verify.
   */
  retiredServerCertPems: string[];
  /** root + intermediate + signing. */
  caBundlePem: string;
  /** server + intermediate: what the TLS server presents. */
  serverChainPem: string;
  /** SHA-1 hex of the signing certificate, used as the enrollment JWT `kid`. */
  signingFingerprint: string;
  /** What this call did. */
  status: 'created' | 'loaded' | 'server-reissued';
}

const CA_VALIDITY_DAYS = 3650;
const SERVER_VALIDITY_DAYS = 365;

const FILES = {
  root: { cert: 'root-ca.cert.pem', key: 'root-ca.key.pem' },
  intermediate: { cert: 'intermediate-ca.cert.pem', key: 'intermediate-ca.key.pem' },
  signing: { cert: 'signing-ca.cert.pem', key: 'signing-ca.key.pem' },
  server: { cert: 'server.cert.pem', key: 'server.key.pem' },
} as const;
const CA_ROLES = ['root', 'intermediate', 'signing'] as const;
/** The CA files (certificates and keys) of a PKI directory: what every controller of one network has the same. */
export const CA_FILES: readonly string[] = CA_ROLES.flatMap((role) => [FILES[role].cert, FILES[role].key]);
// Derived convenience copies for operators (e.g. `curl --cacert ca-bundle.pem`); never read back.
const CA_BUNDLE_FILE = 'ca-bundle.pem';
const SERVER_CHAIN_FILE = 'server-chain.pem';
const RETIRED_SERVER_FILE = 'server-retired.cert.pem';
const STAGING_DIR = '.staging';
const COMMIT_MARKER = 'COMMITTED';

interface ServerSans {
  dns: string[];
  ip: string[];
}

/**
 * Loads the controller PKI from `dir`, creating it on first use. The CA certificates are never regenerated;
 * the server certificate is reissued from the existing intermediate when it is missing, does not cover the
 * requested SANs, or is due for renewal (pki/renewal.ts), with the same key when its key file is readable.
 */
export async function loadOrCreateControllerPki(dir: string, opts: ControllerPkiOptions): Promise<ControllerPki> {
  const trustDomain = checkTrustDomain(opts.trustDomain);
  const sans = withDefaultSans(opts.serverSans);
  const now = opts.now ?? new Date();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await finishPendingCommit(dir);

  const caFiles = CA_FILES;
  const contents = await Promise.all(caFiles.map((name) => readOptional(join(dir, name))));
  if (contents.every((c) => c === null)) return createPki(dir, trustDomain, sans, now);
  const missing = caFiles.filter((_, i) => contents[i] === null);
  if (missing.length) {
    throw new PkiError(
      'PARTIAL_PKI',
      `PKI directory ${dir} is incomplete (missing ${missing.join(', ')}). Restore the missing files, or move the ` +
        'directory aside to create a new PKI (every issued certificate will then stop being trusted).',
    );
  }
  const [root, intermediate, signing] = CA_ROLES.map((_, i) => ({ certPem: contents[2 * i]!, keyPem: contents[2 * i + 1]! }));
  checkCaMaterial(dir, trustDomain, root, intermediate, signing);

  const serverCert = await readOptional(join(dir, FILES.server.cert));
  const serverKey = await readOptional(join(dir, FILES.server.key));
  const retired = await readOptional(join(dir, RETIRED_SERVER_FILE));
  let server = serverCert && serverKey ? { certPem: serverCert, keyPem: serverKey } : null;
  let retiredPems = server ? stillValidOfKey(retired ? splitPemBundle(retired) : [], server.keyPem, now) : [];
  let status: ControllerPki['status'] = 'loaded';
  if (!server || !serverCertUsable(server, intermediate, sans, now)) {
    const reissued = await reissueServer(dir, intermediate, server, retiredPems, sans, now);
    ({ server, retiredPems } = reissued);
    status = 'server-reissued';
  }
  const pki = assemble(dir, trustDomain, { root, intermediate, signing, server, retiredServerCertPems: retiredPems }, status);
  // the operators' copy, for CA files that came from elsewhere (a node adopting its network's CA)
  if ((await readOptional(join(dir, CA_BUNDLE_FILE))) !== pki.caBundlePem) await commitFiles(dir, { [CA_BUNDLE_FILE]: pki.caBundlePem });
  return pki;
}

async function createPki(dir: string, trustDomain: string, sans: ServerSans, now: Date): Promise<ControllerPki> {
  const common = { organization: 'Weft', uriSans: [`spiffe://${trustDomain}`], validityDays: CA_VALIDITY_DAYS, now };
  const root = await createRootCa({ ...common, commonName: 'Weft Root CA', pathLength: 1 });
  const [intermediate, signing] = await Promise.all([
    createIntermediateCa({ ...common, commonName: 'Weft Intermediate CA', issuer: root }),
    createIntermediateCa({ ...common, commonName: 'Weft Signing CA', issuer: root }),
  ]);
  const server = await issueServer(intermediate, sans, now);
  const pki = assemble(dir, trustDomain, { root, intermediate, signing, server, retiredServerCertPems: [] }, 'created');

  const files: Record<string, string> = { [CA_BUNDLE_FILE]: pki.caBundlePem, [SERVER_CHAIN_FILE]: pki.serverChainPem };
  for (const role of [...CA_ROLES, 'server'] as const) {
    files[FILES[role].key] = pki[role].keyPem;
    files[FILES[role].cert] = pki[role].certPem;
  }
  await commitFiles(dir, files);
  return pki;
}

function assemble(
  dir: string,
  trustDomain: string,
  pairs: Pick<ControllerPki, 'root' | 'intermediate' | 'signing' | 'server' | 'retiredServerCertPems'>,
  status: ControllerPki['status'],
): ControllerPki {
  return {
    dir,
    trustDomain,
    ...pairs,
    caBundlePem: pairs.root.certPem + pairs.intermediate.certPem + pairs.signing.certPem,
    serverChainPem: pairs.server.certPem + pairs.intermediate.certPem,
    signingFingerprint: fingerprintSha1(pairs.signing.certPem),
    status,
  };
}

function issueServer(intermediate: CertAndKey, sans: ServerSans, now: Date, keyPem?: string): Promise<CertAndKey> {
  return createServerCertificate({
    commonName: sans.dns[0],
    issuer: intermediate,
    dnsNames: sans.dns,
    ipAddresses: sans.ip,
    validityDays: SERVER_VALIDITY_DAYS,
    now,
    keyPem,
  });
}

/**
 * A new server certificate, for the current key when it is readable (JWTs signed with it keep verifying; the old
 * certificate joins the retired ones), committed to the directory with its chain.
 */
async function reissueServer(
  dir: string,
  intermediate: CertAndKey,
  current: CertAndKey | null,
  retired: string[],
  sans: ServerSans,
  now: Date,
): Promise<{ server: CertAndKey; retiredPems: string[] }> {
  const keep = current && usableKey(current.keyPem) ? current.keyPem : undefined;
  const server = await issueServer(intermediate, sans, now, keep);
  const retiredPems = keep && current && keyMatches(current.certPem, keep) ? stillValidOfKey([...retired, current.certPem], keep, now) : [];
  await commitFiles(dir, {
    [FILES.server.key]: server.keyPem,
    [FILES.server.cert]: server.certPem,
    [SERVER_CHAIN_FILE]: server.certPem + intermediate.certPem,
    [RETIRED_SERVER_FILE]: retiredPems.join(''),
  });
  return { server, retiredPems };
}

/**
 * Renews the server certificate of a loaded PKI when it is due (pki/renewal.ts): same key, same names, a new serial
 * and validity. Returns the PKI with it, or undefined when nothing was due.
 */
export async function renewServerCertificateIfDue(pki: ControllerPki, now: Date): Promise<ControllerPki | undefined> {
  const info = parseCertificate(pki.server.certPem);
  if (now < renewsAt(info.notBefore, info.notAfter)) return undefined;
  const sans = { dns: info.dnsNames, ip: info.ipAddresses };
  const { server, retiredPems } = await reissueServer(pki.dir, pki.intermediate, pki.server, pki.retiredServerCertPems, sans, now);
  const { root, intermediate, signing } = pki;
  return assemble(pki.dir, pki.trustDomain, { root, intermediate, signing, server, retiredServerCertPems: retiredPems }, 'server-reissued');
}

/**
 * The server certificate made to cover one more host name or IP address (an address the operator chose to advertise):
 * same key, its names plus `host`. Returns the PKI with it, or undefined when the certificate covers `host` already.
 */
export async function coverServerHost(pki: ControllerPki, host: string, now: Date): Promise<ControllerPki | undefined> {
  const info = parseCertificate(pki.server.certPem);
  const current = { dns: info.dnsNames, ip: info.ipAddresses };
  const sans = withDefaultSans(isIP(host) ? { ...current, ip: [...current.ip, host] } : { ...current, dns: [...current.dns, host] });
  if (serverCertUsable(pki.server, pki.intermediate, sans, now)) return undefined;
  const { server, retiredPems } = await reissueServer(pki.dir, pki.intermediate, pki.server, pki.retiredServerCertPems, sans, now);
  const { root, intermediate, signing } = pki;
  return assemble(pki.dir, pki.trustDomain, { root, intermediate, signing, server, retiredServerCertPems: retiredPems }, 'server-reissued');
}

/** The certificates of `keyPem` among `pems` that have not expired. */
function stillValidOfKey(pems: string[], keyPem: string, now: Date): string[] {
  return pems.filter((pem) => {
    try {
      return keyMatches(pem, keyPem) && parseCertificate(pem).notAfter > now;
    } catch {
      return false;
    }
  });
}

function usableKey(keyPem: string): boolean {
  try {
    importPrivateKey(keyPem);
    return true;
  } catch {
    return false;
  }
}

/** Checks that the loaded CA files belong together; throws PkiError('INVALID_PKI') otherwise. */
function checkCaMaterial(dir: string, trustDomain: string, root: CertAndKey, intermediate: CertAndKey, signing: CertAndKey) {
  const pairs = { root, intermediate, signing };
  const problem = (role: (typeof CA_ROLES)[number]): string | null => {
    const { cert, key } = FILES[role];
    let info: CertificateInfo;
    try {
      info = parseCertificate(pairs[role].certPem);
    } catch {
      return `${cert} is not a valid certificate`;
    }
    if (!keyMatches(pairs[role].certPem, pairs[role].keyPem)) return `${key} does not match ${cert}`;
    if (!info.isCa) return `${cert} is not a CA certificate`;
    if (!isIssuedBy(pairs[role].certPem, root.certPem)) return `${cert} is not signed by ${FILES.root.cert}`;
    if (role === 'root' && !info.uris.includes(`spiffe://${trustDomain}`)) {
      return `it was created for ${info.uris.join(', ') || 'no SPIFFE trust domain'}, not spiffe://${trustDomain}`;
    }
    return null;
  };
  for (const role of CA_ROLES) {
    const what = problem(role);
    if (what) throw new PkiError('INVALID_PKI', `PKI directory ${dir} is inconsistent: ${what}`);
  }
}

function serverCertUsable(server: CertAndKey, intermediate: CertAndKey, sans: ServerSans, now: Date): boolean {
  try {
    const info = parseCertificate(server.certPem);
    const dnsNames = new Set(info.dnsNames.map((d) => d.toLowerCase()));
    const ips = new Set(info.ipAddresses.map(ipKey));
    return (
      keyMatches(server.certPem, server.keyPem) &&
      isIssuedBy(server.certPem, intermediate.certPem) &&
      now < renewsAt(info.notBefore, info.notAfter) &&
      sans.dns.every((d) => dnsNames.has(d)) &&
      sans.ip.every((ip) => ips.has(ipKey(ip)))
    );
  } catch {
    return false; // unreadable: just reissue, the server certificate is replaceable
  }
}

function keyMatches(certPem: string, keyPem: string): boolean {
  try {
    return new NodeX509(certPem).checkPrivateKey(importPrivateKey(keyPem));
  } catch {
    return false;
  }
}

function checkTrustDomain(trustDomain: string): string {
  // SPIFFE trust domain name charset.
  if (!/^[a-z0-9._-]+$/.test(trustDomain)) {
    throw new PkiError('INVALID_ARGUMENT', `invalid trust domain "${trustDomain}" (use lowercase letters, digits, '.', '-', '_')`);
  }
  return trustDomain;
}

function withDefaultSans(sans: ServerSans): ServerSans {
  const dns = [...new Set([...sans.dns, 'localhost'].map((d) => d.trim().toLowerCase()))];
  for (const d of dns) {
    if (!/^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/.test(d)) throw new PkiError('INVALID_ARGUMENT', `invalid DNS name "${d}"`);
  }
  const ip = new Map<string, string>();
  for (const addr of [...sans.ip, '127.0.0.1', '::1']) {
    if (!isIP(addr)) throw new PkiError('INVALID_ARGUMENT', `invalid IP address "${addr}"`);
    ip.set(ipKey(addr), addr);
  }
  return { dns, ip: [...ip.values()] };
}

/** Canonical form of an IP address for comparisons ("0:0::1" and "::1" are the same). */
function ipKey(ip: string): string {
  return new URL(`http://${isIP(ip) === 6 ? `[${ip}]` : ip}/`).hostname;
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

// Files are written to a staging directory, fsynced, then a commit marker listing them is written, and only
// then are they renamed into place. A crash before the marker leaves the live files untouched (the staging
// directory is discarded on the next start); a crash after it is completed on the next start. So a PKI is
// never left half-written, even though it spans several files.
async function commitFiles(dir: string, files: Record<string, string>): Promise<void> {
  const staging = join(dir, STAGING_DIR);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { mode: 0o700 });
  for (const [name, content] of Object.entries(files)) {
    await writeDurably(join(staging, name), content, name.endsWith('.key.pem') ? 0o600 : 0o644);
  }
  await writeDurably(join(staging, COMMIT_MARKER), Object.keys(files).join('\n'), 0o600);
  await syncDir(staging);
  await finishPendingCommit(dir);
}

async function finishPendingCommit(dir: string): Promise<void> {
  const staging = join(dir, STAGING_DIR);
  const manifest = await readOptional(join(staging, COMMIT_MARKER));
  if (manifest !== null) {
    for (const name of manifest.split('\n').filter(Boolean)) {
      // Already-moved files are absent from staging when an interrupted commit is resumed.
      if ((await readOptional(join(staging, name))) !== null) await rename(join(staging, name), join(dir, name));
    }
    await syncDir(dir);
  }
  await rm(staging, { recursive: true, force: true });
}

async function writeDurably(path: string, content: string, mode: number): Promise<void> {
  const file = await open(path, 'wx', mode);
  try {
    await file.writeFile(content);
    await file.sync();
  } finally {
    await file.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directories cannot be opened/fsynced on every platform (e.g. Windows); the renames are still atomic.
  }
}
