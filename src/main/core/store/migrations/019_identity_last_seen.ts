import type { MigrationTarget } from '../db';

/**
 * An identity's last seen time that outlives its API sessions: when a session row goes (logout, expiry, revocation, a
 * disabled identity, any DELETE), a trigger keeps its last activity here, only ever moving forward. Removed with the
 * identity (the cascade; a session deleted by that same cascade keeps nothing, its identity being gone). Identities
 * show max(this, their live sessions' activity) as `lastSeenAt` (core/policy/identities.ts). A table of its own, not a
 * column of `identities`: a write there is a write of the identity (its change events, the policy tests' runs).
 */
export function up(db: MigrationTarget): void {
  db.exec(`
CREATE TABLE identity_last_seen (
  identity_id TEXT PRIMARY KEY REFERENCES identities(id) ON DELETE CASCADE,
  last_seen_at TEXT NOT NULL
);
CREATE TRIGGER identity_last_seen_kept AFTER DELETE ON api_sessions BEGIN
  INSERT INTO identity_last_seen (identity_id, last_seen_at)
    SELECT OLD.identity_id, OLD.last_activity_at WHERE EXISTS (SELECT 1 FROM identities i WHERE i.id = OLD.identity_id)
    ON CONFLICT (identity_id) DO UPDATE SET last_seen_at = excluded.last_seen_at
    WHERE excluded.last_seen_at > identity_last_seen.last_seen_at;
END;`);
}
