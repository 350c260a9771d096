import type { MigrationTarget } from '../db';

/**
 * Revocations (OpenZiti's /revocations): the id is the revoked thing's id (a JWT id, an identity, an API session);
 * `issued_before` is when the revocation was made (credentials issued before it are revoked).
 */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE TABLE revocations (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL CHECK (type IN ('JTI', 'IDENTITY', 'API_SESSION')),
  expires_at TEXT NOT NULL,
  issued_before TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX revocations_expires_at ON revocations(expires_at);
`);
}
