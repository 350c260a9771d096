import type { MigrationTarget } from '../db';

/** Foundation schema: identities, authentication, config types/configs, services. */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE controllers (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  ctrl_address TEXT, cert_pem TEXT NOT NULL, fingerprint TEXT NOT NULL,
  api_addresses TEXT NOT NULL DEFAULT '{}',
  is_online INTEGER NOT NULL DEFAULT 0, is_preferred_leader INTEGER NOT NULL DEFAULT 0, last_joined_at TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);

-- Role attributes of every entity kind, kept beside the entity's JSON copy so that ZitiQL set functions
-- and policy role matching are index lookups: (kind, attr) -> ids.
CREATE TABLE role_attributes (
  entity_type TEXT NOT NULL,
  attr TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  PRIMARY KEY (entity_type, attr, entity_id)
) WITHOUT ROWID;
CREATE INDEX role_attributes_entity ON role_attributes(entity_type, entity_id);

CREATE TABLE identity_types (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);

CREATE TABLE posture_check_types (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, operating_systems TEXT NOT NULL DEFAULT '[]', version TEXT NOT NULL DEFAULT '1',
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);

CREATE TABLE auth_policies (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  primary_json TEXT NOT NULL, secondary_json TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX auth_policies_created ON auth_policies(created_at);

CREATE TABLE identities (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  type_id TEXT NOT NULL REFERENCES identity_types(id),
  is_admin INTEGER NOT NULL DEFAULT 0,
  is_default_admin INTEGER NOT NULL DEFAULT 0,
  auth_policy_id TEXT NOT NULL REFERENCES auth_policies(id),
  external_id TEXT UNIQUE,
  app_data TEXT NOT NULL DEFAULT '{}',
  default_hosting_cost INTEGER NOT NULL DEFAULT 0,
  default_hosting_precedence TEXT NOT NULL DEFAULT 'default',
  service_hosting_costs TEXT NOT NULL DEFAULT '{}',
  service_hosting_precedences TEXT NOT NULL DEFAULT '{}',
  permissions TEXT NOT NULL DEFAULT '[]',
  role_attributes TEXT NOT NULL DEFAULT '[]',
  disabled INTEGER NOT NULL DEFAULT 0,
  disabled_at TEXT,
  disabled_until TEXT,
  failed_login_attempts INTEGER NOT NULL DEFAULT 0,
  env_info TEXT NOT NULL DEFAULT '{}',
  sdk_info TEXT NOT NULL DEFAULT '{}',
  interfaces TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX identities_created ON identities(created_at);
CREATE INDEX identities_auth_policy ON identities(auth_policy_id);
CREATE INDEX identities_type ON identities(type_id);

CREATE TABLE authenticators (
  id TEXT PRIMARY KEY,
  identity_id TEXT NOT NULL REFERENCES identities(id) ON DELETE CASCADE,
  method TEXT NOT NULL,
  username TEXT UNIQUE,
  password_hash TEXT,
  fingerprint TEXT UNIQUE,
  cert_pem TEXT,
  ca_id TEXT,
  is_issued_by_network INTEGER NOT NULL DEFAULT 0,
  is_extend_requested INTEGER NOT NULL DEFAULT 0,
  is_key_roll_requested INTEGER NOT NULL DEFAULT 0,
  extend_requested_at TEXT,
  last_extend_rolled_keys INTEGER NOT NULL DEFAULT 0,
  last_auth_resolved_to_root INTEGER NOT NULL DEFAULT 0,
  unverified_cert_pem TEXT,
  unverified_fingerprint TEXT UNIQUE,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX authenticators_identity ON authenticators(identity_id);
CREATE INDEX authenticators_created ON authenticators(created_at);
CREATE INDEX authenticators_ca ON authenticators(ca_id);

CREATE TABLE api_sessions (
  id TEXT PRIMARY KEY,
  token TEXT NOT NULL UNIQUE,
  identity_id TEXT NOT NULL REFERENCES identities(id) ON DELETE CASCADE,
  authenticator_id TEXT,
  ip_address TEXT NOT NULL DEFAULT '',
  config_types TEXT NOT NULL DEFAULT '[]',
  is_mfa_required INTEGER NOT NULL DEFAULT 0,
  is_mfa_complete INTEGER NOT NULL DEFAULT 0,
  is_ext_jwt_required INTEGER NOT NULL DEFAULT 0,
  is_ext_jwt_complete INTEGER NOT NULL DEFAULT 0,
  improper_client_cert_chain INTEGER NOT NULL DEFAULT 0,
  last_activity_at TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX api_sessions_identity ON api_sessions(identity_id);
CREATE INDEX api_sessions_created ON api_sessions(created_at);
CREATE INDEX api_sessions_activity ON api_sessions(last_activity_at);

CREATE TABLE config_types (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  schema TEXT NOT NULL DEFAULT '{}', target TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX config_types_created ON config_types(created_at);

CREATE TABLE configs (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  config_type_id TEXT NOT NULL REFERENCES config_types(id),
  data TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX configs_type ON configs(config_type_id);
CREATE INDEX configs_created ON configs(created_at);

CREATE TABLE services (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  encryption_required INTEGER NOT NULL DEFAULT 1,
  max_idle_time_millis INTEGER NOT NULL DEFAULT 0,
  terminator_strategy TEXT NOT NULL DEFAULT 'smartrouting',
  role_attributes TEXT NOT NULL DEFAULT '[]',
  configs TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX services_created ON services(created_at);

-- service -> config links (the services.configs JSON column is the ordered copy used for display)
CREATE TABLE service_configs (
  service_id TEXT NOT NULL REFERENCES services(id) ON DELETE CASCADE,
  config_id TEXT NOT NULL REFERENCES configs(id),
  PRIMARY KEY (service_id, config_id)
) WITHOUT ROWID;
CREATE INDEX service_configs_config ON service_configs(config_id);
`);
}
