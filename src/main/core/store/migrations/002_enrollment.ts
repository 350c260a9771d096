import type Database from 'better-sqlite3';

/** PKI and enrollment: CAs, enrollments, edge routers and routers, API-session certificates. */
export function up(db: Database.Database): void {
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
`);
}
