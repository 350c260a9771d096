import { join, resolve } from 'node:path';
import type { Store } from './db';
import { PostgresStore } from './postgres';
import { SqliteStore } from './sqlite';

/** A PostgreSQL connection URL (postgres:// or postgresql://). */
export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url);

/** The SQLite file a `store.url` names (default: weft.db in the data directory), or undefined for PostgreSQL. */
export function sqliteFile(url: string | undefined, dataDir: string): string | undefined {
  if (url && isPostgresUrl(url)) return undefined;
  return resolve(url ? url.replace(/^sqlite:(\/\/)?/i, '') : join(dataDir, 'weft.db'));
}

/** The store a `store.url` names: a PostgreSQL URL, or a SQLite file (see sqliteFile). */
export function openStore(url: string | undefined, dataDir: string): Store {
  const file = sqliteFile(url, dataDir);
  return file ? new SqliteStore(file) : new PostgresStore(url!);
}

/** A URL fit for logs and screens: the password, if any, is masked. */
export function redactStoreUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]+:)[^@]*@/i, '$1***@');
}
