// PostgreSQL goes away while a certificate renewal is due: the check fails cleanly (logged, the process keeps
// running), the renewed server certificate the core took is presented by the listeners all the same, nothing is
// half-done, and the next check once the database is back finishes the rest (this node's /controllers row, the
// built-in router's renewal) by itself. And two nodes on one database, checking at once, each renew their own.
import { X509Certificate } from 'node:crypto';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/clock';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyClusterKey, startTestApp, tempDir, type TestApp } from '../support/app';
import { certificateInventory } from '../../src/main/core/ops/index';
import { isIssuedBy } from '../../src/main/core/pki/index';
import { startPostgres, type PostgresServer } from '../support/postgres';

const DAY = 86_400_000;
const clock = new ManualClock();
let pg: PostgresServer;
let app: TestApp;

/** The leaf certificate a listener presents (a real handshake; its dates are the simulated clock's business). */
async function presented(port: number): Promise<string> {
  const socket = await new Promise<TLSSocket>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => resolve(s));
    s.once('error', reject);
  });
  try {
    return new X509Certificate(socket.getPeerCertificate(true).raw).fingerprint.replace(/:/g, '').toLowerCase();
  } finally {
    socket.destroy();
  }
}
const sha1 = (pem: string) => new X509Certificate(pem).fingerprint.replace(/:/g, '').toLowerCase();

beforeAll(async () => {
  pg = await startPostgres();
  app = await startTestApp({ clock, database: await pg.createDatabase() });
  await app.certificates.check();
});
afterAll(async () => {
  await app?.stop();
  await pg?.stop();
});

describe('certificate renewal with the database away', () => {
  it('fails cleanly, presents what the core took, and completes once the database is back', async () => {
    const apiPort = Number(new URL(app.urls.api).port);
    const routerPort = Number(/:(\d+)$/.exec(app.urls.router!)![1]);
    const before = { server: app.core.pki.server.certPem, router: await presented(routerPort) };
    clock.advance(250 * DAY);

    await pg.halt();
    await expect(app.certificates.check()).rejects.toThrow();
    // the server certificate (files only) was renewed and taken: the listener presents it; the router's (which needs
    // the database) was not touched
    const renewed = app.core.pki.server.certPem;
    expect(renewed).not.toBe(before.server);
    expect(await presented(apiPort)).toBe(sha1(renewed));
    expect(await presented(routerPort)).toBe(before.router);

    await pg.resume();
    const check = await app.certificates.check();
    expect(check).toMatchObject({ serverRenewed: false, routerRenewed: true });
    expect(await presented(routerPort)).not.toBe(before.router);
    const row = await app.core.store.getSql<{ fingerprint: string }>('SELECT fingerprint FROM controllers');
    expect(row?.fingerprint).toBe(sha1(renewed));
    expect(app.core.pki.server.certPem).toBe(renewed);
  }, 120_000);
});

describe('two nodes on one PostgreSQL database', () => {
  const shared = new ManualClock();
  const nodes: TestApp[] = [];
  afterAll(async () => {
    for (const n of nodes) await n.stop();
  });

  it('each renews its own server and router certificates, at the same moment; the shared CAs stay as they were', async () => {
    const database = await pg.createDatabase();
    nodes.push(await startTestApp({ clock: shared, database }));
    const dir2 = tempDir();
    copyClusterKey(nodes[0]!.dataDir, dir2);
    writeFileSync(join(dir2, 'node2.yml'), 'router:\n  name: er-node2\n');
    nodes.push(await startTestApp({ clock: shared, database, dataDir: dir2, configFile: join(dir2, 'node2.yml') }));
    await Promise.all(nodes.map((n) => n.certificates.check()));
    const before = nodes.map((n) => n.core.pki);
    expect(before[1]!.caBundlePem).toBe(before[0]!.caBundlePem);

    shared.advance(250 * DAY);
    const checks = await Promise.all(nodes.map((n) => n.certificates.check()));
    for (const c of checks) expect(c).toMatchObject({ serverRenewed: true, routerRenewed: true });
    const after = nodes.map((n) => n.core.pki);
    expect(after[0]!.caBundlePem).toBe(before[0]!.caBundlePem);
    expect(after[1]!.caBundlePem).toBe(before[0]!.caBundlePem);
    const rows = await nodes[0]!.core.store.allSql<{ fingerprint: string }>('SELECT fingerprint FROM controllers ORDER BY fingerprint');
    expect(rows.map((r) => r.fingerprint)).toEqual(after.map((p) => sha1(p.server.certPem)).sort());
    // each node's inventory lists both nodes' server certificates, as they are now
    const servers = (await certificateInventory(nodes[0]!.core)).filter((e) => e.kind === 'server').map((e) => e.fingerprint);
    expect(servers.sort()).toEqual(after.map((p) => sha1(p.server.certPem)).sort());
    for (const [i, p] of after.entries()) {
      expect(p.server.certPem).not.toBe(before[i]!.server.certPem);
      expect(isIssuedBy(p.server.certPem, p.intermediate.certPem)).toBe(true);
      expect(await presented(Number(new URL(nodes[i]!.urls.api).port))).toBe(sha1(p.server.certPem));
    }
  }, 120_000);
});
