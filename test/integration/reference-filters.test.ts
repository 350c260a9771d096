// ZitiQL through references, as OpenZiti resolves them for every type's references (the CLI's
// `ziti edge list terminators 'service.name = "x"'`, `ziti ops verify traffic`): one reference and chains, with the
// same paging and sorting as any list, and bad paths refused as INVALID_FILTER. Runs on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { deviceSession, enrolledDevice } from '../support/edge';

let app: TestApp;
let admin: ApiClient;
let services: string[];
let sessionsOf: Record<string, string[]>;

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.adminClient();
  services = [];
  for (const name of ['ref-alpha', 'ref-beta', 'ref-gamma'])
    services.push(await admin.create('/services', { name, encryptionRequired: true, roleAttributes: ['ref'] }));
  await admin.create('/service-policies', {
    name: 'ref-dial',
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#ref-users'],
    serviceRoles: ['#ref'],
  });
  await admin.create('/edge-router-policies', { name: 'ref-erp', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#all'] });
  await admin.create('/service-edge-router-policies', { name: 'ref-serp', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#all'] });
  sessionsOf = {};
  for (const who of ['ref-ann', 'ref-bob']) {
    const { client } = await deviceSession(app, await enrolledDevice(app, admin, who, ['ref-users']));
    sessionsOf[who] = [];
    for (const serviceId of who === 'ref-ann' ? services : services.slice(0, 1)) {
      sessionsOf[who].push((await client.post('/sessions', { serviceId, type: 'Dial' }, { api: 'client' })).body.data.id);
    }
    await client.close();
  }
  for (const [i, serviceId] of services.entries()) {
    await admin.create('/terminators', { service: serviceId, router: app.router!.id, binding: 'transport', address: `tcp:127.0.0.1:${9000 + i}` });
  }
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

const list = async (path: string, filter: string) => {
  const r = await admin.get(`${path}?filter=${encodeURIComponent(filter)}`);
  expect(r.status, r.text).toBe(200);
  return r.body;
};
const ids = async (path: string, filter: string) => ((await list(path, filter)).data as Array<{ id: string }>).map((e) => e.id).sort();

describe('filters through references', () => {
  it('one reference: terminators by service.name and router.name, sessions by service.name, api sessions by identity.name', async () => {
    const byService = (await list('/terminators', 'service.name = "ref-beta"')).data;
    expect(byService.map((t: any) => t.service.id)).toEqual([services[1]]);
    expect((await list('/terminators', `router.name = "${app.router!.name}" and service.name contains "ref-"`)).meta.pagination.totalCount).toBe(3);
    expect(await ids('/sessions', 'service.name = "ref-alpha"')).toEqual([sessionsOf['ref-ann']![0], sessionsOf['ref-bob']![0]].sort());
    expect((await list('/api-sessions', 'identity.name = "ref-bob"')).data.map((s: any) => s.identity.name)).toEqual(['ref-bob']);
    expect((await list('/authenticators', 'identity.name = "ref-ann"')).data.map((a: any) => a.method)).toEqual(['cert']);
    expect((await list('/identities', 'type.name = "Device" and name contains "ref-"')).meta.pagination.totalCount).toBe(2);
  });

  it('chains: sessions by apiSession.identity.name, with negations, sets and tags of the referenced rows', async () => {
    expect(await ids('/sessions', 'apiSession.identity.name = "ref-ann"')).toEqual([...sessionsOf['ref-ann']!].sort());
    expect(await ids('/sessions', 'apiSession.identity.name = "ref-ann" and not service.name in ["ref-alpha", "ref-beta"]')).toEqual([
      sessionsOf['ref-ann']![2],
    ]);
    expect(await ids('/sessions', 'anyOf(apiSession.identity.roleAttributes) = "ref-users" and service.name = "ref-gamma"')).toEqual([
      sessionsOf['ref-ann']![2],
    ]);
    expect(await ids('/sessions', 'apiSession.identity.tags.team = "none"')).toEqual([]);
  });

  it('pages and sorts as any list', async () => {
    const sorted = await list('/sessions', 'apiSession.identity.name contains "ref-" sort by service.name desc limit 2');
    expect(sorted.meta.pagination).toMatchObject({ limit: 2, offset: 0, totalCount: 4 });
    expect(sorted.data.map((s: any) => s.service.name)).toEqual(['ref-gamma', 'ref-beta']);
    const next = await list('/sessions', 'apiSession.identity.name contains "ref-" sort by service.name desc skip 2 limit 2');
    expect(next.data.map((s: any) => s.service.name)).toEqual(['ref-alpha', 'ref-alpha']);
  });

  it('refuses what a reference does not lead to with INVALID_FILTER', async () => {
    for (const filter of ['service.nope = "x"', 'nosuchref.name = "x"', 'apiSession.identity.type.nope = 1', 'service.name = 5']) {
      const r = await admin.get(`/terminators?filter=${encodeURIComponent(filter)}`);
      expect(r.status, filter).toBe(400);
      expect(r.body.error.code).toBe('INVALID_FILTER');
    }
  });
});
