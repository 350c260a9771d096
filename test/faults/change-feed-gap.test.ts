// On PostgreSQL a node hears other nodes' changes through LISTEN. When that connection is lost, the changes made
// meanwhile are never told: once it is back the node drops its cached replies and its edge router checks what it
// holds against the database (here: an API session another node deleted while the feed was down closes the SDK's
// connection, without waiting for the router's periodic sweep).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg_ from 'pg';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { deviceSession, enrolledDevice, RawEdge } from '../support/edge';
import { startPostgres, type PostgresServer } from '../support/postgres';

let pg: PostgresServer;
let database: string;
let app: TestApp;
let admin: ApiClient;

beforeAll(async () => {
  pg = await startPostgres();
  database = await pg.createDatabase();
  app = await startTestApp({ database });
  admin = await app.adminClient();
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
  await pg?.stop();
});

describe('a node whose change feed was down', () => {
  it('catches up once it is back: its router closes a connection whose API session another node deleted meanwhile', async () => {
    const device = await enrolledDevice(app, admin, 'gap-device');
    const { client, token } = await deviceSession(app, device);
    const apiSessionId = (await client.get('/current-api-session', { api: 'client' })).body.data.id as string;
    const edge = await RawEdge.connect(app.urls.router!, app.core.pki.caBundlePem, { cert: device.cert, key: device.key });
    await edge.hello(token);

    const name = new URL(database).pathname.slice(1);
    const server = new pg_.Client({ connectionString: pg.adminUrl });
    const otherNode = new pg_.Client({ connectionString: database });
    await Promise.all([server.connect(), otherNode.connect()]);
    try {
      // the feed goes down and cannot come back yet (connections already open stay open)
      await server.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      const { rowCount } = await server.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", [
        name,
      ]);
      expect(rowCount).toBe(1);
      // "another node" ends the API session: its notification reaches no one
      expect((await otherNode.query('DELETE FROM api_sessions WHERE id = $1', [apiSessionId])).rowCount).toBe(1);
      expect(edge.closed).toBeUndefined();
      await server.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
      // the feed reconnects by itself; the router (sweeping every 30 s) re-checks at once
      await edge.until(() => edge.closed, 10_000);
      expect((await client.get('/current-api-session', { api: 'client' })).status).toBe(401);
    } finally {
      await server.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
      await Promise.all([server.end(), otherNode.end(), client.close()]);
    }
  });
});
