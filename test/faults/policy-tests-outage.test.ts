// Policy tests when PostgreSQL goes away: a run that cannot read the database keeps the results of the run before
// and says why (the banner does not flip to "all passing" or "all failing" on an outage), the process serves on, and
// once the database is back the change feed's gap makes a new run by itself — no write, no explicit run needed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { policyTestsOf } from '../../src/main/core/policy/policyTests';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { startPostgres, type PostgresServer } from '../support/postgres';

let pg: PostgresServer;
let app: TestApp;
let admin: ApiClient;

beforeAll(async () => {
  pg = await startPostgres();
  app = await startTestApp({ database: await pg.createDatabase() });
  admin = await app.adminClient();
  await admin.create('/identities', { name: 'f-laptop', type: 'Device', isAdmin: false, roleAttributes: ['staff'] });
  await admin.create('/services', { name: 'f-wiki', encryptionRequired: true, roleAttributes: ['wiki'] });
  await admin.create('/service-policies', { name: 'f-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#staff'], serviceRoles: ['#wiki'] });
  await admin.create('/edge-router-policies', { name: 'f-erp', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
  await admin.create('/service-edge-router-policies', { name: 'f-serp', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
  await admin.create('/weft/policy-tests', {
    name: 'f-laptop must reach f-wiki',
    identityRole: '@f-laptop',
    serviceRole: '@f-wiki',
    expectation: 'canDial',
  });
}, 120_000);
afterAll(async () => {
  await admin?.close();
  await app?.stop();
  await pg?.stop();
});

describe('policy tests when PostgreSQL goes away', { timeout: 120_000 }, () => {
  it('keeps the last results with the error while it is down, and runs again by itself once it is back', async () => {
    const runner = policyTestsOf(app.core);
    expect((await admin.post('/weft/policy-tests/run')).body.data).toMatchObject({ failing: 0, tests: [{ status: 'passing' }] });
    const before = runner.latest.run;

    await pg.halt();
    runner.schedule();
    await runner.settled();
    const down = runner.latest;
    expect(down.run).toBeGreaterThan(before);
    expect(down.error).toBeTruthy();
    expect(down.tests).toMatchObject([{ name: 'f-laptop must reach f-wiki', status: 'passing' }]);
    // the process serves on: a read that needs the database answers 503 in the envelope, no stack trace
    const r = await admin.get('/weft/policy-test-results');
    expect([200, 503]).toContain(r.status);
    if (r.status === 503) expect(r.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(r.text).not.toMatch(/\bat .+\.(ts|js):\d+/);

    await pg.resume();
    // no write and no explicit run: the change feed's reconnection (a gap) runs the tests again
    await expect.poll(() => runner.latest.error, { timeout: 60_000, interval: 100 }).toBeUndefined();
    expect(runner.latest.tests).toMatchObject([{ status: 'passing' }]);
    expect((await admin.get('/weft/policy-test-results')).body.data).toMatchObject({ failing: 0, tests: [{ status: 'passing' }] });
  });
});
