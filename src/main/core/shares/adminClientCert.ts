import type { Core } from '../core';
import { createCertAuthenticator } from '../auth/index';
import { fingerprintSha1 } from '../pki/index';

/**
 * The store's side of the default admin's client certificate for local commands (`weft share`; the files are
 * share/adminClientCert.ts's): whether one is to be issued, and its authenticator with the setting that says it was
 * issued. Issued once per data dir: an operator who deletes the authenticator keeps it deleted.
 */
const ISSUED_SETTING = 'admin_client_cert_fingerprint';

/** Whether to issue it: the default admin's id, or why not ('already-issued' or 'skipped'). */
export async function adminClientCertificateDue(core: Core): Promise<{ adminId: string } | 'already-issued' | 'skipped'> {
  const store = core.store;
  if (await store.getSql('SELECT 1 FROM settings WHERE key = ?', ISSUED_SETTING)) return 'already-issued';
  const admin = await store.getSql<{ id: string }>('SELECT id FROM identities WHERE is_default_admin = 1');
  if (!admin) return 'skipped';
  if (await store.getSql("SELECT 1 FROM authenticators WHERE identity_id = ? AND method = 'cert'", admin.id)) {
    core.log.warn('the default admin already has a certificate authenticator; no admin client certificate issued for local commands');
    return 'skipped';
  }
  return { adminId: admin.id };
}

/**
 * The issued certificate's authenticator and the setting, in one transaction; false (nothing written) when another
 * node on the same database issued one meanwhile (a first start of several at once).
 */
export async function recordAdminClientCertificate(core: Core, adminId: string, certPem: string): Promise<boolean> {
  const store = core.store;
  return store.tx(async () => {
    if (await store.getSql('SELECT 1 FROM settings WHERE key = ?', ISSUED_SETTING)) return false;
    await createCertAuthenticator(core.system, adminId, certPem, { 'weft.adminClientCert': true });
    await store.runSql('INSERT INTO settings (key, value) VALUES (?, ?)', ISSUED_SETTING, fingerprintSha1(certPem));
    return true;
  });
}
