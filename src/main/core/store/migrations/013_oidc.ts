import type { MigrationTarget } from '../db';

/**
 * OpenZiti's OIDC authentication (core/auth/oidc.ts):
 * - api_sessions.kind: `legacy` (POST /authenticate, an opaque token) or `oidc` (an authorization code login whose
 *   JWT access tokens name the session by id; its token column is never accepted as a token).
 * - api_sessions.expires_at: set for `oidc` sessions, which end when their last refresh token expires (not after
 *   inactivity); NULL for `legacy` ones.
 * - oidc_auth_requests: one authorization request (/oidc/authorize) until its code is exchanged or it expires. The
 *   request's handle and its code are kept as SHA-256 digests only; the session its login made is partial until the
 *   secondary factors pass. A used code stays recorded (code_used_at) until the request expires, so a replay is seen.
 */
export function up(db: MigrationTarget): void {
  db.exec(`
ALTER TABLE api_sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'legacy';
ALTER TABLE api_sessions ADD COLUMN expires_at TEXT;
CREATE INDEX api_sessions_expires ON api_sessions(expires_at);

CREATE TABLE oidc_auth_requests (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  state TEXT,
  nonce TEXT,
  scopes TEXT NOT NULL DEFAULT '[]',
  code_challenge TEXT NOT NULL,
  code_challenge_method TEXT NOT NULL,
  requested_method TEXT,
  config_types TEXT NOT NULL DEFAULT '[]',
  remote_address TEXT NOT NULL DEFAULT '',
  cert_fingerprints TEXT NOT NULL DEFAULT '[]',
  api_session_id TEXT REFERENCES api_sessions(id) ON DELETE CASCADE,
  amr TEXT NOT NULL DEFAULT '[]',
  auth_time TEXT,
  code_digest TEXT UNIQUE,
  code_expires_at TEXT,
  code_used_at TEXT,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX oidc_auth_requests_expires ON oidc_auth_requests(expires_at);
CREATE INDEX oidc_auth_requests_session ON oidc_auth_requests(api_session_id);`);
}
