// Three Weft processes on one PostgreSQL database: one network, whichever node a client reaches.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import pg_ from 'pg';
import { Agent, request } from 'undici';
import { ApiClient } from '../support/client';
import { startCluster, startNode, within, CLUSTER_PASSWORD } from '../support/cluster';
import { csr } from '../support/pki';
import { startPostgres, type PostgresServer } from '../support/postgres';
import type { WeftProcess } from '../support/weftProcess';
import { enrolledRouter, runRouter } from '../interop/stockRouters';
import { openzitiTools } from '../interop/tools';

let pg: PostgresServer;
let database: string;
let nodes: WeftProcess[] = [];
let admins: ApiClient[] = [];

async function pgQuery(sql: string, params: unknown[]): Promise<any[]> {
  const c = new pg_.Client({ connectionString: database });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

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

describe('three Weft nodes on one PostgreSQL database', () => {
  it('share one CA, and /controllers lists every node with its API addresses, online', async () => {
    expect(new Set(nodes.map((n) => n.caPem())).size).toBe(1);
    for (const admin of admins) {
      const list = (await admin.get('/controllers')).body.data as Array<Record<string, any>>;
      expect(list).toHaveLength(3);
      for (const node of nodes) {
        const row = list.find((c) => c.apiAddresses['edge-management'][0].url.startsWith(node.api));
        expect(row, node.api).toMatchObject({ isOnline: true });
      }
    }
    // and every node runs its own edge router
    const routers = (await admins[0]!.get('/edge-routers')).body.data as Array<Record<string, any>>;
    expect(
      routers
        .filter((r) => r.name.startsWith('er-node-') && r.isOnline)
        .map((r) => r.name)
        .sort(),
    ).toEqual(['er-node-1', 'er-node-2', 'er-node-3']);
  });

  it('keeps the CA and secret keys sealed in the database: a node without the cluster key refuses to join', async () => {
    const raw = new pg_.Client({ connectionString: database });
    await raw.connect();
    const stored = (await raw.query('SELECT name, content FROM shared_files ORDER BY name')).rows as Array<{ name: string; content: string }>;
    await raw.end();
    expect(stored.map((r) => r.name)).toContain('pki/root-ca.key.pem');
    for (const r of stored) expect(r.content).not.toMatch(/PRIVATE KEY|CERTIFICATE/);
    await expect(startNode(database, 4)).rejects.toThrow(/cluster\.key/);
  });

  it('an API session made on one node works on the others', async () => {
    const session = (await admins[0]!.get('/current-api-session')).body.data;
    for (const node of nodes.slice(1)) {
      const c = new ApiClient(node.api, node.caPem());
      c.token = admins[0]!.token;
      const r = await c.get('/current-api-session');
      expect(r.status).toBe(200);
      expect(r.body.data.id).toBe(session.id);
      await c.close();
    }
  });

  it('a policy change made on one node is visible through the others within 1 s', async () => {
    const admin = admins[0]!;
    const identityId = await admin.create('/identities', { name: 'cluster-user', type: 'User', isAdmin: false, roleAttributes: ['cluster'] });
    await admin.post('/authenticators', { method: 'updb', identityId, username: 'cluster-user', password: 'cluster-user-password' });
    const serviceId = await admin.create('/services', { name: 'cluster-service', roleAttributes: ['cluster-svc'], encryptionRequired: true });
    const user = new ApiClient(nodes[1]!.api, nodes[1]!.caPem());
    await user.login('cluster-user', 'cluster-user-password');
    const visible = async () => ((await user.get('/services', { api: 'client' })).body.data as Array<{ id: string }>).some((s) => s.id === serviceId);
    expect(await visible()).toBe(false); // and node 2 has this answer cached now
    await admin.create('/service-policies', {
      name: 'cluster-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#cluster'],
      serviceRoles: ['#cluster-svc'],
    });
    expect(await within(1000, visible)).toBeLessThan(1000);
    await user.close();
  });

  it('an enrollment token is single-use across the nodes', async () => {
    const id = await admins[0]!.create('/identities', { name: 'cluster-device', type: 'Device', isAdmin: false, enrollment: { ott: true } });
    const token = (await admins[0]!.get(`/identities/${id}`)).body.data.enrollment.ott.token as string;
    const attempts = await Promise.all(
      nodes.map(async (node) => {
        const { csrPem } = await csr('EC-P256', 'cluster-device');
        const c = new ApiClient(node.api, node.caPem());
        const r = await c.post('/enroll/ott', { token, clientCsr: csrPem }, { api: 'client' });
        await c.close();
        return r.status;
      }),
    );
    expect(attempts.filter((s) => s === 200)).toHaveLength(1);
    expect(attempts.filter((s) => s >= 400 && s < 500)).toHaveLength(2);
  });

  it('an OIDC login may take its steps on different nodes; its tokens work and refresh on any of them', async () => {
    const admin = admins[0]!;
    const identityId = await admin.create('/identities', { name: 'cluster-oidc', type: 'User', isAdmin: false });
    await admin.post('/authenticators', { method: 'updb', identityId, username: 'cluster-oidc', password: 'cluster-oidc-password' });
    const http = nodes.map((n) => new Agent({ connect: { ca: n.caPem() } }));
    const call = async (i: number, method: string, path: string, form?: Record<string, string>) => {
      const r = await request(nodes[i]!.api + path, {
        method: method as 'GET',
        dispatcher: http[i],
        ...(form ? { body: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}),
      });
      const text = await r.body.text();
      return { status: r.statusCode, location: String(r.headers.location ?? ''), body: text.startsWith('{') ? JSON.parse(text) : text };
    };
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const redirect = 'http://127.0.0.1:20314/auth/callback';
    const q = new URLSearchParams({
      client_id: 'native',
      redirect_uri: redirect,
      response_type: 'code',
      scope: 'openid offline_access',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      method: 'password',
    });
    const id = /authRequestID=([\w-]+)/.exec((await call(0, 'GET', `/oidc/authorize?${q}`)).location)![1]!;
    expect((await call(1, 'POST', '/oidc/login/username', { id, username: 'cluster-oidc', password: 'cluster-oidc-password' })).status).toBe(302);
    const code = new URL((await call(2, 'GET', `/oidc/authorize/callback?id=${id}`)).location).searchParams.get('code')!;
    const tokens = await call(0, 'POST', '/oidc/oauth/token', {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirect,
      client_id: 'native',
    });
    expect(tokens.status).toBe(200);
    // a code is single-use across the nodes
    expect(
      (
        await call(1, 'POST', '/oidc/oauth/token', {
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: redirect,
          client_id: 'native',
        })
      ).body.error,
    ).toBe('invalid_grant');
    const fresh = await call(2, 'POST', '/oidc/oauth/token', {
      grant_type: 'authorization_code',
      code: 'x',
      code_verifier: verifier,
      redirect_uri: redirect,
      client_id: 'native',
    });
    expect(fresh.body.error).toBe('invalid_grant');
    // the replay ended the session: log in again, then use the tokens signed by node 1 on nodes 2 and 3
    const id2 = /authRequestID=([\w-]+)/.exec((await call(1, 'GET', `/oidc/authorize?${q}`)).location)![1]!;
    await call(2, 'POST', '/oidc/login/username', { id: id2, username: 'cluster-oidc', password: 'cluster-oidc-password' });
    const code2 = new URL((await call(0, 'GET', `/oidc/authorize/callback?id=${id2}`)).location).searchParams.get('code')!;
    const t2 = await call(0, 'POST', '/oidc/oauth/token', {
      grant_type: 'authorization_code',
      code: code2,
      code_verifier: verifier,
      redirect_uri: redirect,
      client_id: 'native',
    });
    expect(t2.status).toBe(200);
    for (const i of [1, 2]) {
      const c = new ApiClient(nodes[i]!.api, nodes[i]!.caPem());
      const r = await c.get('/current-identity', { api: 'client', headers: { authorization: `Bearer ${t2.body.access_token}` } });
      expect(r.status).toBe(200);
      expect(r.body.data.name).toBe('cluster-oidc');
      await c.close();
    }
    // refresh on another node; the used refresh token is refused on a third
    const r1 = await call(1, 'POST', '/oidc/oauth/token', { grant_type: 'refresh_token', refresh_token: t2.body.refresh_token, client_id: 'native' });
    expect(r1.status).toBe(200);
    expect(
      (await call(2, 'POST', '/oidc/oauth/token', { grant_type: 'refresh_token', refresh_token: t2.body.refresh_token, client_id: 'native' })).body
        .error,
    ).toBe('invalid_grant');
    await Promise.all(http.map((a) => a.close()));
  });

  it('SIGKILL of one node under write load: the others keep serving and no acknowledged write is lost', async () => {
    // stock routers: one connected to every node (its enrollment names all their control channels, and a v1.x
    // router connects to each), one that reaches only the node about to die
    const ziti = openzitiTools().ziti;
    const everywhere = await enrolledRouter(ziti, admins[0]!, nodes[2]!.ctrl!, 'stock-everywhere');
    const stock = await enrolledRouter(ziti, admins[2]!, nodes[2]!.ctrl!, 'stock-at-node-3');
    writeFileSync(join(stock.dir, 'endpoints.yml'), `endpoints:\n  - ${nodes[2]!.ctrl}\n`);
    const stockProcs = [runRouter(ziti, everywhere), runRouter(ziti, stock)];
    onTestFinished(async () => {
      for (const p of stockProcs) p.kill('SIGKILL');
      await Promise.all(stockProcs.map((p) => p.exited));
    });
    const online = async (id: string) => (await admins[0]!.get(`/edge-routers/${id}`)).body.data.isOnline === true;
    await within(60_000, async () => (await online(everywhere.id)) && (await online(stock.id)));
    // every node records its connection to the first
    await within(30_000, async () => {
      const rows = await pgQuery('SELECT count(*)::int AS n FROM edge_router_nodes WHERE router_id = $1', [everywhere.id]);
      return rows[0].n === 3;
    });
    const acknowledged: string[] = [];
    const failuresOnSurvivors: number[] = [];
    let killed = false;
    let n = 0;
    const worker = async () => {
      while (n < 240) {
        const i = n++;
        const target = i % 3;
        if (killed && target === 2) {
          // the dead node refuses connections: not acknowledged, and not counted against the survivors
          const r = await admins[2]!.post('/services', { name: `load-${i}`, encryptionRequired: true }).catch(() => undefined);
          expect(r?.status ?? 0).not.toBe(201);
          continue;
        }
        const r = await admins[target]!.post('/services', { name: `load-${i}`, encryptionRequired: true }).catch(() => undefined);
        if (r?.status === 201) acknowledged.push(r.body.data.id);
        else if (target !== 2) failuresOnSurvivors.push(r?.status ?? 0);
        if (i === 90 && !killed) {
          killed = true;
          nodes[2]!.proc.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    expect(killed).toBe(true);
    expect(failuresOnSurvivors).toEqual([]);
    const stored = new Set<string>();
    for (let offset = 0; ; offset += 500) {
      const page = (await admins[0]!.get(`/services?filter=${encodeURIComponent('name contains "load-"')}&limit=500&offset=${offset}`)).body;
      for (const s of page.data as Array<{ id: string }>) stored.add(s.id);
      if (offset + 500 >= page.meta.pagination.totalCount) break;
    }
    expect(acknowledged.length).toBeGreaterThan(150);
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    // the killed node's heartbeat stops: the others report it offline, and the edge router it ran
    await within(30_000, async () => {
      const list = (await admins[0]!.get('/controllers')).body.data as Array<Record<string, any>>;
      return list.some((c) => c.apiAddresses['edge-management'][0].url.startsWith(nodes[2]!.api) && !c.isOnline);
    });
    const routers = (await admins[0]!.get('/edge-routers')).body.data as Array<Record<string, any>>;
    expect(Object.fromEntries(routers.filter((r) => r.name.startsWith('er-node-')).map((r) => [r.name, r.isOnline]))).toEqual({
      'er-node-1': true,
      'er-node-2': true,
      'er-node-3': false,
    });
    // the stock router connected to it alone too; the one connected to the others stays online
    expect(routers.find((r) => r.id === stock.id)?.isOnline).toBe(false);
    expect(routers.find((r) => r.id === everywhere.id)?.isOnline).toBe(true);
  });

  it('while PostgreSQL restarts the nodes answer 503 with the envelope, then recover by themselves', async () => {
    const admin = admins[0]!;
    expect((await admin.get('/identities')).status).toBe(200);
    await pg.halt();
    const down = await admin.get('/identities');
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: expect.any(String) });
    await pg.resume();
    await within(30_000, async () => (await admin.get('/identities')).status === 200);
    expect((await admins[1]!.get('/identities')).status).toBe(200);
    // writes work again, on every surviving node
    expect((await admins[1]!.post('/services', { name: 'after-restart', encryptionRequired: true })).status).toBe(201);
  });
});
