import type { Store } from '../store/db';

/** Keeps the role_attributes index table in step with an entity's roleAttributes. */
export async function syncRoleAttributes(store: Store, entityType: string, id: string, attrs: readonly string[]): Promise<void> {
  // queued: on PostgreSQL they go out with the statements that follow them (no round trip of their own)
  await store.queueSql('DELETE FROM role_attributes WHERE entity_type = ? AND entity_id = ?', entityType, id);
  for (const attr of new Set(attrs)) {
    await store.queueSql('INSERT INTO role_attributes (entity_type, attr, entity_id) VALUES (?, ?, ?)', entityType, attr, id);
  }
}

export async function deleteRoleAttributes(store: Store, entityType: string, id: string): Promise<void> {
  await store.runSql('DELETE FROM role_attributes WHERE entity_type = ? AND entity_id = ?', entityType, id);
}
