// Saved policy tests over the Management API (/weft/policy-tests), on SQLite and PostgreSQL in one file: written
// through the generic write path (names resolved to ids, bad input refused whole, audited), run again by the change
// feed after every change that can affect access (no explicit run), broken tests naming the pair and why; many
// creates in the same tick with failures among them; callers without the service-policy permission refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { STORE_KINDS } from '../support/bothStores';
import { createUser, login } from '../support/users';

let server: PostgresServer | undefined;
afterAll(async () => server?.stop());

describe.each(STORE_KINDS)('policy tests on %s', (kind) => {
  let app: TestApp;
  let admin: ApiClient;
  const ids: Record<string, string> = {};
  const results = async () => (await admin.get('/weft/policy-test-results')).body.data;
  const run = async () => {
    const r = await admin.post('/weft/policy-tests/run');
    expect(r.status).toBe(200);
    return r.body.data;
  };
  const byName = (report: any, name: string) => report.tests.find((t: any) => t.name === name);

  beforeAll(async () => {
    let database: string | undefined;
    if (kind === 'postgres') {
      server ??= await startPostgres();
      database = await server.createDatabase();
    }
    app = await startTestApp({ database });
    admin = await app.adminClient();
    ids.laptop = await admin.create('/identities', { name: 'laptop-1', type: 'Device', isAdmin: false, roleAttributes: ['staff'] });
    ids.guest = await admin.create('/identities', { name: 'guest-1', type: 'User', isAdmin: false, roleAttributes: ['guests'] });
    ids.wiki = await admin.create('/services', { name: 'wiki', encryptionRequired: true, roleAttributes: ['wiki'] });
    ids.db = await admin.create('/services', { name: 'db', encryptionRequired: true, roleAttributes: ['db'] });
    ids.wikiDial = await admin.create('/service-policies', {
      name: 'wiki-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#staff'],
      serviceRoles: ['#wiki'],
    });
    await admin.create('/edge-router-policies', { name: 'all-routers', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
    await admin.create('/service-edge-router-policies', {
      name: 'all-services',
      semantic: 'AnyOf',
      serviceRoles: ['#all'],
      edgeRouterRoles: ['#all'],
    });
  }, 120_000);
  afterAll(async () => {
    await admin?.close();
    await app?.stop();
  });

  it('stores tests with names resolved to ids, and runs them', async () => {
    const reach = await admin.create('/weft/policy-tests', {
      name: 'laptop-1 must reach wiki',
      identityRole: '@laptop-1',
      serviceRole: '@wiki',
      expectation: 'canDial',
    });
    await admin.create('/weft/policy-tests', {
      name: 'guests must not reach db',
      identityRole: '#guests',
      serviceRole: '#db',
      expectation: 'mustNotDial',
    });
    const got = (await admin.get(`/weft/policy-tests/${reach}`)).body.data;
    expect(got).toMatchObject({ identityRole: `@${ids.laptop}`, serviceRole: `@${ids.wiki}`, expectation: 'canDial' });
    const report = await run();
    expect(report.failing).toBe(0);
    expect(byName(report, 'laptop-1 must reach wiki')).toMatchObject({ status: 'passing', pairs: 1 });
    expect(byName(report, 'guests must not reach db')).toMatchObject({ status: 'passing', pairs: 1 });
    // the list carries each test's latest result
    const list = (await admin.get('/weft/policy-tests?filter=' + encodeURIComponent('expectation = "mustNotDial"'))).body.data;
    expect(list.map((t: any) => [t.name, t.result.status])).toEqual([['guests must not reach db', 'passing']]);
  });

  it('runs again after every change that can affect access, and names the pair that breaks a test and why', async () => {
    const before = (await results()).run;
    const leak = await admin.create('/service-policies', {
      name: 'guests-db',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#guests'],
      serviceRoles: ['#db'],
    });
    // no explicit run: the change feed runs the tests once the write has committed
    await expect.poll(async () => byName(await results(), 'guests must not reach db').status, { timeout: 10_000 }).toBe('failing');
    const broken = byName(await results(), 'guests must not reach db');
    expect(broken.failure).toMatchObject({ identity: { id: ids.guest, name: 'guest-1' }, service: { id: ids.db, name: 'db' } });
    expect(broken.failure.why).toMatch(/^guest-1 may dial db: granted by guests-db through /);
    expect((await results()).run).toBeGreaterThan(before);
    // an identity losing its attribute breaks the other one
    expect((await admin.patch(`/identities/${ids.laptop}`, { roleAttributes: [] })).status).toBe(200);
    await expect.poll(async () => byName(await results(), 'laptop-1 must reach wiki').status, { timeout: 10_000 }).toBe('failing');
    expect(byName(await results(), 'laptop-1 must reach wiki').failure.why).toBe(
      'laptop-1 cannot dial wiki: No Dial service policy selects both the identity and the service.',
    );
    // mended: both pass again, and the report says so
    expect((await admin.patch(`/identities/${ids.laptop}`, { roleAttributes: ['staff'] })).status).toBe(200);
    expect((await admin.del(`/service-policies/${leak}`)).status).toBe(200);
    await expect.poll(async () => (await results()).failing, { timeout: 10_000 }).toBe(0);
  });

  it('refuses bad input whole, with the field named', async () => {
    const count = async () => (await admin.get('/weft/policy-tests')).body.meta.pagination.totalCount;
    const n = await count();
    const bad = [
      [{ name: 'x', identityRole: '@nobody', serviceRole: '@wiki', expectation: 'canDial' }, 'identityRole'],
      [{ name: 'x', identityRole: '@laptop-1', serviceRole: 'wiki', expectation: 'canDial' }, 'serviceRole'],
      [{ name: 'x', identityRole: '@laptop-1', serviceRole: '@wiki', expectation: 'maybe' }, 'expectation'],
      [{ name: 'laptop-1 must reach wiki', identityRole: '@laptop-1', serviceRole: '@wiki', expectation: 'canDial' }, undefined],
    ] as const;
    for (const [body, field] of bad) {
      const r = await admin.post('/weft/policy-tests', body);
      expect(r.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      if (field) expect(r.body.error).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field } });
      expect(r.text).not.toMatch(/at .*\.ts:\d+/);
    }
    expect(await count()).toBe(n);
    // a test of a service role that selects nothing fails, saying so
    const none = await admin.create('/weft/policy-tests', {
      name: 'nothing',
      identityRole: '#all',
      serviceRole: '#no-such',
      expectation: 'mustNotBind',
    });
    expect(byName(await run(), 'nothing')).toMatchObject({ status: 'failing', failure: { why: '#no-such selects no service' } });
    expect((await admin.del(`/weft/policy-tests/${none}`)).status).toBe(200);
  });

  it('takes many creates in the same tick, failures among them: exactly the good ones are kept, each run sees them', async () => {
    const bodies = Array.from({ length: 12 }, (_, i) => ({
      // every third a duplicate of the one before it, every fourth names no identity
      name: `tick-${i % 3 === 2 ? i - 1 : i}`,
      identityRole: i % 4 === 3 ? '@missing' : '@laptop-1',
      serviceRole: '#wiki',
      expectation: 'canDial',
    }));
    const replies = await Promise.all(bodies.map((b) => admin.post('/weft/policy-tests', b)));
    const ok = replies.filter((r) => r.status === 201).length;
    for (const r of replies) expect([201, 400, 409]).toContain(r.status);
    const stored = (await admin.get('/weft/policy-tests?limit=100&filter=' + encodeURIComponent('name contains "tick-"'))).body.data;
    expect(stored.length).toBe(ok);
    const names = stored.map((t: any) => t.name).sort();
    expect(new Set(names).size).toBe(names.length);
    // every name kept is one whose body had an identity (the bad ones left nothing)
    for (const name of names) expect(bodies.some((b) => b.name === name && b.identityRole === '@laptop-1')).toBe(true);
    const report = await run();
    for (const name of names) expect(byName(report, name)).toMatchObject({ status: 'passing' });
    for (const t of stored) expect((await admin.del(`/weft/policy-tests/${t.id}`)).status).toBe(200);
  });

  it('is audited, and refused to callers without the service-policy permission', async () => {
    const audit = (await admin.get('/audit-log?limit=100&filter=' + encodeURIComponent('entityType = "weft/policy-tests"'))).body.data;
    expect(audit.some((e: any) => e.action === 'create' && e.outcome === 'success')).toBe(true);
    expect(audit.some((e: any) => e.action === 'delete' && e.outcome === 'success')).toBe(true);
    await createUser(admin, `pt-user-${kind}`, 'pt-password-1');
    const { client } = await login(app, `pt-user-${kind}`, 'pt-password-1');
    for (const r of [
      await client.get('/weft/policy-tests'),
      await client.get('/weft/policy-test-results'),
      await client.post('/weft/policy-tests/run'),
      await client.post('/weft/policy-tests', { name: 'sneaky', identityRole: '#all', serviceRole: '#all', expectation: 'canDial' }),
    ]) {
      expect(r.status).toBe(401);
    }
    expect((await admin.get('/weft/policy-tests?filter=' + encodeURIComponent('name = "sneaky"'))).body.data).toEqual([]);
    await client.close();
  });
});
