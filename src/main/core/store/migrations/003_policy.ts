import type { MigrationTarget } from '../db';

/**
 * Services, policies, sessions and posture.
 *
 * Access is resolved through "role classes": entities of one kind (identity, service, edge-router, posture-check)
 * with the same role attributes and named (`@id`) by the same policies are matched by exactly the same policies,
 * so policy membership and the access they grant are kept per class, not per entity. Everything below
 * `role_classes` is derived state, maintained transactionally by core/policy (and rebuildable from the policies).
 */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE TABLE service_policies (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL CHECK (type IN ('Dial', 'Bind')),
  semantic TEXT NOT NULL CHECK (semantic IN ('AllOf', 'AnyOf')),
  identity_roles TEXT NOT NULL DEFAULT '[]',
  service_roles TEXT NOT NULL DEFAULT '[]',
  posture_check_roles TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX service_policies_created ON service_policies(created_at);

CREATE TABLE edge_router_policies (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  semantic TEXT NOT NULL CHECK (semantic IN ('AllOf', 'AnyOf')),
  identity_roles TEXT NOT NULL DEFAULT '[]',
  edge_router_roles TEXT NOT NULL DEFAULT '[]',
  is_system INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX edge_router_policies_created ON edge_router_policies(created_at);

CREATE TABLE service_edge_router_policies (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  semantic TEXT NOT NULL CHECK (semantic IN ('AllOf', 'AnyOf')),
  service_roles TEXT NOT NULL DEFAULT '[]',
  edge_router_roles TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX service_edge_router_policies_created ON service_edge_router_policies(created_at);

CREATE TABLE posture_checks (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  type_id TEXT NOT NULL REFERENCES posture_check_types(id),
  role_attributes TEXT NOT NULL DEFAULT '[]',
  version INTEGER NOT NULL DEFAULT 1,
  -- the type-specific fields (domains, operatingSystems, macAddresses, process, processes + semantic, MFA settings)
  details TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX posture_checks_created ON posture_checks(created_at);
CREATE INDEX posture_checks_type ON posture_checks(type_id);

-- Terminators: router_id names an edge router or a transit router (cleaned up by the triggers below).
CREATE TABLE terminators (
  id TEXT PRIMARY KEY,
  service_id TEXT NOT NULL REFERENCES services(id) ON DELETE CASCADE,
  router_id TEXT NOT NULL,
  binding TEXT NOT NULL,
  address TEXT NOT NULL,
  identity TEXT NOT NULL DEFAULT '',
  identity_secret TEXT,
  cost INTEGER NOT NULL DEFAULT 0,
  precedence TEXT NOT NULL DEFAULT 'default',
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX terminators_service ON terminators(service_id, created_at);
CREATE INDEX terminators_router ON terminators(router_id);
CREATE INDEX terminators_created ON terminators(created_at);
-- the order edge routers are offered in (online first, then by name)
CREATE INDEX edge_routers_online_name ON edge_routers(is_online DESC, name, id);
CREATE TRIGGER edge_routers_delete_terminators AFTER DELETE ON edge_routers BEGIN
  DELETE FROM terminators WHERE router_id = OLD.id;
END;
CREATE TRIGGER routers_delete_terminators AFTER DELETE ON routers BEGIN
  DELETE FROM terminators WHERE router_id = OLD.id;
END;

-- Dial/Bind sessions; one per API session, service and type. They die with their API session or service.
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  token TEXT NOT NULL UNIQUE,
  api_session_id TEXT NOT NULL REFERENCES api_sessions(id) ON DELETE CASCADE,
  identity_id TEXT NOT NULL REFERENCES identities(id) ON DELETE CASCADE,
  service_id TEXT NOT NULL REFERENCES services(id) ON DELETE CASCADE,
  type TEXT NOT NULL CHECK (type IN ('Dial', 'Bind')),
  -- ids of the service policies whose posture checks passed at creation
  service_policies TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}',
  UNIQUE (api_session_id, service_id, type)
);
CREATE INDEX sessions_identity ON sessions(identity_id, created_at);
CREATE INDEX sessions_service ON sessions(service_id);
CREATE INDEX sessions_created ON sessions(created_at);

-- Per-identity service config overrides: at most one config per (identity, service, config type).
CREATE TABLE identity_service_configs (
  identity_id TEXT NOT NULL REFERENCES identities(id) ON DELETE CASCADE,
  service_id TEXT NOT NULL REFERENCES services(id) ON DELETE CASCADE,
  config_type_id TEXT NOT NULL,
  config_id TEXT NOT NULL REFERENCES configs(id),
  PRIMARY KEY (identity_id, service_id, config_type_id)
) WITHOUT ROWID;
CREATE INDEX identity_service_configs_config ON identity_service_configs(config_id);
CREATE INDEX identity_service_configs_service ON identity_service_configs(service_id);

-- Posture data reported by an identity's SDKs (OS, domain, MAC, processes, per-API-session endpoint state).
CREATE TABLE posture_data (
  identity_id TEXT PRIMARY KEY REFERENCES identities(id) ON DELETE CASCADE,
  data TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Recent session requests refused for failing posture checks (bounded per identity).
CREATE TABLE posture_failures (
  id INTEGER PRIMARY KEY,
  identity_id TEXT NOT NULL REFERENCES identities(id) ON DELETE CASCADE,
  api_session_id TEXT NOT NULL,
  service_id TEXT NOT NULL,
  service_name TEXT NOT NULL,
  session_type TEXT NOT NULL,
  policy_failures TEXT NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX posture_failures_identity ON posture_failures(identity_id, id);

-- ---- policy index ------------------------------------------------------------------------------------
-- One row per side of a policy (identity/service/edge-router/posture-check roles).
CREATE TABLE policy_sides (
  policy_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  policy_type TEXT NOT NULL,
  semantic TEXT NOT NULL,
  is_all INTEGER NOT NULL,
  attr_count INTEGER NOT NULL,
  PRIMARY KEY (policy_id, kind)
) WITHOUT ROWID;
CREATE INDEX policy_sides_all ON policy_sides(kind, is_all);
-- '#attr' (role_type 'attr') and '@id' (role_type 'id') entries of each side.
CREATE TABLE policy_side_roles (
  kind TEXT NOT NULL,
  role_type TEXT NOT NULL,
  value TEXT NOT NULL,
  policy_id TEXT NOT NULL,
  PRIMARY KEY (kind, role_type, value, policy_id)
) WITHOUT ROWID;
CREATE INDEX policy_side_roles_policy ON policy_side_roles(policy_id);

-- Role classes: key = JSON [sorted attributes, sorted ids of policies naming the members by @id].
CREATE TABLE role_classes (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  member_count INTEGER NOT NULL DEFAULT 0,
  UNIQUE (kind, key)
);
CREATE TABLE role_class_attrs (
  class_id INTEGER NOT NULL REFERENCES role_classes(id) ON DELETE CASCADE,
  attr TEXT NOT NULL,
  PRIMARY KEY (class_id, attr)
) WITHOUT ROWID;
CREATE INDEX role_class_attrs_attr ON role_class_attrs(attr, class_id);
CREATE TABLE role_class_refs (
  class_id INTEGER NOT NULL REFERENCES role_classes(id) ON DELETE CASCADE,
  policy_id TEXT NOT NULL,
  PRIMARY KEY (class_id, policy_id)
) WITHOUT ROWID;
CREATE INDEX role_class_refs_policy ON role_class_refs(policy_id, class_id);
CREATE TABLE role_class_members (
  kind TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  class_id INTEGER NOT NULL REFERENCES role_classes(id),
  PRIMARY KEY (kind, entity_id)
) WITHOUT ROWID;
CREATE INDEX role_class_members_class ON role_class_members(class_id, entity_id);
CREATE TRIGGER role_class_members_insert AFTER INSERT ON role_class_members BEGIN
  UPDATE role_classes SET member_count = member_count + 1 WHERE id = NEW.class_id;
END;
CREATE TRIGGER role_class_members_move AFTER UPDATE OF class_id ON role_class_members BEGIN
  UPDATE role_classes SET member_count = member_count + 1 WHERE id = NEW.class_id;
  UPDATE role_classes SET member_count = member_count - 1 WHERE id = OLD.class_id;
END;
CREATE TRIGGER role_class_members_delete AFTER DELETE ON role_class_members BEGIN
  UPDATE role_classes SET member_count = member_count - 1 WHERE id = OLD.class_id;
END;
-- an emptied class goes, with everything derived from it (cascades)
CREATE TRIGGER role_classes_empty AFTER UPDATE OF member_count ON role_classes WHEN NEW.member_count <= 0 BEGIN
  DELETE FROM role_classes WHERE id = NEW.id;
END;
CREATE TRIGGER identities_delete_class AFTER DELETE ON identities BEGIN
  DELETE FROM role_class_members WHERE kind = 'identity' AND entity_id = OLD.id;
END;
CREATE TRIGGER services_delete_class AFTER DELETE ON services BEGIN
  DELETE FROM role_class_members WHERE kind = 'service' AND entity_id = OLD.id;
END;
CREATE TRIGGER edge_routers_delete_class AFTER DELETE ON edge_routers BEGIN
  DELETE FROM role_class_members WHERE kind = 'edge-router' AND entity_id = OLD.id;
END;
CREATE TRIGGER posture_checks_delete_class AFTER DELETE ON posture_checks BEGIN
  DELETE FROM role_class_members WHERE kind = 'posture-check' AND entity_id = OLD.id;
END;

-- Which policies match which classes (one row per policy side and matched class).
CREATE TABLE class_policies (
  policy_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  class_id INTEGER NOT NULL REFERENCES role_classes(id) ON DELETE CASCADE,
  PRIMARY KEY (policy_id, kind, class_id)
) WITHOUT ROWID;
CREATE INDEX class_policies_class ON class_policies(class_id, policy_id);

-- Access between classes, counted in contributing policies.
CREATE TABLE service_access (
  identity_class INTEGER NOT NULL REFERENCES role_classes(id) ON DELETE CASCADE,
  service_class INTEGER NOT NULL REFERENCES role_classes(id) ON DELETE CASCADE,
  dial INTEGER NOT NULL,
  bind INTEGER NOT NULL,
  PRIMARY KEY (identity_class, service_class)
) WITHOUT ROWID;
CREATE INDEX service_access_service ON service_access(service_class, identity_class);
CREATE TABLE identity_router_access (
  identity_class INTEGER NOT NULL REFERENCES role_classes(id) ON DELETE CASCADE,
  router_class INTEGER NOT NULL REFERENCES role_classes(id) ON DELETE CASCADE,
  n INTEGER NOT NULL,
  PRIMARY KEY (identity_class, router_class)
) WITHOUT ROWID;
CREATE INDEX identity_router_access_router ON identity_router_access(router_class, identity_class);
CREATE TABLE service_router_access (
  service_class INTEGER NOT NULL REFERENCES role_classes(id) ON DELETE CASCADE,
  router_class INTEGER NOT NULL REFERENCES role_classes(id) ON DELETE CASCADE,
  n INTEGER NOT NULL,
  PRIMARY KEY (service_class, router_class)
) WITHOUT ROWID;
CREATE INDEX service_router_access_router ON service_router_access(router_class, service_class);

-- When an identity's service list last changed: per identity and per identity class.
CREATE TABLE identity_service_changes (
  identity_id TEXT PRIMARY KEY REFERENCES identities(id) ON DELETE CASCADE,
  changed_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE class_service_changes (
  class_id INTEGER PRIMARY KEY REFERENCES role_classes(id) ON DELETE CASCADE,
  changed_at TEXT NOT NULL
);
`);
}
