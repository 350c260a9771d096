import type { Store } from './db';

/**
 * A value of the settings table, made by `create` (and kept) the first time it is asked for. Nodes starting together
 * on one database all get the value of the first to write it.
 */
export async function setting(store: Store, key: string, create: () => string): Promise<string> {
  const row = await store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', key);
  if (row) return row.value;
  await store.runSql('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', key, create());
  return (await store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', key))!.value;
}
