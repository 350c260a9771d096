import { StoreUnavailableError } from '../store/db';

/** SQLite conditions (and StoreUnavailableError, the PostgreSQL store's) under which the store cannot serve right now (answered 503, not 500). */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|NOTADB|CORRUPT|PROTOCOL)/;

export function isStoreUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  if (err instanceof StoreUnavailableError) return true;
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.test(e.code)) return true;
  // better-sqlite3 after close()
  return err instanceof TypeError && /database connection is not open/i.test(String(e.message));
}
