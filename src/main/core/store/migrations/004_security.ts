import type { MigrationTarget } from '../db';

/** MFA, external JWT signers, identity lifecycle, controller settings, operations. */
export function up(db: MigrationTarget): void {
  db.exec(`
-- One TOTP enrollment per identity: pending until verified. The secret and recovery codes must stay readable
-- (codes are verified against them and can be viewed again with a valid code), so they are stored as is.
CREATE TABLE mfas (
  id TEXT PRIMARY KEY,
  identity_id TEXT NOT NULL UNIQUE REFERENCES identities(id) ON DELETE CASCADE,
  secret TEXT NOT NULL,
  is_verified INTEGER NOT NULL DEFAULT 0,
  recovery_codes TEXT NOT NULL DEFAULT '[]',
  -- last accepted TOTP time step: codes of this step or earlier are replays
  last_time_step INTEGER,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);

CREATE TABLE external_jwt_signers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  issuer TEXT NOT NULL UNIQUE,
  audience TEXT NOT NULL,
  cert_pem TEXT,
  jwks_endpoint TEXT,
  kid TEXT,
  fingerprint TEXT,
  common_name TEXT,
  not_before TEXT,
  not_after TEXT,
  claims_property TEXT NOT NULL DEFAULT 'sub',
  use_external_id INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 1,
  external_auth_url TEXT,
  client_id TEXT,
  scopes TEXT NOT NULL DEFAULT '[]',
  target_token TEXT NOT NULL DEFAULT 'ACCESS',
  enroll_to_cert_enabled INTEGER NOT NULL DEFAULT 0,
  enroll_to_token_enabled INTEGER NOT NULL DEFAULT 0,
  enroll_name_claims_selector TEXT,
  enroll_attribute_claims_selector TEXT,
  enroll_auth_policy_id TEXT REFERENCES auth_policies(id),
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX external_jwt_signers_created ON external_jwt_signers(created_at);
CREATE INDEX external_jwt_signers_enroll_policy ON external_jwt_signers(enroll_auth_policy_id);

-- 'global' plus one row per controller that overrides it (id = controller id); NULL values inherit.
CREATE TABLE controller_settings (
  id TEXT PRIMARY KEY,
  controller_id TEXT UNIQUE REFERENCES controllers(id) ON DELETE CASCADE,
  oidc TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO controller_settings (id, controller_id, oidc, created_at, updated_at)
VALUES ('global', NULL, '{"redirectUris":[],"postLogoutUris":[]}',
        ${db.sql.now()}, ${db.sql.now()});

CREATE TABLE identity_traces (
  identity_id TEXT PRIMARY KEY REFERENCES identities(id) ON DELETE CASCADE,
  enabled INTEGER NOT NULL,
  trace_id TEXT NOT NULL,
  channels TEXT NOT NULL DEFAULT '[]',
  until TEXT,
  updated_at TEXT NOT NULL
);

-- when the session last proved a TOTP/recovery code (posture MFA checks read it)
ALTER TABLE api_sessions ADD COLUMN mfa_passed_at TEXT;
`);
}
