import type { Store } from '../store/db';

/** OpenZiti's default CA identity name format. */
export const DEFAULT_IDENTITY_NAME_FORMAT = '[caName]-[commonName]';

/** Expands `[caName]`, `[caId]`, `[commonName]`, `[requestedName]`, `[identityId]` in a CA's identity name format. */
export function formatIdentityName(
  format: string,
  symbols: Record<'caName' | 'caId' | 'commonName' | 'requestedName' | 'identityId', string>,
): string {
  return (format || DEFAULT_IDENTITY_NAME_FORMAT).replace(
    /\[(caName|caId|commonName|requestedName|identityId)\]/g,
    (_, k: keyof typeof symbols) => symbols[k],
  );
}

/** `name`, or `name` + a six digit counter (000001, ...) when the name is taken. */
export async function uniqueIdentityName(store: Store, name: string): Promise<string> {
  const taken = new Set(
    (
      await store.allSql<{ name: string }>(
        `SELECT name FROM identities WHERE name = ? OR (${store.sql.like('name', '?', '\\')} AND length(name) = ?)`,
        name,
        `${name.replace(/[\\%_]/g, '\\$&')}%`,
        name.length + 6,
      )
    ).map((r) => r.name),
  );
  if (!taken.has(name)) return name;
  for (let i = 1; ; i++) {
    const candidate = `${name}${String(i).padStart(6, '0')}`;
    if (!taken.has(candidate)) return candidate;
  }
}
