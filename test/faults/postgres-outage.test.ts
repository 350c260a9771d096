// PostgreSQL goes away under write load on three Weft nodes (real processes): stopped and started again, and every
// Weft backend terminated mid-work. No node exits, every answer is a 201 or a 503 in the envelope, nothing that was
// acknowledged is lost, and writes resume without a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg_ from 'pg';
import type { ApiClient, Resp } from '../support/client';
import { CLUSTER_PASSWORD, startCluster } from '../support/cluster';
import { startPostgres, type PostgresServer } from '../support/postgres';
import type { WeftProcess } from '../support/weftProcess';

let pg: PostgresServer;
let database: string;
let nodes: WeftProcess[] = [];
let admins: ApiClient[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  database = await pg.createDatabase();
  nodes = await startCluster(database);
  admins = await Promise.all(nodes.map((n) => n.login('admin', CLUSTER_PASSWORD)));
});
afterAll(async () => {
  await Promise.all(admins.map((a) => a.close()));
  await Promise.all(nodes.map((n) => n.stop()));
  await pg?.stop();
});

/**
 * Six workers create services round-robin on the three nodes; `fault(n)` is called (once per request number, by the
 * worker that takes it) and may break things; the run ends once `enough()` holds after the last fault.
 */
async function writeLoad(prefix: string, fault: (n: number) => Promise<void>, enough: (okAfterFaults: number) => boolean) {
  const acknowledged: string[] = [];
  const answers: Resp[] = [];
  const unexpected: string[] = [];
  let next = 0;
  let okAfterFaults = 0;
  let faultsDone = false;
  const worker = async () => {
    while (!(faultsDone && enough(okAfterFaults))) {
      const n = next++;
      if (n > 20_000) throw new Error('writes did not resume');
      const r = await admins[n % 3]!.post('/services', { name: `${prefix}-${n}`, encryptionRequired: true }).catch((e: Error) => {
        unexpected.push(`request ${n}: ${e.message}`);
        return undefined;
      });
      if (r) answers.push(r);
      if (r?.status === 201) {
        acknowledged.push(r.body.data.id);
        if (faultsDone) okAfterFaults++;
      } else if (r && (r.status !== 503 || r.body.error?.code !== 'SERVICE_UNAVAILABLE')) {
        unexpected.push(`request ${n}: ${r.status} ${r.text}`);
      }
      await fault(n);
    }
  };
  const run = Promise.all(Array.from({ length: 6 }, worker));
  return {
    run,
    faultsDone: () => void (faultsDone = true),
    result: async () => {
      await run;
      return { acknowledged, answers, unexpected };
    },
  };
}

async function stored(prefix: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let offset = 0; ; offset += 500) {
    const page = (await admins[0]!.get(`/services?filter=${encodeURIComponent(`name contains "${prefix}-"`)}&limit=500&offset=${offset}`)).body;
    for (const s of page.data as Array<{ id: string }>) ids.add(s.id);
    if (offset + 500 >= page.meta.pagination.totalCount) return ids;
  }
}

function expectNodesAlive() {
  for (const node of nodes) {
    expect({ exit: node.proc.exitCode, signal: node.proc.signalCode }).toEqual({ exit: null, signal: null });
    expect(node.stderr()).not.toMatch(/Unhandled|uncaught/i);
  }
}

describe('PostgreSQL goes away under write load on three nodes', () => {
  it('stopped and started again: 201 or 503 only, no node exits, nothing acknowledged lost, writes resume by themselves', async () => {
    let stage: 'up' | 'stopping' | 'down' | 'starting' | 'restarted' = 'up';
    let downAt = 0;
    // the workers call `fault` only after their first request, once `load` is set
    const load: Awaited<ReturnType<typeof writeLoad>> = await writeLoad(
      'outage',
      async (n) => {
        if (stage === 'up' && n >= 60) {
          stage = 'stopping';
          await pg.halt(); // fast shutdown: connections are cut mid-work
          downAt = n;
          stage = 'down';
        } else if (stage === 'down' && n >= downAt + 60) {
          stage = 'starting';
          await pg.resume();
          stage = 'restarted';
          load.faultsDone();
        }
      },
      (ok) => ok >= 60,
    );
    const { acknowledged, answers, unexpected } = await load.result();
    expect(unexpected).toEqual([]);
    expect(answers.filter((r) => r.status === 503).length).toBeGreaterThan(0);
    expectNodesAlive();
    const ids = await stored('outage');
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);
    // every node writes again
    for (const admin of admins)
      expect((await admin.post('/services', { name: `outage-after-${admin.baseUrl}`, encryptionRequired: true })).status).toBe(201);
  });

  it('every Weft backend terminated mid-work, again and again: 201 or 503 only, no node exits, nothing acknowledged lost', async () => {
    const admin = new pg_.Client({ connectionString: database });
    await admin.connect();
    let kills = 0;
    // the workers call `fault` only after their first request, once `load` is set
    const load: Awaited<ReturnType<typeof writeLoad>> = await writeLoad(
      'terminated',
      async (n) => {
        if (n % 25 !== 0 || kills >= 6) return;
        kills++;
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'weft' AND pid <> pg_backend_pid()");
        if (kills === 6) load.faultsDone();
      },
      (ok) => ok >= 60,
    );
    const { acknowledged, unexpected } = await load.result();
    await admin.end();
    expect(unexpected).toEqual([]);
    expectNodesAlive();
    const ids = await stored('terminated');
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);
  });
});
