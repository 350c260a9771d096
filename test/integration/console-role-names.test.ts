// Names, not ids, through the console's procedures: `@name` in any policy role side (and the service wizard's role
// fields, and the "matches as you type" preview) is resolved to `@id` by the core before the write; an unknown or
// ambiguous name is a field error naming it, every field at fault at once, and nothing is written. REST keeps
// OpenZiti's semantics (`@id` only, its own errors). Unique-constraint errors read as plain sentences in the console
// while REST keeps OpenZiti's reason word for word. Runs on the run's store (SQLite, and PostgreSQL in CI).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';

let app: TestApp;
let admin: ApiClient;
let ui: ConsoleClient;
const ids: Record<string, string> = {};

const count = async (path: string, filter: string): Promise<number> =>
  (await admin.get(`${path}?limit=1&filter=${encodeURIComponent(filter)}`)).body.meta.pagination.totalCount;

beforeAll(async () => {
  app = await startTestApp({ consoleAddress: '127.0.0.1:0' });
  admin = await app.adminClient();
  ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
  for (const name of ['laptop-1', 'eve', 'Eve', 'Bob']) {
    ids[name] = await admin.create('/identities', { name, type: 'Device', isAdmin: false, roleAttributes: ['staff'] });
  }
  ids.wiki = await admin.create('/services', { name: 'wiki', encryptionRequired: true });
  ids.db = await admin.create('/services', { name: 'db', encryptionRequired: true });
  ids.os = await admin.create('/posture-checks', { name: 'linux-only', typeId: 'OS', operatingSystems: [{ type: 'Linux', versions: [] }] });
  // an identity whose name is another identity's id: `@<that id>` still means the identity with that id
  ids.impostor = await admin.create('/identities', { name: ids.Bob, type: 'Device', isAdmin: false });
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

const policy = (name: string, sides: object) => ({
  resource: 'service-policies',
  body: { name, type: 'Dial', semantic: 'AnyOf', identityRoles: [], serviceRoles: [], postureCheckRoles: [], ...sides },
});

describe('console role names', () => {
  it('stores @id for @name on every side, shows the names, and REST keeps @id', async () => {
    const { id } = await ui.ok(
      'mutate',
      'resources.create',
      policy('by-name', { identityRoles: ['@laptop-1', '#staff'], serviceRoles: ['@wiki', `@${ids.db}`], postureCheckRoles: ['@linux-only'] }),
    );
    const p = (await admin.get(`/service-policies/${id}`)).body.data;
    expect(p.identityRoles).toEqual(['#staff', `@${ids['laptop-1']}`]);
    expect(p.serviceRoles.sort()).toEqual([`@${ids.wiki}`, `@${ids.db}`].sort());
    expect(p.postureCheckRoles).toEqual([`@${ids.os}`]);
    expect(p.identityRolesDisplay).toEqual([
      { role: '#staff', name: '#staff' },
      { role: `@${ids['laptop-1']}`, name: '@laptop-1' },
    ]);
    // a case-insensitive match that is unique resolves too; an edit (patch) resolves as a create does
    await ui.ok('mutate', 'resources.update', { resource: 'service-policies', id, op: 'patch', body: { identityRoles: ['@LAPTOP-1', '@bob'] } });
    expect((await admin.get(`/service-policies/${id}`)).body.data.identityRoles.sort()).toEqual([`@${ids['laptop-1']}`, `@${ids.Bob}`].sort());
    // REST: OpenZiti's semantics, a name is not an id
    const rest = await admin.post('/service-policies', { name: 'rest-name', type: 'Dial', semantic: 'AnyOf', identityRoles: ['@laptop-1'] });
    expect(rest.status).toBe(400);
    expect(rest.body.error.cause).toMatchObject({ field: 'identityRoles', reason: 'no identities found with the given ids' });
  });

  it('names an unknown or ambiguous name as a field error, every field at fault at once, and writes nothing', async () => {
    const r = await ui.mutate(
      'resources.create',
      policy('bad-names', {
        identityRoles: ['@nobody', '@EVE', '#staff'],
        serviceRoles: ['@wiki', '@no-such-service'],
        postureCheckRoles: ['@linux-only'],
      }),
    );
    expect(r.status).toBe(400);
    const z = r.error!.data.ziti;
    expect(z.code).toBe('COULD_NOT_VALIDATE');
    expect(z.cause.field).toBe('identityRoles');
    expect(z.cause.reason).toContain('no identity has the name or id @nobody');
    expect(z.cause.reason).toMatch(/@EVE is ambiguous: it could mean the identities (Eve|eve) .*, (Eve|eve) /);
    expect(z.causes.map((c: any) => c.field)).toEqual(['identityRoles', 'serviceRoles']);
    expect(z.causes[1].reason).toBe('no service has the name or id @no-such-service');
    expect(await count('/service-policies', 'name = "bad-names"')).toBe(0);

    // an id wins over a name (as the ziti CLI resolves them): `@<Bob's id>` is Bob, not the identity named so
    const byId = await ui.ok('mutate', 'resources.create', policy('id-or-name', { identityRoles: [`@${ids.Bob}`] }));
    expect((await admin.get(`/service-policies/${byId.id}`)).body.data.identityRoles).toEqual([`@${ids.Bob}`]);
    // the exact name wins over other spellings: @eve and @Eve are each one identity
    const { id } = await ui.ok('mutate', 'resources.create', policy('exact', { identityRoles: ['@eve', '@Eve'] }));
    expect((await admin.get(`/service-policies/${id}`)).body.data.identityRoles.sort()).toEqual([`@${ids.eve}`, `@${ids.Eve}`].sort());
  });

  it('edge router and service edge router policies resolve their sides too', async () => {
    const erp = await ui.ok('mutate', 'resources.create', {
      resource: 'edge-router-policies',
      body: { name: 'erp-names', semantic: 'AnyOf', identityRoles: ['@laptop-1'], edgeRouterRoles: ['@er-builtin'] },
    });
    const row = (await admin.get(`/edge-router-policies/${erp.id}`)).body.data;
    expect(row.identityRoles).toEqual([`@${ids['laptop-1']}`]);
    expect(row.edgeRouterRolesDisplay).toEqual([{ role: row.edgeRouterRoles[0], name: '@er-builtin' }]);
    const serp = await ui.mutate('resources.create', {
      resource: 'service-edge-router-policies',
      body: { name: 'serp-names', semantic: 'AnyOf', serviceRoles: ['@wiki'], edgeRouterRoles: ['@er-nowhere'] },
    });
    expect(serp.error!.data.ziti.cause).toMatchObject({ field: 'edgeRouterRoles', reason: 'no edge router has the name or id @er-nowhere' });
  });

  it('many console writes in one tick, some with unknown names: the good ones are kept whole, the bad ones leave nothing', async () => {
    const calls = Array.from({ length: 12 }, (_, i) => ({
      path: 'resources.create',
      input: policy(`tick-${i}`, { identityRoles: [i % 3 === 0 ? `@ghost-${i}` : '@laptop-1'], serviceRoles: ['@wiki'] }),
    }));
    const results = await ui.batch('mutate', calls);
    results.forEach((r, i) => {
      if (i % 3 === 0) expect(r.error?.data.ziti.cause.reason).toBe(`no identity has the name or id @ghost-${i}`);
      else expect(r.data.id).toBeTruthy();
    });
    expect(await count('/service-policies', 'name contains "tick-"')).toBe(8);
    const kept = (await admin.get(`/service-policies?limit=100&filter=${encodeURIComponent('name contains "tick-"')}`)).body.data;
    for (const p of kept) expect(p.identityRoles).toEqual([`@${ids['laptop-1']}`]);
    // the policy index reached them: laptop-1 may dial wiki
    expect((await admin.get(`/identities/${ids['laptop-1']}/services?filter=${encodeURIComponent('name = "wiki"')}`)).body.data).toHaveLength(1);
  });

  it('the matches preview resolves names and says which match nothing', async () => {
    const ok = await ui.ok('query', 'roles.preview', { kind: 'identity', roles: ['@laptop-1'], semantic: 'AnyOf' });
    expect(ok).toMatchObject({ totalCount: 1, items: [{ id: ids['laptop-1'], name: 'laptop-1' }] });
    expect(ok.problem).toBeUndefined();
    const bad = await ui.ok('query', 'roles.preview', { kind: 'identity', roles: ['@laptop-1', '@nobody'], semantic: 'AnyOf' });
    expect(bad).toMatchObject({ totalCount: 1, problem: 'no identity has the name or id @nobody' });
  });

  it('the service wizard takes @name in its role fields: the dry run succeeds with @laptop-1', async () => {
    const body = {
      name: 'wiz-names',
      intercept: { addresses: ['wiz-names.lab.internal'], port: 80 },
      host: { kind: 'sdk', identityRoles: ['@Bob'] },
      dialRoles: ['@laptop-1'],
      routerRoles: ['@er-builtin'],
    };
    const p = await ui.ok('query', 'serviceWizard.preview', { body });
    expect(p.problem).toBeUndefined();
    expect(p.ok).toBe(true);
    const dial = p.steps.find((s: any) => s.key === 'dial-policy');
    expect(dial.body.identityRoles).toEqual([`@${ids['laptop-1']}`]);
    expect(dial.roles.identityRoles).toEqual([{ role: `@${ids['laptop-1']}`, name: '@laptop-1' }]);
    expect(dial.matches.identityRoles).toBe(1);
    const bad = await ui.query('serviceWizard.preview', {
      body: { ...body, host: { kind: 'sdk', identityRoles: ['@nobody'] }, dialRoles: ['@laptop-1'], routerRoles: ['@nowhere'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.error!.data.ziti.causes.map((c: any) => [c.field, c.reason])).toEqual([
      ['host.identityRoles', 'no identity has the name or id @nobody'],
      ['routerRoles', 'no edge router has the name or id @nowhere'],
    ]);
    const made = await ui.ok('mutate', 'serviceWizard.create', { body });
    const dialPolicy = (await admin.get(`/service-policies?filter=${encodeURIComponent('name = "wiz-names-dial"')}`)).body.data[0];
    expect(dialPolicy.identityRoles).toEqual([`@${ids['laptop-1']}`]);
    expect(made.serviceId).toBeTruthy();
  });

  it('the wizard names every missing field at once', async () => {
    const r = await ui.query('serviceWizard.preview', {
      body: { name: '', intercept: { addresses: [], port: 80 }, host: { kind: 'router', address: '127.0.0.1' }, dialRoles: [] },
    });
    expect(r.status).toBe(400);
    expect(r.error!.data.ziti.causes.map((c: any) => c.field).sort()).toEqual(['dialRoles', 'host.port', 'intercept.addresses', 'name']);
  });
});

describe('unique-constraint errors', () => {
  it('read as a sentence in the console; REST keeps OpenZiti reason', async () => {
    const body = { name: 'eve', type: 'Device', isAdmin: false };
    const r = await ui.mutate('resources.create', { resource: 'identities', body });
    expect(r.status).toBe(400);
    expect(r.error!.data.ziti).toMatchObject({
      code: 'COULD_NOT_VALIDATE',
      plain: 'An identity named eve already exists',
      cause: { field: 'name', reason: 'An identity named eve already exists' },
    });
    const svc = await ui.mutate('resources.create', { resource: 'service-edge-router-policies', body: { name: 'serp-x', semantic: 'AnyOf' } });
    expect(svc.status).toBe(200);
    const again = await ui.mutate('resources.create', { resource: 'service-edge-router-policies', body: { name: 'serp-x', semantic: 'AnyOf' } });
    expect(again.error!.data.ziti.plain).toBe('A service edge router policy named serp-x already exists');
    const rest = await admin.post('/identities', body);
    expect(rest.status).toBe(400);
    expect(rest.body.error).toMatchObject({
      code: 'COULD_NOT_VALIDATE',
      cause: { field: 'name', reason: "duplicate value 'eve' in unique index on identities store", value: 'eve' },
    });
    expect(JSON.stringify(rest.body)).not.toContain('already exists');
  });
});
