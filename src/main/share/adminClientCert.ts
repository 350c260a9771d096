import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Core } from '../core/core';
import { fingerprintSha1, generateKeyPair, issueLeafCertificate } from '../core/pki/index';
import { createCertAuthenticator } from '../core/entities/authenticators';

/**
 * The default admin's client certificate, so local commands (`weft share`) log in with `method=cert` over
 * mutual TLS instead of a password on the command line. Issued once per data dir: an operator who deletes the
 * authenticator keeps it deleted. Whoever can read the key can also read the CA keys next to it, so it adds
 * no new way in.
 */
export const ADMIN_CLIENT_KEY_FILE = 'admin-client.key.pem';
export const ADMIN_CLIENT_CERT_FILE = 'admin-client.cert.pem';
export const CA_BUNDLE_FILE = 'ca-bundle.pem';
const ISSUED_SETTING = 'admin_client_cert_fingerprint';
const VALIDITY_DAYS = 3650; // capped by the signing CA's own validity

export function adminClientFiles(pkiDir: string) {
  return { key: join(pkiDir, ADMIN_CLIENT_KEY_FILE), cert: join(pkiDir, ADMIN_CLIENT_CERT_FILE), ca: join(pkiDir, CA_BUNDLE_FILE) };
}

export type AdminClientCertStatus = 'issued' | 'already-issued' | 'skipped';

export async function ensureAdminClientCertificate(core: Core): Promise<AdminClientCertStatus> {
  const store = core.store;
  if (await store.getSql('SELECT 1 FROM settings WHERE key = ?', ISSUED_SETTING)) return 'already-issued';
  const admin = await store.getSql<{ id: string }>('SELECT id FROM identities WHERE is_default_admin = 1');
  if (!admin) return 'skipped';
  if (await store.getSql("SELECT 1 FROM authenticators WHERE identity_id = ? AND method = 'cert'", admin.id)) {
    core.log.warn('the default admin already has a certificate authenticator; no admin client certificate issued for local commands');
    return 'skipped';
  }
  const keys = await generateKeyPair('EC-P256');
  const certPem = await issueLeafCertificate({
    publicKey: keys.publicKeyPem,
    commonName: 'weft-admin-client',
    issuer: core.pki.signing,
    usage: 'client',
    validityDays: VALIDITY_DAYS,
    uriSans: [`spiffe://${core.pki.trustDomain}/identity/${admin.id}`],
    now: core.clock.now(),
  });
  // Files first: a crash before the transaction leaves no setting, so the next start issues again.
  const files = adminClientFiles(core.pki.dir);
  writePrivateFile(files.key, keys.privateKeyPem);
  writePrivateFile(files.cert, certPem);
  const issued = await store.tx(async () => {
    // another node on the same database may have issued it meanwhile (a first start of several at once)
    if (await store.getSql('SELECT 1 FROM settings WHERE key = ?', ISSUED_SETTING)) return false;
    await createCertAuthenticator(core.system, admin.id, certPem, { 'weft.adminClientCert': true });
    await store.runSql('INSERT INTO settings (key, value) VALUES (?, ?)', ISSUED_SETTING, fingerprintSha1(certPem));
    return true;
  });
  if (!issued) {
    // what was written above names no authenticator
    rmSync(files.key, { force: true });
    rmSync(files.cert, { force: true });
    return 'already-issued';
  }
  return 'issued';
}

function writePrivateFile(path: string, content: string): void {
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
