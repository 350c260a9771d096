import type { Store } from './db';

/**
 * A value of the settings table, made by `create` (and kept) the first time it is asked for. Nodes starting together
 * on one database all get the value of the first to write it.
 */
export function setting(store: Store, key: string, create: () => string): string {
  const row = store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', key);
  if (row) return row.value;
  store.runSql('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', key, create());
  return store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', key)!.value;
}
