// Weft nodes as real processes on one PostgreSQL database (the multi-node and fault tests).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyClusterKey, tempDir } from './app';
import { startWeftProcess, type WeftProcess } from './weftProcess';

export const CLUSTER_PASSWORD = 'cluster-admin-password';

/**
 * A node: its own data directory, listeners and built-in router (named after it), the shared database; a node
 * joining the network gets a copy of the cluster key of the node that created it.
 */
export async function startNode(database: string, n: number, clusterKeyFrom?: WeftProcess): Promise<WeftProcess> {
  const dir = tempDir('weft-node-');
  const config = join(dir, 'weft.yaml');
  writeFileSync(config, `router:\n  name: er-node-${n}\n`);
  const dataDir = join(dir, 'data');
  if (clusterKeyFrom) copyClusterKey(clusterKeyFrom.dataDir, dataDir);
  return startWeftProcess(
    dataDir,
    [
      '--config',
      config,
      '--database',
      database,
      '--api-address',
      '127.0.0.1:0',
      '--console-address',
      '127.0.0.1:0',
      '--router-listener',
      'tls:127.0.0.1:0',
    ],
    { WEFT_ADMIN_PASSWORD: CLUSTER_PASSWORD },
  );
}

/** Three nodes: the first creates the network, the others join it together. */
export async function startCluster(database: string, count = 3): Promise<WeftProcess[]> {
  const first = await startNode(database, 1);
  return [first, ...(await Promise.all(Array.from({ length: count - 1 }, (_, i) => startNode(database, i + 2, first))))];
}

/** Polls `probe` until it holds; returns how long that took (fails after `ms`). */
export async function within(ms: number, probe: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await probe())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}
