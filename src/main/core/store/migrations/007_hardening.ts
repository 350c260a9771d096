import type { MigrationTarget } from '../db';

/**
 * Hardening: secrets at rest, a persisted MFA failure counter, the audit log.
 * - mfas.secret now holds a sealed value (`v1:...`, core/auth/secretBox.ts) and mfas.recovery_codes keyed digests
 *   (`h1:...`); rows written before are converted at start-up (core/auth/mfa.ts `sealMfaSecrets`), not here, because
 *   the key lives in the data directory, not in the database. `recovery_codes_pending` is the sealed plain set of
 *   codes not yet shown (while the enrollment is pending, and after a regeneration until the next view); NULL after.
 * - api_sessions.mfa_failures counts wrong MFA codes of a session (survives restarts).
 * - audit_log: Management API writes, logins and MFA completions, and the console's writes (core/ops/audit.ts).
 */
export function up(db: MigrationTarget): void {
  db.exec(`
ALTER TABLE mfas ADD COLUMN recovery_codes_pending TEXT;

ALTER TABLE api_sessions ADD COLUMN mfa_failures INTEGER NOT NULL DEFAULT 0;

CREATE TABLE audit_log (
  id TEXT PRIMARY KEY,
  -- management | client (the REST API the request came through) | console
  source TEXT NOT NULL,
  -- create | update | patch | delete (by HTTP method) | login | mfa | logout | read
  action TEXT NOT NULL,
  entity_type TEXT,
  entity_id TEXT,
  -- the route template, e.g. "POST /identities/:id/disable" (no values)
  route TEXT,
  identity_id TEXT,
  identity_name TEXT,
  api_session_id TEXT,
  -- logins: what was tried (username, certificate fingerprint, token subject)
  principal TEXT,
  auth_method TEXT,
  source_address TEXT,
  outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
  error_code TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_created ON audit_log(created_at);
CREATE INDEX audit_log_action ON audit_log(action, created_at);
CREATE INDEX audit_log_outcome ON audit_log(outcome, created_at);
CREATE INDEX audit_log_identity ON audit_log(identity_id, created_at);
CREATE INDEX audit_log_entity ON audit_log(entity_type, entity_id);
CREATE INDEX audit_log_principal ON audit_log(principal);
`);
}
