import type { Core } from '../core';

/**
 * Marks `key` used until `expiresAt`; false when it already was (by this node or another on the same database).
 * Expired marks are dropped as new ones come.
 */
export async function markUsedOnce(core: Core, key: string, expiresAt: Date, now: Date): Promise<boolean> {
  const store = core.store;
  await store.runSql('DELETE FROM used_once WHERE expires_at < ?', now.toISOString());
  return (
    (await store.runSql('INSERT INTO used_once (key, expires_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', key, expiresAt.toISOString()))
      .changes === 1
  );
}
