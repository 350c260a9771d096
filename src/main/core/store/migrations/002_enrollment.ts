import type { MigrationTarget } from '../db';

/** PKI and enrollment: CAs, enrollments, edge routers and routers, API-session certificates. */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE TABLE edge_routers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  cost INTEGER NOT NULL DEFAULT 0,
  no_traversal INTEGER NOT NULL DEFAULT 0,
  disabled INTEGER NOT NULL DEFAULT 0,
  is_tunneler_enabled INTEGER NOT NULL DEFAULT 0,
  role_attributes TEXT NOT NULL DEFAULT '[]',
  app_data TEXT NOT NULL DEFAULT '{}',
  ctrl_chan_listeners TEXT NOT NULL DEFAULT '{}',
  hostname TEXT NOT NULL DEFAULT '',
  supported_protocols TEXT NOT NULL DEFAULT '{}',
  sync_status TEXT NOT NULL DEFAULT 'SYNC_NEW',
  is_online INTEGER NOT NULL DEFAULT 0,
  is_verified INTEGER NOT NULL DEFAULT 0,
  fingerprint TEXT UNIQUE,
  cert_pem TEXT,
  enrollment_token TEXT UNIQUE,
  enrollment_jwt TEXT,
  enrollment_created_at TEXT,
  enrollment_expires_at TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX edge_routers_created ON edge_routers(created_at);

-- Transit (fabric) routers: the same enrollment columns as edge routers.
CREATE TABLE routers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  cost INTEGER NOT NULL DEFAULT 0,
  no_traversal INTEGER NOT NULL DEFAULT 0,
  disabled INTEGER NOT NULL DEFAULT 0,
  ctrl_chan_listeners TEXT NOT NULL DEFAULT '{}',
  interfaces TEXT NOT NULL DEFAULT '[]',
  is_online INTEGER NOT NULL DEFAULT 0,
  is_verified INTEGER NOT NULL DEFAULT 0,
  fingerprint TEXT UNIQUE,
  cert_pem TEXT,
  unverified_cert_pem TEXT,
  unverified_fingerprint TEXT UNIQUE,
  enrollment_token TEXT UNIQUE,
  enrollment_jwt TEXT,
  enrollment_created_at TEXT,
  enrollment_expires_at TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX routers_created ON routers(created_at);

-- Third-party certificate authorities (created unverified; verified by proof of possession).
CREATE TABLE cas (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  cert_pem TEXT NOT NULL,
  fingerprint TEXT NOT NULL UNIQUE,
  is_verified INTEGER NOT NULL DEFAULT 0,
  verification_token TEXT NOT NULL,
  is_auto_ca_enrollment_enabled INTEGER NOT NULL DEFAULT 0,
  is_ott_ca_enrollment_enabled INTEGER NOT NULL DEFAULT 0,
  is_auth_enabled INTEGER NOT NULL DEFAULT 0,
  identity_roles TEXT NOT NULL DEFAULT '[]',
  identity_name_format TEXT NOT NULL DEFAULT '',
  external_id_claim TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX cas_created ON cas(created_at);

-- Outstanding identity enrollments; at most one per identity and method. Router enrollments live on the router rows.
CREATE TABLE enrollments (
  id TEXT PRIMARY KEY,
  method TEXT NOT NULL,
  identity_id TEXT NOT NULL REFERENCES identities(id) ON DELETE CASCADE,
  ca_id TEXT REFERENCES cas(id) ON DELETE CASCADE,
  username TEXT,
  token TEXT NOT NULL UNIQUE,
  jwt TEXT NOT NULL,
  issued_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}',
  UNIQUE (identity_id, method)
);
CREATE INDEX enrollments_created ON enrollments(created_at);
CREATE INDEX enrollments_ca ON enrollments(ca_id);

-- Ephemeral client certificates bound to an API session (gone with the session).
CREATE TABLE api_session_certificates (
  id TEXT PRIMARY KEY,
  api_session_id TEXT NOT NULL REFERENCES api_sessions(id) ON DELETE CASCADE,
  subject TEXT NOT NULL,
  fingerprint TEXT NOT NULL UNIQUE,
  valid_from TEXT NOT NULL,
  valid_to TEXT NOT NULL,
  cert_pem TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX api_session_certificates_session ON api_session_certificates(api_session_id, created_at);
`);
}
