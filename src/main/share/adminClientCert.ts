import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Core } from '../core/context';
import { generateKeyPair, issueLeafCertificate } from '../core/pki/index';
import { adminClientCertificateDue, recordAdminClientCertificate } from '../core/shares/index';

/**
 * The default admin's client certificate, so local commands (`weft share`) log in with `method=cert` over
 * mutual TLS instead of a password on the command line. Issued once per data dir: an operator who deletes the
 * authenticator keeps it deleted. Whoever can read the key can also read the CA keys next to it, so it adds
 * no new way in.
 */
export const ADMIN_CLIENT_KEY_FILE = 'admin-client.key.pem';
export const ADMIN_CLIENT_CERT_FILE = 'admin-client.cert.pem';
export const CA_BUNDLE_FILE = 'ca-bundle.pem';
const VALIDITY_DAYS = 3650; // capped by the signing CA's own validity

export function adminClientFiles(pkiDir: string) {
  return { key: join(pkiDir, ADMIN_CLIENT_KEY_FILE), cert: join(pkiDir, ADMIN_CLIENT_CERT_FILE), ca: join(pkiDir, CA_BUNDLE_FILE) };
}

export type AdminClientCertStatus = 'issued' | 'already-issued' | 'skipped';

export async function ensureAdminClientCertificate(core: Core): Promise<AdminClientCertStatus> {
  const due = await adminClientCertificateDue(core);
  if (typeof due === 'string') return due;
  const keys = await generateKeyPair('EC-P256');
  const certPem = await issueLeafCertificate({
    publicKey: keys.publicKeyPem,
    commonName: 'weft-admin-client',
    issuer: core.pki.signing,
    usage: 'client',
    validityDays: VALIDITY_DAYS,
    uriSans: [`spiffe://${core.pki.trustDomain}/identity/${due.adminId}`],
    now: core.clock.now(),
  });
  // Files first: a crash before the transaction leaves no setting, so the next start issues again.
  const files = adminClientFiles(core.pki.dir);
  writePrivateFile(files.key, keys.privateKeyPem);
  writePrivateFile(files.cert, certPem);
  // another node on the same database may have issued it meanwhile (a first start of several at once)
  const issued = await recordAdminClientCertificate(core, due.adminId, certPem);
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
