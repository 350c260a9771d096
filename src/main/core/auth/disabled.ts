import type { Row } from '../store/db';

/** An identity row's effective disabled state (lifecycle.ts disables and enables): a timed disable lapses by itself. */
export function isDisabled(row: Row, now: Date): boolean {
  if (!row.disabled) return false;
  return !row.disabled_until || (row.disabled_until as string) > now.toISOString();
}
