import Database from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ManualClock, MINUTE } from '../support/clock';
import { foreignKeyViolations, rawDb, rawSql } from '../support/rawDb';
import { createUser, login } from '../support/users';
import { integrityOf } from '../../src/main/core/ops/integrity';

let app: TestApp;
let admin: ApiClient;
let clock: ManualClock;

/** Runs a started integrity run (held by the test) and returns its results. */
let held: (() => Promise<void>) | undefined;
async function finish(): Promise<any> {
  expect(held).toBeDefined();
  const run = held!;
  held = undefined;
  await run();
  const r = await admin.get('/database/data-integrity-results');
  expect(r.status).toBe(200);
  expect(r.body.data.inProgress).toBe(false);
  return r.body.data;
}

beforeAll(async () => {
  clock = new ManualClock();
  app = await startTestApp({ clock });
  admin = await app.adminClient();
  integrityOf(app.core).schedule = (run) => (held = run);
});
afterAll(async () => {
  await admin.close();
  await app.stop();
});

describe('data integrity', () => {
  it('one run at a time across check and fix: a second start is 429 while the first is in progress', async () => {
    const before = await admin.get('/database/data-integrity-results');
    expect(before.body.data).toEqual({
      inProgress: false,
      fixingErrors: false,
      tooManyErrors: false,
      startTime: null,
      endTime: null,
      error: null,
      results: [],
    });
    const start = await admin.post('/database/check-data-integrity');
    expect(start.status).toBe(202);
    expect(start.body.data).toEqual({});
    const running = (await admin.get('/database/data-integrity-results')).body.data;
    expect(running).toMatchObject({ inProgress: true, fixingErrors: false, startTime: clock.now().toISOString(), endTime: null });
    for (const path of ['/database/check-data-integrity', '/database/fix-data-integrity']) {
      const again = await admin.post(path);
      expect(again.status).toBe(429);
      expect(again.body.error.code).toBe('RATE_LIMITED');
      expect(again.headers['retry-after']).toBe('1');
    }
    const done = await finish();
    expect(done).toMatchObject({ inProgress: false, error: null, results: [], endTime: clock.now().toISOString() });
  });

  it('finds corrupted rows (dangling references, orphaned links, a stale index) and the fix repairs them', async () => {
    const userId = await createUser(admin, 'corrupt-user', 'corrupt-password', { roleAttributes: ['blue', 'green'] });
    const { client } = await login(app, 'corrupt-user', 'corrupt-password');
    const sessionId = (await client.get('/current-api-session')).body.data.id;
    // a connection of its own that does not enforce foreign keys (SQLite: foreign_keys off; PostgreSQL: replica role)
    const db = await rawDb(app, { unchecked: true });
    try {
      await db.sql("UPDATE identities SET auth_policy_id = 'vanished-policy' WHERE id = ?", userId);
      await db.sql(
        "INSERT INTO authenticators (id, identity_id, method, username, created_at, updated_at) VALUES ('orphan-auth', 'ghost-identity', 'updb', 'ghost', 'x', 'x')",
      );
      await db.sql("INSERT INTO role_attributes (entity_type, attr, entity_id) VALUES ('identity', 'red', 'ghost-identity')");
      await db.sql("DELETE FROM role_attributes WHERE entity_id = ? AND attr = 'green'", userId);
      await db.sql("UPDATE api_sessions SET authenticator_id = 'gone-authenticator' WHERE id = ?", sessionId);
    } finally {
      await db.close();
    }
    // the database itself sees the dangling references (checked apart from the app)
    const dangling = (await foreignKeyViolations(app)).map((v) => `${String(v.table)} -> ${String(v.parent)}`).sort();
    expect(dangling).toEqual(['authenticators -> identities', 'identities -> auth_policies']);

    expect((await admin.post('/database/check-data-integrity')).status).toBe(202);
    const found = await finish();
    const descriptions = found.results.map((r: any) => r.description);
    expect(found.results.every((r: any) => r.fixed === false)).toBe(true);
    expect(descriptions).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`identities ${userId}: auth_policy_id references missing auth_policies 'vanished-policy'`)),
        expect.stringMatching(/authenticators orphan-auth: identity_id references missing identities 'ghost-identity'/),
        expect.stringMatching(/role attribute 'red' links missing identity 'ghost-identity'/),
        expect.stringMatching(new RegExp(`identity '${userId}': the role attribute index differs`)),
        expect.stringMatching(new RegExp(`api session '${sessionId}' was created by missing authenticator 'gone-authenticator'`)),
      ]),
    );
    expect(found.results, JSON.stringify(descriptions, null, 1)).toHaveLength(5);
    // a check changes nothing
    expect(await rawSql(app, "SELECT count(*) AS n FROM authenticators WHERE id = 'orphan-auth'")).toEqual([{ n: 1 }]);

    expect((await admin.post('/database/fix-data-integrity')).status).toBe(202);
    const fixed = await finish();
    expect(fixed.fixingErrors).toBe(true);
    expect(fixed.results.map((r: any) => r.description)).toEqual(descriptions);
    expect(fixed.results.every((r: any) => r.fixed === true)).toBe(true);

    expect((await admin.post('/database/check-data-integrity')).status).toBe(202);
    expect((await finish()).results).toEqual([]);
    expect(await foreignKeyViolations(app)).toEqual([]);
    expect((await admin.get(`/identities/${userId}`)).body.data.authPolicyId).toBe('default');
    const green = await admin.get(`/identities?roleFilter=${encodeURIComponent('#green')}`);
    expect(green.body.data.map((i: any) => i.id)).toEqual([userId]);
    expect((await client.get('/current-api-session')).status).toBe(401);
    await client.close();
  });

  it('needs ops permissions', async () => {
    await createUser(admin, 'ops-nobody', 'ops-password');
    const { client } = await login(app, 'ops-nobody', 'ops-password');
    expect((await client.post('/database/check-data-integrity')).status).toBe(401);
    expect((await client.post('/database/fix-data-integrity')).status).toBe(401);
    expect((await client.get('/database/data-integrity-results')).status).toBe(401);
    expect((await client.post('/database/snapshot')).status).toBe(401);
    expect(held).toBeUndefined();
    await client.close();
  });
});

describe('database snapshot', () => {
  it('writes a consistent SQLite copy of the network into the data dir, on either store; one per interval (429 with Retry-After before)', async () => {
    const r = await admin.post('/database/snapshot');
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({});
    const dir = join(app.dataDir, 'snapshots');
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^weft-.*\.db$/);

    const snap = new Database(join(dir, files[0]!), { readonly: true, fileMustExist: true });
    expect(snap.pragma('journal_mode', { simple: true })).toBe('delete');
    try {
      expect(snap.pragma('integrity_check', { simple: true })).toBe('ok');
      const names = (snap.prepare('SELECT name FROM identities ORDER BY name').all() as Array<{ name: string }>).map((x) => x.name);
      const live = (await app.core.store.allSql<{ name: string }>('SELECT name FROM identities ORDER BY name')).map((x) => x.name);
      expect(names).toEqual(live);
      expect(names).toContain('corrupt-user');
    } finally {
      snap.close();
    }

    const again = await admin.post('/database/snapshot');
    expect(again.status).toBe(429);
    expect(again.body.error.code).toBe('RATE_LIMITED');
    expect(again.headers['retry-after']).toBe('60');
    clock.advance(30_000);
    expect((await admin.post('/database/snapshot')).headers['retry-after']).toBe('30');
    clock.advance(30_000);
    expect((await admin.post('/database/snapshot')).status).toBe(200);
    expect(readdirSync(dir).filter((f) => f.endsWith('.db'))).toHaveLength(2);
  });
});

describe('summary', () => {
  it('counts the tables of every module', async () => {
    const r = await admin.get('/summary');
    expect(r.status).toBe(200);
    const identities = (await app.core.store.getSql<{ n: number }>('SELECT count(*) AS n FROM identities'))!.n;
    expect(r.body.data).toMatchObject({ identities, externalJwtSigners: 0, mfas: 0, controllerSettings: 1, controllers: 1 });
    clock.advance(MINUTE);
  });
});
