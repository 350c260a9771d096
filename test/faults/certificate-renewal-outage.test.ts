// PostgreSQL goes away while a certificate renewal is due: the check fails cleanly (logged, the process keeps
// running), the renewed server certificate the core took is presented by the listeners all the same, nothing is
// half-done, and the next check once the database is back finishes the rest (this node's /controllers row, the
// built-in router's renewal) by itself.
import { X509Certificate } from 'node:crypto';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/clock';
import { startTestApp, type TestApp } from '../support/app';
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
