// The core behind the console's workflows, through its tRPC procedures: the service wizard (plan, dry run, one
// transaction that rolls back on a failing step), the network graph (grouped by role attribute, filters, live
// overlay), the "why" chain of policy advice with the smallest fix, bulk operations, CSV import and the enrollment
// archive; and a non-admin without permissions gets 401 from every one of them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinRouterId } from '../../src/main/core/dataPlane/index';
import { identities } from '../../src/main/core/policy/identities';
import { applyCreate } from '../../src/main/core/entities/resource';
import { eventually } from '../interop/tools';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';
import { createUser } from '../support/users';

let app: TestApp;
let admin: ApiClient;
let ui: ConsoleClient;
let routerId: string;

const byName = async (path: string, name: string): Promise<any[]> =>
  (await admin.get(`${path}?filter=${encodeURIComponent(`name = "${name}"`)}`)).body.data;
const names = async (path: string, contains: string): Promise<string[]> =>
  ((await admin.get(`${path}?limit=500&filter=${encodeURIComponent(`name contains "${contains}"`)}`)).body.data as any[]).map((e) => e.name).sort();

beforeAll(async () => {
  app = await startTestApp({ consoleAddress: '127.0.0.1:0' });
  admin = await app.adminClient();
  ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
  routerId = (await builtinRouterId(app.core))!;
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

const wizardBody = (name: string, extra: object = {}) => ({
  name,
  roleAttributes: ['wiz'],
  intercept: { addresses: [`${name}.lab.internal`], port: 80 },
  host: { kind: 'router', address: '127.0.0.1', port: 3000 },
  dialRoles: ['#wiz-users'],
  ...extra,
});

describe('service wizard', () => {
  it('previews the plan with a dry run that keeps nothing', async () => {
    const p = await ui.ok('query', 'serviceWizard.preview', { body: wizardBody('wiz-a') });
    expect(p.ok).toBe(true);
    expect(p.steps.map((s: any) => [s.key, s.name])).toEqual([
      ['intercept-config', 'wiz-a-intercept'],
      ['host-config', 'wiz-a-host'],
      ['service', 'wiz-a'],
      ['dial-policy', 'wiz-a-dial'],
      ['bind-policy', 'wiz-a-bind'],
      ['service-edge-router-policy', 'wiz-a-routers'],
      ['edge-router-policy', 'wiz-a-clients'],
    ]);
    const bind = p.steps.find((s: any) => s.key === 'bind-policy');
    expect(bind.body.identityRoles).toEqual([`@${routerId}`]);
    expect(bind.roles.identityRoles).toEqual([{ role: `@${routerId}`, name: '@er-builtin' }]);
    expect(bind.roles.serviceRoles).toEqual([{ role: '@$service', name: '@wiz-a (new)' }]);
    expect(p.notes.join(' ')).toMatch(/er-builtin hosts the service: it connects to 127\.0\.0\.1:3000/);
    expect(p.notes.join(' ')).toMatch(/No identity matches the roles yet: an edge router policy is added/);
    for (const path of ['/services', '/configs', '/service-policies', '/service-edge-router-policies', '/edge-router-policies']) {
      expect(await names(path, 'wiz-a')).toEqual([]);
    }
  });

  it('creates the service, its configs and policies in one go; the router then hosts it', async () => {
    const dialer = await admin.create('/identities', { name: 'wiz-user', type: 'User', isAdmin: false, roleAttributes: ['wiz-users'] });
    const r = await ui.ok('mutate', 'serviceWizard.create', { body: wizardBody('wiz-b') });
    const svc = (await admin.get(`/services/${r.serviceId}`)).body.data;
    expect(svc).toMatchObject({ name: 'wiz-b', roleAttributes: ['wiz'], encryptionRequired: true });
    const configs = (await admin.get(`/services/${r.serviceId}/configs`)).body.data;
    expect(configs.map((c: any) => [c.name, c.configType.name, c.data]).sort()).toEqual([
      ['wiz-b-host', 'host.v1', { protocol: 'tcp', address: '127.0.0.1', port: 3000 }],
      ['wiz-b-intercept', 'intercept.v1', { protocols: ['tcp'], addresses: ['wiz-b.lab.internal'], portRanges: [{ low: 80, high: 80 }] }],
    ]);
    const [dial] = await byName('/service-policies', 'wiz-b-dial');
    expect(dial).toMatchObject({ type: 'Dial', semantic: 'AnyOf', identityRoles: ['#wiz-users'], serviceRoles: [`@${r.serviceId}`] });
    const [bind] = await byName('/service-policies', 'wiz-b-bind');
    expect(bind).toMatchObject({ type: 'Bind', identityRoles: [`@${routerId}`], serviceRoles: [`@${r.serviceId}`] });
    const [serp] = await byName('/service-edge-router-policies', 'wiz-b-routers');
    expect(serp).toMatchObject({ serviceRoles: [`@${r.serviceId}`], edgeRouterRoles: [`@${routerId}`] });
    const [erp] = await byName('/edge-router-policies', 'wiz-b-clients');
    expect(erp).toMatchObject({ identityRoles: ['#wiz-users'], edgeRouterRoles: [`@${routerId}`] });
    expect(r.created.map((c: any) => c.key)).toHaveLength(7);
    // the dialer can now use it, and the router hosts it (a tunnel terminator)
    const advice = (await admin.get(`/identities/${dialer}/policy-advice/${r.serviceId}`)).body.data;
    expect(advice).toMatchObject({ isDialAllowed: true, commonRouters: [{ id: routerId, isOnline: true }] });
    await eventually(
      async () => (await admin.get(`/services/${r.serviceId}/terminators`)).body.data.some((t: any) => t.binding === 'tunnel'),
      20_000,
      'the router to host the service',
    );
  });

  it('adds no edge router policy when the dialers already reach the routers', async () => {
    const p = await ui.ok('query', 'serviceWizard.preview', { body: wizardBody('wiz-c') });
    expect(p.steps.map((s: any) => s.key)).not.toContain('edge-router-policy');
    expect(p.notes.join(' ')).toMatch(/already reaches one of its edge routers/);
  });

  it('rolls everything back when a step fails, and the preview names that step', async () => {
    await admin.create('/service-policies', { name: 'wiz-d-bind', type: 'Bind', semantic: 'AnyOf', identityRoles: [], serviceRoles: [] });
    const preview = await ui.ok('query', 'serviceWizard.preview', { body: wizardBody('wiz-d') });
    expect(preview.ok).toBe(false);
    expect(preview.problem).toMatchObject({ step: 'bind-policy', code: 'COULD_NOT_VALIDATE', field: 'name' });
    const r = await ui.mutate('serviceWizard.create', { body: wizardBody('wiz-d') });
    expect(r.status).toBe(400);
    expect(r.error!.data.ziti).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field: 'name' } });
    expect(r.error!.data.ziti.cause.reason).toBe('A service policy named wiz-d-bind already exists (creating the service policy "wiz-d-bind")');
    // the configs, the service and the Dial policy created before the failing step are gone
    expect(await names('/services', 'wiz-d')).toEqual([]);
    expect(await names('/configs', 'wiz-d')).toEqual([]);
    expect(await names('/service-policies', 'wiz-d')).toEqual(['wiz-d-bind']);
    expect(await names('/service-edge-router-policies', 'wiz-d')).toEqual([]);
  });

  it('a failure at the last step (the edge router policy) takes back the six entities created before it', async () => {
    await admin.create('/edge-router-policies', { name: 'wiz-z-clients', semantic: 'AnyOf', identityRoles: [], edgeRouterRoles: [] });
    const body = wizardBody('wiz-z', { dialRoles: ['#wiz-z-nobody'] });
    const preview = await ui.ok('query', 'serviceWizard.preview', { body });
    expect(preview.steps.at(-1).key).toBe('edge-router-policy');
    expect(preview.problem).toMatchObject({ step: 'edge-router-policy', field: 'name' });
    const before = (await app.core.store.getSql<{ n: number }>(
      'SELECT (SELECT count(*) FROM services) + (SELECT count(*) FROM configs) + (SELECT count(*) FROM service_policies) + (SELECT count(*) FROM service_edge_router_policies) AS n',
    ))!.n;
    const r = await ui.mutate('serviceWizard.create', { body });
    expect(r.status).toBe(400);
    expect(r.error!.message).toMatch(/creating the edge router policy "wiz-z-clients"/);
    const after = (await app.core.store.getSql<{ n: number }>(
      'SELECT (SELECT count(*) FROM services) + (SELECT count(*) FROM configs) + (SELECT count(*) FROM service_policies) + (SELECT count(*) FROM service_edge_router_policies) AS n',
    ))!.n;
    expect(after).toBe(before);
    for (const path of ['/services', '/configs', '/service-policies', '/service-edge-router-policies'])
      expect(await names(path, 'wiz-z')).toEqual([]);
    // the policy index holds no trace of the rolled-back policies either
    expect(
      await app.core.store.getSql(
        'SELECT 1 FROM policy_sides s WHERE s.policy_id NOT IN (SELECT id FROM service_policies UNION SELECT id FROM edge_router_policies UNION SELECT id FROM service_edge_router_policies)',
      ),
    ).toBeUndefined();
  });

  it('the router choice lands on the service edge router policy and the edge router policy, exactly', async () => {
    const lab1 = await admin.create('/edge-routers', { name: 'wiz-lab-r1', roleAttributes: ['lab-routers'] });
    const lab2 = await admin.create('/edge-routers', { name: 'wiz-lab-r2', roleAttributes: ['lab-routers'] });
    const other = await admin.create('/edge-routers', { name: 'wiz-lab-other', roleAttributes: ['elsewhere'] });
    const routersOf = async (path: string) => ((await admin.get(`${path}/edge-routers?limit=500`)).body.data as any[]).map((r) => r.id).sort();

    // by attribute, hosted by an SDK application (the hosting router is not added): only #lab-routers
    const r = await ui.ok('mutate', 'serviceWizard.create', {
      body: {
        name: 'wiz-lab',
        host: { kind: 'sdk', identityRoles: ['#wiz-lab-hosts'] },
        dialRoles: ['#wiz-lab-users'],
        routerRoles: ['#lab-routers'],
      },
    });
    expect(r.created.map((c: any) => c.key)).toEqual(['service', 'dial-policy', 'bind-policy', 'service-edge-router-policy', 'edge-router-policy']);
    const [serp] = await byName('/service-edge-router-policies', 'wiz-lab-routers');
    expect(serp).toMatchObject({ semantic: 'AnyOf', serviceRoles: [`@${r.serviceId}`] });
    expect(serp.edgeRouterRoles).toEqual(['#lab-routers']);
    const [erp] = await byName('/edge-router-policies', 'wiz-lab-clients');
    expect([...erp.identityRoles].sort()).toEqual(['#wiz-lab-hosts', '#wiz-lab-users']); // dialers and hosts
    expect(erp.edgeRouterRoles).toEqual(['#lab-routers']);
    // and in the core's policy index they select those two routers: not the built-in one, not the other
    expect(await routersOf(`/service-edge-router-policies/${serp.id}`)).toEqual([lab1, lab2].sort());
    expect(await routersOf(`/edge-router-policies/${erp.id}`)).toEqual([lab1, lab2].sort());

    // by id, hosted by the built-in router: the chosen router, and the hosting router added to carry the circuit
    const byId = await ui.ok('mutate', 'serviceWizard.create', {
      body: wizardBody('wiz-lab-id', { dialRoles: ['#wiz-lab-id-users'], routerRoles: [`@${other}`], edgeRouterPolicy: 'always' }),
    });
    const [serp2] = await byName('/service-edge-router-policies', 'wiz-lab-id-routers');
    expect(serp2.serviceRoles).toEqual([`@${byId.serviceId}`]);
    expect([...serp2.edgeRouterRoles].sort()).toEqual([`@${other}`, `@${routerId}`].sort());
    const [erp2] = await byName('/edge-router-policies', 'wiz-lab-id-clients');
    expect(erp2.identityRoles).toEqual(['#wiz-lab-id-users']);
    expect([...erp2.edgeRouterRoles].sort()).toEqual([`@${other}`, `@${routerId}`].sort());
    expect(await routersOf(`/service-edge-router-policies/${serp2.id}`)).toEqual([other, routerId].sort());
  });

  it('hosting on identities: a host.v1 and a Bind for them; SDK hosting: no host.v1; errors land on the form fields', async () => {
    const host = await admin.create('/identities', { name: 'wiz-host', type: 'Device', isAdmin: false });
    const r = await ui.ok('mutate', 'serviceWizard.create', {
      body: {
        name: 'wiz-e',
        host: { kind: 'identity', identityRoles: [`@${host}`], address: 'localhost', port: 8080 },
        dialRoles: ['#wiz-users'],
        edgeRouterPolicy: 'never',
      },
    });
    expect(r.created.map((c: any) => c.key)).toEqual(['host-config', 'service', 'dial-policy', 'bind-policy', 'service-edge-router-policy']);
    expect((await byName('/service-policies', 'wiz-e-bind'))[0].identityRoles).toEqual([`@${host}`]);
    const sdk = await ui.ok('query', 'serviceWizard.preview', {
      body: { name: 'wiz-f', host: { kind: 'sdk', identityRoles: ['#apps'] }, dialRoles: ['#all'], routerRoles: ['#all'] },
    });
    expect(sdk.steps.map((s: any) => s.key)).toEqual(['service', 'dial-policy', 'bind-policy', 'service-edge-router-policy', 'edge-router-policy']);
    const bad = await ui.query('serviceWizard.preview', {
      body: { name: 'wiz-g', host: { kind: 'router', address: '127.0.0.1', port: 70000 }, dialRoles: ['#x'] },
    });
    expect(bad.error!.data.ziti.cause).toMatchObject({ field: 'host.port' });
    // an @name (or id) that matches no identity is the dial field's error before anything is planned
    const unknownIdentity = await ui.query('serviceWizard.preview', {
      body: { name: 'wiz-h', host: { kind: 'router', address: 'a', port: 1 }, dialRoles: ['@nobody'] },
    });
    expect(unknownIdentity.error!.data.ziti.cause).toMatchObject({ field: 'dialRoles', reason: 'no identity has the name or id @nobody' });
  });
});

describe('why: the chain behind policy advice', () => {
  it('names the granting policy, the policies that make each common router, and posture results', async () => {
    const me = await admin.create('/identities', { name: 'why-me', type: 'User', isAdmin: false, roleAttributes: ['why-staff'] });
    const svc = await admin.create('/services', { name: 'why-svc', encryptionRequired: true, roleAttributes: ['why-web'] });
    const check = await admin.create('/posture-checks', { name: 'why-domain', typeId: 'DOMAIN', domains: ['corp.example'] });
    const dial = await admin.create('/service-policies', {
      name: 'why-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#why-staff'],
      serviceRoles: ['#why-web'],
      postureCheckRoles: [`@${check}`],
    });
    const erp = await admin.create('/edge-router-policies', {
      name: 'why-erp',
      semantic: 'AnyOf',
      identityRoles: ['#why-staff'],
      edgeRouterRoles: [`@${routerId}`],
    });
    const serp = await admin.create('/service-edge-router-policies', {
      name: 'why-serp',
      semantic: 'AnyOf',
      serviceRoles: ['#why-web'],
      edgeRouterRoles: [`@${routerId}`],
    });
    const x = await ui.ok('query', 'policy.explain', { identityId: me, serviceId: svc });
    expect(x.dial.policies).toEqual([
      expect.objectContaining({
        id: dial,
        name: 'why-dial',
        entity: 'service-policies',
        posturePasses: false,
        postureChecks: [expect.objectContaining({ id: check, name: 'why-domain', typeId: 'DOMAIN', passes: false })],
      }),
    ]);
    expect(x.routers.common).toEqual([
      expect.objectContaining({
        id: routerId,
        isOnline: true,
        edgeRouterPolicies: [expect.objectContaining({ id: erp, name: 'why-erp' })],
        serviceEdgeRouterPolicies: [expect.objectContaining({ id: serp, name: 'why-serp' })],
      }),
    ]);
    expect(x.canDial).toBe(false);
    expect(x.missing).toBe('The posture checks of every Dial policy are not all passing (why-domain).');
    expect(x.fixes[0].sentence).toBe('Have the identity pass why-domain, or remove it from the posture check roles of why-dial');
    // the REST advice is unchanged by all this
    expect(Object.keys((await admin.get(`/identities/${me}/policy-advice/${svc}`)).body.data).sort()).toEqual([
      'commonRouters',
      'identity',
      'identityId',
      'identityRouterCount',
      'isBindAllowed',
      'isDialAllowed',
      'service',
      'serviceId',
      'serviceRouterCount',
    ]);
  });

  it('when Dial is missing: the smallest change first, and applying it grants access', async () => {
    const me = await admin.create('/identities', { name: 'why-eve', type: 'User', isAdmin: false, roleAttributes: ['why-contractors'] });
    const svc = await admin.create('/services', { name: 'why-wiki', encryptionRequired: true, roleAttributes: ['why-wiki'] });
    for (let i = 0; i < 3; i++)
      await admin.create('/identities', { name: `why-c${i}`, type: 'User', isAdmin: false, roleAttributes: ['why-contractors'] });
    const policy = await admin.create('/service-policies', {
      name: 'why-wiki-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#why-admins'],
      serviceRoles: ['#why-wiki'],
    });
    await admin.create('/edge-router-policies', { name: 'why-all', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
    await admin.create('/service-edge-router-policies', { name: 'why-all', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
    const x = await ui.ok('query', 'policy.explain', { identityId: me, serviceId: svc });
    expect(x.dial.allowed).toBe(false);
    expect(x.missing).toBe('No Dial service policy selects both the identity and the service.');
    // @why-eve grants nobody else; #why-contractors would grant three more identities
    expect(x.fixes[0]).toMatchObject({
      sentence: 'Add @why-eve to the identity roles of why-wiki-dial',
      alsoGrants: 0,
      change: { resource: 'service-policies', op: 'patch', id: policy, body: { identityRoles: ['#why-admins', `@${me}`] } },
    });
    expect(x.fixes.map((f: any) => f.sentence)).toContain('Add #why-contractors to the identity roles of why-wiki-dial');
    expect(x.fixes.find((f: any) => f.sentence.startsWith('Add #why-contractors')).alsoGrants).toBe(3);
    const f = x.fixes[0];
    expect((await ui.mutate('resources.update', { resource: f.change.resource, id: f.change.id, body: f.change.body, op: 'patch' })).status).toBe(
      200,
    );
    const after = await ui.ok('query', 'policy.explain', { identityId: me, serviceId: svc });
    expect(after).toMatchObject({ canDial: true, fixes: [] });
    expect(after.missing).toBeUndefined();
    const users = await ui.ok('query', 'policy.serviceUsers', { serviceId: svc });
    expect(users.items.map((u: any) => u.name)).toEqual(['why-eve']);
  });

  it('when there is no common router: edge router policy fixes', async () => {
    for (const path of ['/edge-router-policies', '/service-edge-router-policies']) {
      for (const p of await byName(path, 'why-all')) await admin.del(`${path}/${p.id}`);
    }
    const me = await admin.create('/identities', { name: 'why-lone', type: 'User', isAdmin: false });
    const svc = await admin.create('/services', { name: 'why-lone-svc', encryptionRequired: true });
    const other = await admin.create('/edge-routers', { name: 'why-r2' });
    await admin.create('/service-policies', {
      name: 'why-lone-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${me}`],
      serviceRoles: [`@${svc}`],
    });
    await admin.create('/edge-router-policies', {
      name: 'why-lone-erp',
      semantic: 'AnyOf',
      identityRoles: [`@${me}`],
      edgeRouterRoles: [`@${other}`],
    });
    await admin.create('/service-edge-router-policies', {
      name: 'why-lone-serp',
      semantic: 'AnyOf',
      serviceRoles: [`@${svc}`],
      edgeRouterRoles: [`@${routerId}`],
    });
    const x = await ui.ok('query', 'policy.explain', { identityId: me, serviceId: svc });
    expect(x.dial.allowed).toBe(true);
    expect(x.routers).toMatchObject({ identityRouterCount: 1, serviceRouterCount: 1, common: [] });
    expect(x.missing).toBe('The identity and the service have no edge router in common.');
    // an edge router policy that already reaches the service's router (er-builtin) could take the identity in
    expect(x.fixes[0].sentence).toBe('Add @why-lone to the identity roles of edge router policy why-erp');
    const f = x.fixes[0];
    expect((await ui.mutate('resources.update', { resource: f.change.resource, id: f.change.id, body: f.change.body, op: 'patch' })).status).toBe(
      200,
    );
    expect(await ui.ok('query', 'policy.explain', { identityId: me, serviceId: svc })).toMatchObject({
      canDial: true,
      routers: { common: [{ id: routerId }] },
    });
  });

  it('when the grant and the edge router link are both missing: complete fixes first, a preview, all or nothing', async () => {
    const me = await admin.create('/identities', { name: 'why-both', type: 'User', isAdmin: false });
    const svc = await admin.create('/services', { name: 'why-both-svc', encryptionRequired: true });
    const policy = await admin.create('/service-policies', {
      name: 'why-both-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#why-both-admins'],
      serviceRoles: [`@${svc}`],
    });
    const x = await ui.ok('query', 'policy.explain', { identityId: me, serviceId: svc });
    expect(x.missing).toBe('No Dial service policy selects both the identity and the service. Nor do they have an edge router in common.');
    // the first fix is the whole chain: the grant, an edge router policy and a service edge router policy
    const whole = x.fixes[0];
    expect(whole).toMatchObject({ complete: true });
    expect(whole.changes.map((c: any) => `${c.op} ${c.resource}`)).toEqual([
      'patch service-policies',
      'create edge-router-policies',
      'create service-edge-router-policies',
    ]);
    expect(whole.sentence).toBe(
      'Add @why-both to the identity roles of why-both-dial, and create an edge router policy letting why-both use every edge router, and create a service edge router policy letting why-both-svc use every edge router',
    );
    // fixes of one link say so, after the complete ones
    const partial = x.fixes.filter((f: any) => !f.complete);
    expect(partial.length).toBeGreaterThan(0);
    expect(x.fixes.findIndex((f: any) => !f.complete)).toBeGreaterThan(x.fixes.findLastIndex((f: any) => f.complete));
    expect(partial[0].leaves).toBe('no edge router in common yet');
    // the preview: only why-both gains, and nothing is kept
    const preview = await ui.ok('query', 'policy.previewFix', { serviceId: svc, want: 'Dial', changes: whole.changes });
    expect(preview).toEqual({ gains: [{ id: me, name: 'why-both' }], gainCount: 1, losses: [], lossCount: 0 });
    expect(await byName('/edge-router-policies', 'why-both-routers')).toEqual([]);
    expect((await admin.get(`/service-policies/${policy}`)).body.data.identityRoles).toEqual(['#why-both-admins']);
    // all or nothing: a fix whose last write fails (a name in use) leaves the first undone
    const clash = [whole.changes[0], { ...whole.changes[1], body: { ...whole.changes[1].body, name: 'why-lone-erp' } }];
    const refused = await ui.mutate('policy.applyFix', { changes: clash });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect((await admin.get(`/service-policies/${policy}`)).body.data.identityRoles).toEqual(['#why-both-admins']);
    // applied: every write at once, and the identity can dial
    const applied = await ui.ok('mutate', 'policy.applyFix', { changes: whole.changes });
    expect(applied.ids).toHaveLength(3);
    expect(await ui.ok('query', 'policy.explain', { identityId: me, serviceId: svc })).toMatchObject({ canDial: true, fixes: [] });
  });
});

describe('network graph', () => {
  it('groups identities and services by role attribute, expands a group, filters, and joins them by policies', async () => {
    const store = app.core.store;
    await store.tx(async () => {
      for (let i = 0; i < 300; i++) {
        await applyCreate(app.core.system, identities, {
          name: `net-user-${String(i).padStart(3, '0')}`,
          type: 'User',
          isAdmin: false,
          roleAttributes: [`net-team-${i % 6}`],
        });
      }
    });
    for (let i = 0; i < 6; i++)
      await admin.create('/services', { name: `net-svc-${i}`, encryptionRequired: false, roleAttributes: [`net-app-${i % 2}`] });
    await admin.create('/service-policies', {
      name: 'net-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#net-team-0', '#net-team-1'],
      serviceRoles: ['#net-app-0'],
    });
    const g = await ui.ok('query', 'network.graph', { query: {} });
    const team0 = g.nodes.find((n: any) => n.key === 'identity|["net-team-0"]');
    expect(team0).toMatchObject({ type: 'group', name: '#net-team-0', count: 50, expanded: false });
    expect(g.nodes.filter((n: any) => n.kind === 'identity' && n.type === 'entity' && n.name.startsWith('net-user'))).toEqual([]);
    // under 30 services in all: each is shown on its own
    const app0 = g.nodes.find((n: any) => n.kind === 'service' && n.name === 'net-svc-0');
    expect(app0).toMatchObject({ type: 'entity', attributes: ['net-app-0'] });
    const edge = g.edges.find((e: any) => e.from === team0.key && e.to === app0.key);
    expect(edge).toMatchObject({ kind: 'service-policy', dial: true, bind: false, policies: [expect.objectContaining({ name: 'net-dial' })] });
    expect(g.totals.identity).toBeGreaterThanOrEqual(300);

    const open = await ui.ok('query', 'network.graph', { query: { expand: [team0.key] } });
    const members = open.nodes.filter((n: any) => n.group === team0.key);
    expect(members).toHaveLength(50);
    expect(open.edges.some((e: any) => e.from === members[0].key && e.to === app0.key && e.dial)).toBe(true);

    const byAttr = await ui.ok('query', 'network.graph', { query: { attribute: '#net-app-1' } });
    expect(
      byAttr.nodes
        .filter((n: any) => n.kind === 'service')
        .map((n: any) => n.name)
        .sort(),
    ).toEqual(['net-svc-1', 'net-svc-3', 'net-svc-5']);

    const one = (await byName('/identities', 'net-user-006'))[0].id;
    const reach = await ui.ok('query', 'network.graph', { query: { identityId: one } });
    expect(reach.filter.identity).toEqual({ id: one, name: 'net-user-006' });
    expect(reach.nodes.filter((n: any) => n.kind === 'identity').map((n: any) => n.name)).toEqual(['net-user-006']);
    expect(
      reach.nodes
        .filter((n: any) => n.kind === 'service')
        .map((n: any) => n.name)
        .sort(),
    ).toEqual(['net-svc-0', 'net-svc-2', 'net-svc-4']);

    const named = await ui.ok('query', 'network.graph', { query: { name: 'net-user-29' } });
    expect(named.nodes.filter((n: any) => n.kind === 'identity' && n.pinned).map((n: any) => n.name)).toEqual(
      Array.from({ length: 10 }, (_, i) => `net-user-29${i}`),
    );

    const live = await ui.ok('query', 'network.live');
    expect(live.router).toMatchObject({ id: routerId, name: 'er-builtin', isOnline: true });
  });
});

describe('bulk operations, CSV import, enrollment archive', () => {
  it('deletes several entities, reporting the one that cannot go', async () => {
    const a = await admin.create('/configs', { name: 'bulk-a', configTypeId: 'NH5p4FpGR', data: { protocol: 'tcp', address: 'a', port: 1 } });
    const b = await admin.create('/configs', { name: 'bulk-b', configTypeId: 'NH5p4FpGR', data: { protocol: 'tcp', address: 'b', port: 1 } });
    await admin.create('/services', { name: 'bulk-uses-b', encryptionRequired: true, configs: [b] });
    const r = await ui.ok('mutate', 'bulk.delete', { resource: 'configs', ids: [a, b] });
    expect(r).toMatchObject({ done: 1, failed: 1 });
    expect(r.outcomes.find((o: any) => o.id === b)).toMatchObject({ ok: false, name: 'bulk-b', error: { code: 'CAN_NOT_DELETE_REFERENCED_ENTITY' } });
    expect((await admin.get(`/configs/${a}`)).status).toBe(404);
  });

  it('adds and removes role attributes; disables and enables identities', async () => {
    const ids = [
      await admin.create('/identities', { name: 'bulk-i1', type: 'User', isAdmin: false, roleAttributes: ['old', 'keep'] }),
      await admin.create('/identities', { name: 'bulk-i2', type: 'User', isAdmin: false, roleAttributes: [] }),
    ];
    expect(await ui.ok('mutate', 'bulk.roleAttributes', { resource: 'identities', ids, add: ['#new'], remove: ['old'] })).toMatchObject({
      done: 2,
      failed: 0,
    });
    expect((await admin.get(`/identities/${ids[0]}`)).body.data.roleAttributes).toEqual(['keep', 'new']);
    expect((await admin.get(`/identities/${ids[1]}`)).body.data.roleAttributes).toEqual(['new']);
    expect(
      (await admin.get(`/identities?roleFilter=%23new&filter=${encodeURIComponent('name contains "bulk-i"')}`)).body.meta.pagination.totalCount,
    ).toBe(2);
    const adminId = (await admin.get(`/identities?filter=${encodeURIComponent('isDefaultAdmin = true')}`)).body.data[0].id;
    const off = await ui.ok('mutate', 'bulk.identityState', { ids: [...ids, adminId], disabled: true });
    expect(off).toMatchObject({ done: 2, failed: 1 });
    expect((await admin.get(`/identities/${ids[0]}`)).body.data.disabled).toBe(true);
    await ui.ok('mutate', 'bulk.identityState', { ids, disabled: false });
    expect((await admin.get(`/identities/${ids[1]}`)).body.data.disabled).toBe(false);
    const noAttrs = await ui.mutate('bulk.roleAttributes', { resource: 'configs', ids, add: ['x'] });
    expect(noAttrs.status).toBe(400);
  });

  it('imports identities from CSV: the preview keeps nothing, bad rows are reported, good ones created; JWTs as a zip', async () => {
    const csv = [
      'name,type,attributes,enrollment',
      'csv-alice,User,staff;eu,ott',
      'csv-bob,Device,"#staff, #us",updb',
      'csv-carol,Robot,,ott',
      'csv-alice,User,,ott',
      'csv-dave,,,ottca:no-such-ca',
      'csv-erin,user,,none',
    ].join('\r\n');
    const preview = await ui.ok('mutate', 'bulk.importIdentities', { csv, dryRun: true });
    expect(preview.rows.map((r: any) => [r.line, r.name, r.ok, r.error?.field])).toEqual([
      [2, 'csv-alice', true, undefined],
      [3, 'csv-bob', true, undefined],
      [4, 'csv-carol', false, 'type'],
      [5, 'csv-alice', false, 'name'],
      [6, 'csv-dave', false, 'enrollment'],
      [7, 'csv-erin', true, undefined],
    ]);
    expect(preview.rows[4].error.reason).toBe('no CA named no-such-ca');
    expect(await names('/identities', 'csv-')).toEqual([]);
    const done = await ui.ok('mutate', 'bulk.importIdentities', { csv, dryRun: false });
    expect(done).toMatchObject({ created: 3, failed: 3 });
    expect(await names('/identities', 'csv-')).toEqual(['csv-alice', 'csv-bob', 'csv-erin']);
    const bob = (await byName('/identities', 'csv-bob'))[0];
    expect(bob).toMatchObject({ typeId: 'Device', roleAttributes: ['staff', 'us'] });
    expect(bob.enrollment.updb.username).toBe('csv-bob');

    const ids = done.rows.filter((r: any) => r.ok).map((r: any) => r.id);
    const zip = await ui.ok('mutate', 'bulk.enrollmentArchive', { ids });
    expect(zip).toMatchObject({ files: 2, without: ['csv-erin'] });
    const dir = mkdtempSync(join(tmpdir(), 'weft-zip-'));
    const file = join(dir, zip.filename);
    writeFileSync(file, Buffer.from(zip.base64, 'base64'));
    execFileSync('unzip', ['-tq', file]); // CRCs and structure check out
    execFileSync('unzip', ['-q', file, '-d', join(dir, 'x')]);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(dir, 'x', 'csv-alice.jwt'), 'utf8')).toBe((await byName('/identities', 'csv-alice'))[0].enrollment.ott.jwt);
    expect(readFileSync(join(dir, 'x', 'enrollments.csv'), 'utf8')).toMatch(
      /^identity,method,expiresAt,file\r\ncsv-alice,ott,.*,csv-alice\.jwt\r\ncsv-bob,updb,.*,csv-bob\.jwt\r\n$/,
    );
  });
});

describe('authorization', () => {
  it('a non-admin without permissions gets 401 from every new procedure; a reader cannot write', async () => {
    await createUser(admin, 'wf-plain', 'plain-password-1');
    await createUser(admin, 'wf-reader', 'reader-password-1', { permissions: ['identity.read', 'service.read'] });
    const user = await new ConsoleClient(app.urls.console!).login('wf-plain', 'plain-password-1');
    const me = (await user.query('session.me')).data.identity.id;
    const calls = [
      user.query('serviceWizard.preview', { body: wizardBody('wf-x') }),
      user.mutate('serviceWizard.create', { body: wizardBody('wf-x') }),
      user.query('network.graph', { query: {} }),
      user.query('network.live'),
      user.query('policy.explain', { identityId: me, serviceId: 'x' }),
      user.query('policy.serviceUsers', { serviceId: 'x' }),
      user.mutate('bulk.delete', { resource: 'identities', ids: [me] }),
      user.mutate('bulk.roleAttributes', { resource: 'identities', ids: [me], add: ['x'] }),
      user.mutate('bulk.identityState', { ids: [me], disabled: true }),
      user.mutate('bulk.importIdentities', { csv: 'name\nx', dryRun: true }),
      user.mutate('bulk.enrollmentArchive', { ids: [me] }),
      user.query('policy.previewFix', { serviceId: 'x', changes: [{ resource: 'identities', op: 'patch', id: me, body: {} }] }),
      user.mutate('policy.applyFix', { changes: [{ resource: 'identities', op: 'patch', id: me, body: { roleAttributes: ['x'] } }] }),
      user.query('policyTests.results'),
      user.mutate('policyTests.create', { name: 'x', identityRole: '#all', serviceRole: '#all', expectation: 'canDial' }),
      user.mutate('policyTests.run'),
    ];
    for (const r of await Promise.all(calls)) {
      expect(r.status).toBe(401);
      expect(r.error!.data.ziti.code).toBe('UNAUTHORIZED');
    }
    const reader = await new ConsoleClient(app.urls.console!).login('wf-reader', 'reader-password-1');
    expect((await reader.query('serviceWizard.preview', { body: wizardBody('wf-y') })).status).toBe(401);
    expect((await reader.mutate('bulk.importIdentities', { csv: 'name\nx', dryRun: true })).status).toBe(401);
    expect((await reader.query('network.graph', { query: {} })).status).toBe(401);
    // a reader may preview a fix's reads, not its writes
    expect(
      (await reader.query('policy.previewFix', { serviceId: 'x', changes: [{ resource: 'identities', op: 'patch', id: me, body: {} }] })).status,
    ).toBe(401);
    expect(await names('/services', 'wf-')).toEqual([]);
  });
});
