import type { Store } from '../store/db';

/** Keeps the role_attributes index table in step with an entity's roleAttributes. */
export async function syncRoleAttributes(store: Store, entityType: string, id: string, attrs: readonly string[]): Promise<void> {
  // in order, together (one round trip on PostgreSQL)
  await store.batch([
    { sql: 'DELETE FROM role_attributes WHERE entity_type = ? AND entity_id = ?', params: [entityType, id] },
    ...[...new Set(attrs)].map((attr) => ({
      sql: 'INSERT INTO role_attributes (entity_type, attr, entity_id) VALUES (?, ?, ?)',
      params: [entityType, attr, id],
    })),
  ]);
}

export async function deleteRoleAttributes(store: Store, entityType: string, id: string): Promise<void> {
  await store.runSql('DELETE FROM role_attributes WHERE entity_type = ? AND entity_id = ?', entityType, id);
}
