import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openSecretKey, loadOrCreateSecretKey, SECRET_KEY_FILE, SecretBox, SecretBoxError } from '../auth/index';
import { CA_FILES } from '../pki/index';
import type { Store } from '../store/db';

/** The data directory's files every node of a network shares, by path relative to the data directory. */
export const SHARED_FILES: readonly string[] = [...CA_FILES.map((f) => `pki/${f}`), SECRET_KEY_FILE];

/**
 * The key the shared files are sealed with in the database: a database dump alone gives away neither the CA keys nor
 * the key of the secrets at rest. The first node makes it; every other node needs a copy in its data directory.
 */
export const CLUSTER_KEY_FILE = 'cluster.key';

export class SharedFilesError extends Error {}

/**
 * This node's PKI (`load` reads or creates it in the data directory). On PostgreSQL it is the network's: every node
 * has the same CA and secret key; the first publishes its own, the others adopt them, and so does a node whose own
 * lost the race to be first. On SQLite the data directory's own.
 */
export async function loadNetworkPki<T>(store: Store, dataDir: string, now: Date, load: () => Promise<T>): Promise<T> {
  if (store.dialect !== 'postgres') return load();
  await adoptSharedFiles(store, dataDir);
  const pki = await load();
  await openSecretKey(store, dataDir);
  if (await publishSharedFiles(store, dataDir, now)) return pki;
  await adoptSharedFiles(store, dataDir, { replace: true });
  return load();
}

async function clusterBox(store: Store, dataDir: string): Promise<SecretBox> {
  const file = join(dataDir, CLUSTER_KEY_FILE);
  return new SecretBox(
    await loadOrCreateSecretKey(file, {
      mayCreate: async () =>
        (await store.getSql('SELECT 1 AS x FROM shared_files LIMIT 1'))
          ? `this network's CA and keys are sealed in its database with the ${CLUSTER_KEY_FILE} of the node that created it: copy that file (mode 0600) into ${dataDir}`
          : undefined,
    }),
  );
}

const context = (name: string) => `shared file ${name}`;

/**
 * Writes the files the network's database holds into this node's data directory where they are missing: a node
 * joining a network on PostgreSQL takes its CA and secret key. A file that differs from the network's is refused (it
 * belongs to another network), unless `replace` (this node's own files just lost the race to be the network's).
 * Returns the names written.
 */
async function adoptSharedFiles(store: Store, dataDir: string, opts: { replace?: boolean } = {}): Promise<string[]> {
  const stored = await store.allSql<{ name: string; content: string }>('SELECT name, content FROM shared_files ORDER BY name');
  if (!stored.length) return [];
  const box = await clusterBox(store, dataDir);
  const written: string[] = [];
  for (const r of stored) {
    if (!SHARED_FILES.includes(r.name)) continue;
    let content: Buffer;
    try {
      content = Buffer.from(box.open(r.content, context(r.name)), 'base64');
    } catch (e) {
      if (!(e instanceof SecretBoxError)) throw e;
      throw new SharedFilesError(`${join(dataDir, CLUSTER_KEY_FILE)} is not this network's: copy the one of the node that created the network`);
    }
    const file = join(dataDir, r.name);
    if (existsSync(file)) {
      if (readFileSync(file).equals(content)) continue;
      if (!opts.replace) {
        throw new SharedFilesError(`${file} differs from this network's (the data directory belongs to another network): move it aside`);
      }
    }
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, content, { mode: 0o600 });
    written.push(r.name);
  }
  return written;
}

/**
 * Stores this node's files, sealed, where the database holds none yet (the first node of a network publishes its
 * own). Returns false when another node's files got there first: the caller adopts them and loads its PKI again.
 */
async function publishSharedFiles(store: Store, dataDir: string, now: Date): Promise<boolean> {
  const box = await clusterBox(store, dataDir);
  return store.tx(async () => {
    let same = true;
    for (const name of SHARED_FILES) {
      const file = join(dataDir, name);
      if (!existsSync(file)) continue;
      const mine = readFileSync(file);
      const sealed = box.seal(mine.toString('base64'), context(name));
      await store.runSql(
        'INSERT INTO shared_files (name, content, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
        name,
        sealed,
        now.toISOString(),
      );
      const stored = (await store.getSql<{ content: string }>('SELECT content FROM shared_files WHERE name = ?', name))!.content;
      if (!Buffer.from(box.open(stored, context(name)), 'base64').equals(mine)) same = false;
    }
    return same;
  });
}
