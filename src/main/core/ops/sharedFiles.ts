import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SECRET_KEY_FILE } from '../auth/secretBox';
import { CA_FILES } from '../pki/controllerPki';
import type { Store } from '../store/db';

/** The data directory's files every node of a network shares, by path relative to the data directory. */
export const SHARED_FILES: readonly string[] = [...CA_FILES.map((f) => `pki/${f}`), SECRET_KEY_FILE];

/**
 * Writes the files the network's database holds into this node's data directory (replacing what differs): a node
 * joining a network on PostgreSQL takes its CA and secret key. Returns the names written.
 */
export function adoptSharedFiles(store: Store, dataDir: string): string[] {
  const written: string[] = [];
  for (const r of store.allSql<{ name: string; content: Buffer }>('SELECT name, content FROM shared_files ORDER BY name')) {
    if (!SHARED_FILES.includes(r.name)) continue;
    const file = join(dataDir, r.name);
    if (existsSync(file) && readFileSync(file).equals(r.content)) continue;
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, r.content, { mode: 0o600 });
    written.push(r.name);
  }
  return written;
}

/**
 * Stores this node's files where the database holds none yet (the first node of a network publishes its own).
 * Returns false when another node's files got there first: the caller adopts them and loads its PKI again.
 */
export function publishSharedFiles(store: Store, dataDir: string, now: Date): boolean {
  return store.tx(() => {
    let same = true;
    for (const name of SHARED_FILES) {
      const file = join(dataDir, name);
      if (!existsSync(file)) continue;
      const mine = readFileSync(file);
      store.runSql(
        'INSERT INTO shared_files (name, content, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
        name,
        mine,
        now.toISOString(),
      );
      const stored = store.getSql<{ content: Buffer }>('SELECT content FROM shared_files WHERE name = ?', name)!.content;
      if (!Buffer.from(stored).equals(mine)) same = false;
    }
    return same;
  });
}
