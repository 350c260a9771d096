import type { Store } from './db';

/** A value of the settings table, made by `create` (and kept) the first time it is asked for. */
export function setting(store: Store, key: string, create: () => string): string {
  const row = store.getSql<{ value: string }>('SELECT value FROM settings WHERE key = ?', key);
  if (row) return row.value;
  const value = create();
  store.runSql('INSERT INTO settings (key, value) VALUES (?, ?)', key, value);
  return value;
}
