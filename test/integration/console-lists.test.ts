// Console lists beyond one page: the export of a list's whole filtered result (CSV and JSON, the list's order and
// views, redactions kept), what identities show of their SDK's logins (online, last seen, OS, SDK), and the count of
// unused MFA recovery codes. Runs on both stores (npm run test:postgres runs this folder again).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/main/core/csv';
import { ADMIN_PASSWORD, ADMIN_USER, startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ManualClock } from '../support/clock';
import { ConsoleClient } from '../support/consoleTrpc';
import { createUser, epochSeconds, secretOf, totp, totpStepStart } from '../support/users';

let app: TestApp;
let admin: ApiClient;
let ui: ConsoleClient;
const clock = new ManualClock(totpStepStart());
const ROWS = 620; // more than one export page (500)

beforeAll(async () => {
  app = await startTestApp({ clock, consoleAddress: '127.0.0.1:0', routerListener: 'off' });
  admin = await app.adminClient();
  ui = await new ConsoleClient(app.urls.console!).login(ADMIN_USER, ADMIN_PASSWORD);
  const csv = [
    'name,type,attributes,enrollment',
    ...Array.from({ length: ROWS }, (_, i) => `exp-${String(i).padStart(4, '0')},Device,dept-${i % 2},none`),
  ];
  const done = await ui.ok('mutate', 'bulk.importIdentities', { csv: csv.join('\n'), dryRun: false });
  expect(done.created).toBe(ROWS);
}, 120_000);
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

describe('list export', () => {
  it('exports every row the filter matches (not one page) as CSV, in the requested order', async () => {
    const r = await ui.ok('query', 'resources.export', {
      resource: 'identities',
      filter: 'anyOf(roleAttributes) = "dept-0"',
      sort: { field: 'name', dir: 'desc' },
      format: 'csv',
    });
    expect(r).toMatchObject({ mimeType: 'text/csv', rows: ROWS / 2, truncated: false });
    expect(r.filename).toMatch(/^identities-.*\.csv$/);
    const [header, ...records] = parseCsv(r.content).map((x) => x.fields);
    expect(header).toEqual(expect.arrayContaining(['id', 'name', 'roleAttributes', 'typeId', 'createdAt', 'type']));
    expect(header).not.toContain('_links');
    const col = (name: string) => header!.indexOf(name);
    expect(records).toHaveLength(ROWS / 2);
    const names = records.map((f) => f[col('name')]);
    expect(names[0]).toBe(`exp-${String(ROWS - 2).padStart(4, '0')}`);
    expect(names).toEqual([...names].sort().reverse());
    expect(new Set(names).size).toBe(ROWS / 2);
    // a reference as its name, a list of plain values joined
    expect(records[0]![col('type')]).toBe('Device');
    expect(records[0]![col('roleAttributes')]).toBe('dept-0');
  });

  it("exports JSON with the views of the REST list, ordered by the filter's own sort", async () => {
    const all = await ui.ok('query', 'resources.export', { resource: 'identities', filter: 'name contains "exp-"', format: 'json' });
    const rows = JSON.parse(all.content) as Array<Record<string, unknown>>;
    expect(all).toMatchObject({ mimeType: 'application/json', rows: ROWS, truncated: false });
    expect(rows).toHaveLength(ROWS);
    expect(rows[0]).toMatchObject({ name: 'exp-0000', typeId: 'Device', hasApiSession: false, lastSeenAt: null });
    expect(rows[0]).not.toHaveProperty('_links');
    // the filter's own sort orders the file; its paging gives way to the export's, as a list's explicit paging wins
    const sorted = await ui.ok('query', 'resources.export', {
      resource: 'identities',
      filter: 'name contains "exp-" sort by name desc limit 3',
      format: 'json',
    });
    const names = JSON.parse(sorted.content).map((x: { name: string }) => x.name);
    expect(names).toHaveLength(ROWS);
    expect(names.slice(0, 2)).toEqual(['exp-0619', 'exp-0618']);
  });

  it('refuses a bad filter with the list error and keeps redacted fields out', async () => {
    const bad = await ui.query('resources.export', { resource: 'identities', filter: 'name = ', format: 'csv' });
    expect(bad.status).toBe(400);
    expect(bad.error?.data.ziti?.code ?? bad.error?.message).toMatch(/INVALID_FILTER|filter/i);
    const sessions = await ui.ok('query', 'resources.export', { resource: 'api-sessions', format: 'json' });
    const listed = JSON.parse(sessions.content) as Array<Record<string, unknown>>;
    expect(listed.length).toBeGreaterThan(0);
    for (const s of listed) expect(s).not.toHaveProperty('token');
    expect((await ui.query('resources.export', { resource: 'identities', format: 'xml' })).status).toBe(400);
  });
});

describe('what identities show of their logins', () => {
  it('records envInfo and sdkInfo at login; online with its last activity while an API session lasts, last seen after it', async () => {
    const id = await createUser(admin, 'sdk-user', 'sdk-password-1');
    const client = app.client();
    const envInfo = { os: 'linux', osRelease: '6.1.0', osVersion: '#1 SMP', arch: 'amd64' };
    const sdkInfo = { type: 'ziti-sdk-golang', version: 'v1.2.3', appId: 'probe' };
    const r = await client.post(
      '/authenticate?method=password',
      { username: 'sdk-user', password: 'sdk-password-1', envInfo, sdkInfo },
      { api: 'client' },
    );
    expect(r.status).toBe(200);
    client.token = r.body.data.token;
    const seen = (await admin.get(`/identities/${id}`)).body.data;
    expect(seen).toMatchObject({ envInfo, sdkInfo: expect.objectContaining(sdkInfo), hasApiSession: true, lastSeenAt: clock.now().toISOString() });
    // the console list shows the same
    const page = await ui.ok('query', 'resources.list', { resource: 'identities', filter: 'name = "sdk-user"' });
    expect(page.data[0]).toMatchObject({ envInfo, hasApiSession: true, lastSeenAt: clock.now().toISOString() });

    clock.advance(5_000);
    expect((await client.del('/current-api-session', { api: 'client' })).status).toBe(200);
    // offline; last seen stays: the logout was its last activity
    const after = (await admin.get(`/identities/${id}`)).body.data;
    expect(after).toMatchObject({ envInfo, hasApiSession: false, lastSeenAt: clock.now().toISOString() });
    await client.close();
  });
});

describe('MFA recovery codes left', () => {
  it('counts the unused recovery codes; a used one is gone from the count', async () => {
    await createUser(admin, 'mfa-admin', 'mfa-password-1', { isAdmin: true });
    const me = await new ConsoleClient(app.urls.console!).login('mfa-admin', 'mfa-password-1');
    const started = await me.ok('mutate', 'security.mfa.enroll');
    const secret = secretOf(started.provisioningUrl);
    expect(started.recoveryCodes).toHaveLength(20);
    await me.ok('mutate', 'security.mfa.verify', { code: totp(secret, epochSeconds(clock)) });
    expect(await me.ok('query', 'security.mfa.status')).toMatchObject({ isVerified: true, recoveryCodesLeft: 20 });

    const client = app.client();
    await client.login('mfa-admin', 'mfa-password-1', 'client');
    expect((await client.post('/authenticate/mfa', { code: started.recoveryCodes[3] }, { api: 'client' })).status).toBe(200);
    expect(await me.ok('query', 'security.mfa.status')).toMatchObject({ recoveryCodesLeft: 19 });
    // the same code a second time is refused and counts nothing
    const again = app.client();
    await again.login('mfa-admin', 'mfa-password-1', 'client');
    expect((await again.post('/authenticate/mfa', { code: started.recoveryCodes[3] }, { api: 'client' })).status).toBe(401);
    expect(await me.ok('query', 'security.mfa.status')).toMatchObject({ recoveryCodesLeft: 19 });
    await client.close();
    await again.close();
  });
});
