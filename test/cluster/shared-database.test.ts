// Two Weft apps in one process on one PostgreSQL database: what must hold across nodes, observed step by step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integrityOf } from '../../src/main/core/ops/integrity';
import { markUsedOnce } from '../../src/main/core/auth/usedOnce';
import { deriveKeys } from '../../src/main/frontend/keys';
import { LoginStates } from '../../src/main/frontend/loginState';
import { joinedTestApp, startTestApp, type TestApp } from '../support/app';
import { ENCRYPTION_KEY, SIGNING_KEY } from '../support/browser';
import type { ApiClient } from '../support/client';
import { startPostgres, type PostgresServer } from '../support/postgres';

let pg: PostgresServer;
let a: TestApp;
let b: TestApp;
let adminA: ApiClient;
let adminB: ApiClient;

beforeAll(async () => {
  pg = await startPostgres();
  const database = await pg.createDatabase();
  a = await startTestApp({ database });
  // one built-in router per network name: the second node runs none here (the multi-node test gives each its own)
  b = await joinedTestApp(a);
  [adminA, adminB] = await Promise.all([a.adminClient(), b.adminClient()]);
});

afterAll(async () => {
  await adminA?.close();
  await adminB?.close();
  await b?.stop();
  await a?.stop();
  await pg?.stop();
});

describe('two nodes on one database', () => {
  it('run one data integrity check at a time between them, and both report it', async () => {
    let held: (() => Promise<void>) | undefined;
    integrityOf(a.core).schedule = (run) => (held = run);
    expect((await adminA.post('/database/check-data-integrity')).status).toBe(202);
    const second = await adminB.post('/database/fix-data-integrity');
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe('RATE_LIMITED');
    expect((await adminB.get('/database/data-integrity-results')).body.data).toMatchObject({ inProgress: true, fixingErrors: false });
    await held!();
    const done = (await adminB.get('/database/data-integrity-results')).body.data;
    expect(done).toMatchObject({ inProgress: false, error: null, results: [] });
    expect(done.endTime).toEqual(expect.any(String));
    // now B may run one
    let running: Promise<void> | undefined;
    integrityOf(b.core).schedule = (run) => void (running = run());
    expect((await adminB.post('/database/check-data-integrity')).status).toBe(202);
    await running;
  });

  it('consume an OAuth login state once, whichever node the browser comes back to', async () => {
    const keys = deriveKeys(SIGNING_KEY, ENCRYPTION_KEY);
    const settings = { cookieName: 'svc-auth-session', cookieDomain: 'weft.test', secure: false, lifetimeMs: 300_000 };
    const onNode = (app: TestApp) =>
      new LoginStates(keys, { ...settings, usedOnce: (key, exp, now) => markUsedOnce(app.core, key, new Date(exp), new Date(now)) });
    const [nodeA, nodeB] = [onNode(a), onNode(b)];
    const now = Date.now();
    const login = await nodeA.create({ provider: 'github', share: 'sh', originalUrl: 'http://sh.share.weft.test/' }, now);
    const cookie = login.bindingCookie.split(';')[0]!;
    expect(await nodeB.consume(login.state, 'github', cookie, now)).toMatchObject({ ok: true });
    expect(await nodeA.consume(login.state, 'github', cookie, now)).toMatchObject({ ok: false, reason: 'replayed' });
    expect(await nodeB.consume(login.state, 'github', cookie, now)).toMatchObject({ ok: false, reason: 'replayed' });
  });
});
