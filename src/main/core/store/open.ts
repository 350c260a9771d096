import { join } from 'node:path';
import type { Store } from './db';
import { PostgresStore } from './postgres';
import { SqliteStore } from './sqlite';

/** A PostgreSQL connection URL (postgres:// or postgresql://). */
export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url);

/**
 * The store a `store.url` names: a PostgreSQL URL, or the path of a SQLite file (default: weft.db in the data
 * directory).
 */
export function openStore(url: string | undefined, dataDir: string): Store {
  if (url && isPostgresUrl(url)) return new PostgresStore(url);
  return new SqliteStore(url ? url.replace(/^sqlite:(\/\/)?/i, '') : join(dataDir, 'weft.db'));
}

/** A URL fit for logs and screens: the password, if any, is masked. */
export function redactStoreUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]+:)[^@]*@/i, '$1***@');
}
