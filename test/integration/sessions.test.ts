import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/client';
import { Network } from './policies-network';

let net: Network;

beforeAll(async () => {
  net = await Network.start();
  await net.openRouting('sess-open');
});
afterAll(async () => {
  await net.stop();
});

const sessionIds = async (c: ApiClient) => (await c.get('/sessions?limit=100', { api: 'client' })).body.data.map((s: any) => s.id).sort();

describe('sessions', () => {
  it('create Dial/Bind → 201 with the usable edge routers; repeat returns the same session; list, get, delete', async () => {
    const me = await net.identity('s-me', ['s-eng']);
    const svc = await net.service('s-svc', ['s-web']);
    const far = await net.router('s-far', ['s-far']); // not reachable by the identity
    await net.serviceEdgeRouterPolicy('s-far-serp', ['#s-web'], [`@${far}`]);
    const dial = await net.servicePolicy('s-dial', 'Dial', ['#s-eng'], ['#s-web']);
    await net.servicePolicy('s-bind', 'Bind', ['#s-eng'], ['#s-web']);
    const c = await net.login(me);
    const r = await c.post('/sessions', { serviceId: svc, type: 'Dial', tags: { app: 'x' } }, { api: 'client' });
    expect(r.status).toBe(201);
    const s = r.body.data;
    expect(s).toMatchObject({
      type: 'Dial',
      serviceId: svc,
      identityId: me,
      service: { id: svc, name: 's-svc', entity: 'services' },
      apiSessionId: expect.any(String),
      apiSession: { entity: 'api-sessions', id: expect.any(String) },
      tags: { app: 'x' },
      token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    });
    expect(s.edgeRouters).toEqual([
      {
        appData: {},
        cost: 0,
        disabled: false,
        hostname: '',
        isOnline: true,
        name: 'sess-open',
        noTraversal: false,
        supportedProtocols: {},
        syncStatus: expect.any(String),
        urls: {},
      },
    ]);
    expect(s).not.toHaveProperty('servicePolicies');
    const claims = JSON.parse(Buffer.from(s.token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: svc, jti: s.id, z_asid: s.apiSessionId, z_iid: me, z_st: 'Dial', z_t: 's', aud: ['openziti'] });
    const again = await c.post('/sessions', { serviceId: svc }, { api: 'client' });
    expect(again.status).toBe(201);
    expect(again.body.data.id).toBe(s.id);
    const bind = (await c.post('/sessions', { serviceId: svc, type: 'Bind' }, { api: 'client' })).body.data;
    expect(bind.type).toBe('Bind');
    expect(await sessionIds(c)).toEqual([s.id, bind.id].sort());
    expect((await c.get(`/sessions/${s.id}`, { api: 'client' })).body.data).toMatchObject({ id: s.id, token: s.token });
    // management view: every session; servicePolicies lists the policies whose posture checks passed (none exist here)
    const m = (await net.admin.get(`/sessions/${s.id}`)).body.data;
    expect(m).toMatchObject({ id: s.id, identityId: me, servicePolicies: [] });
    expect(dial).toBeDefined();
    expect((await net.admin.get(`/sessions?filter=${encodeURIComponent(`identityId = "${me}"`)}`)).body.meta.pagination.totalCount).toBe(2);
    expect((await net.admin.get(`/sessions/${s.id}/route-path`)).body.data).toEqual({ routePath: [] });
    // someone else's sessions are invisible to a client
    const otherId = await net.identity('s-other', ['s-eng']);
    const other = await net.login(otherId);
    expect((await other.get(`/sessions/${s.id}`, { api: 'client' })).status).toBe(404);
    expect((await other.del(`/sessions/${s.id}`, { api: 'client' })).status).toBe(404);
    expect(await sessionIds(other)).toEqual([]);
    expect((await c.del(`/sessions/${s.id}`, { api: 'client' })).status).toBe(200);
    expect(await sessionIds(c)).toEqual([bind.id]);
    expect((await net.admin.del(`/sessions/${bind.id}`)).status).toBe(200);
    expect(await sessionIds(c)).toEqual([]);
  });

  it('refusals: unknown or unreachable service 404, wrong kind of access 400, bad body 400', async () => {
    const me = await net.identity('sr-me', ['sr-eng']);
    const bindOnly = await net.service('sr-bind-only', ['sr-host']);
    const hidden = await net.service('sr-hidden');
    await net.servicePolicy('sr-bind', 'Bind', ['#sr-eng'], ['#sr-host']);
    const c = await net.login(me);
    expect((await c.post('/sessions', { serviceId: 'nope' }, { api: 'client' })).status).toBe(404);
    expect((await c.post('/sessions', { serviceId: hidden }, { api: 'client' })).status).toBe(404);
    const wrongKind = await c.post('/sessions', { serviceId: bindOnly, type: 'Dial' }, { api: 'client' });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.error.cause.field).toBe('serviceId');
    expect((await c.post('/sessions', {}, { api: 'client' })).body.error.cause.field).toBe('serviceId');
    expect((await c.post('/sessions', { serviceId: bindOnly, type: 'Invalid' }, { api: 'client' })).body.error.cause.field).toBe('type');
    expect((await c.post('/sessions', { serviceId: bindOnly, type: 'Other' }, { api: 'client' })).body.error.cause.field).toBe('type');
  });

  it('shows the edge routers as they are at each creation: a router or policy change shows in the next session', async () => {
    const me = await net.identity('rt-me', ['rt-eng']);
    const services = await Promise.all(['rt-a', 'rt-b', 'rt-c', 'rt-d'].map((n) => net.service(n, ['rt-web'])));
    await net.servicePolicy('rt-p', 'Dial', ['#rt-eng'], ['#rt-web']);
    const c = await net.login(me);
    const open = async (svc: string) => {
      const r = await c.post('/sessions', { serviceId: svc }, { api: 'client' });
      expect(r.status).toBe(201);
      return r.body.data.edgeRouters.map((e: any) => `${e.name}:${e.isOnline ? 'online' : 'offline'}`);
    };
    const opened = (await net.admin.get(`/edge-routers?filter=${encodeURIComponent('name = "sess-open"')}`)).body.data[0].id as string;
    expect(await open(services[0]!)).toEqual(['sess-open:online']);
    await net.app.core.store.runSql('UPDATE edge_routers SET is_online = 0 WHERE id = ?', opened);
    try {
      expect(await open(services[1]!)).toEqual(['sess-open:offline']);
      const extra = await net.router('rt-extra', ['rt-extra'], { online: true });
      await net.edgeRouterPolicy('rt-extra-erp', ['#rt-eng'], ['#rt-extra']);
      await net.serviceEdgeRouterPolicy('rt-extra-serp', ['#rt-web'], ['#rt-extra']);
      // online first
      expect(await open(services[2]!)).toEqual(['rt-extra:online', 'sess-open:offline']);
      await net.admin.patch(`/edge-routers/${extra}`, { name: 'rt-renamed' });
      expect(await open(services[3]!)).toEqual(['rt-renamed:online', 'sess-open:offline']);
      // a repeated request shows the same
      expect(await open(services[3]!)).toEqual(['rt-renamed:online', 'sess-open:offline']);
    } finally {
      await net.app.core.store.runSql('UPDATE edge_routers SET is_online = 1 WHERE id = ?', opened);
    }
  });

  it('sessions die with their API session, their service, and the access that allowed them', async () => {
    const me = await net.identity('sd-me', ['sd-eng']);
    const a = await net.service('sd-a', ['sd-web']);
    const b = await net.service('sd-b', ['sd-web']);
    const keep = await net.service('sd-keep', ['sd-keep']);
    const p = await net.servicePolicy('sd-p', 'Dial', ['#sd-eng'], ['#sd-web']);
    await net.servicePolicy('sd-keep-p', 'Dial', [`@${me}`], ['#sd-keep']);
    const c = await net.login(me);
    const open = async (svc: string) => (await c.post('/sessions', { serviceId: svc }, { api: 'client' })).body.data.id as string;
    const sa = await open(a);
    const sb = await open(b);
    const sk = await open(keep);
    // a page of sessions for services of different classes still shows each one's edge routers
    const listed = (await c.get('/sessions', { api: 'client' })).body.data;
    expect(listed).toHaveLength(3);
    for (const x of listed) expect(x.edgeRouters.map((e: any) => e.name)).toEqual(['sess-open']);
    // a service losing the attribute loses the policy, and its session
    await net.admin.patch(`/services/${b}`, { roleAttributes: [] });
    expect(await sessionIds(c)).toEqual([sa, sk].sort());
    await net.admin.patch(`/services/${b}`, { roleAttributes: ['sd-web'] });
    const sb2 = await open(b);
    expect(sb2).not.toBe(sb);
    // deleting the policy kills the sessions it allowed and nothing else
    expect((await net.admin.del(`/service-policies/${p}`)).status).toBe(200);
    expect(await sessionIds(c)).toEqual([sk]);
    expect(await net.visibleServices(c)).toEqual(['sd-keep']);
    // narrowing a policy (type change) kills the Dial sessions it no longer grants
    const p2 = await net.servicePolicy('sd-p2', 'Dial', ['#sd-eng'], ['#sd-web']);
    const sa2 = await open(a);
    await net.admin.patch(`/service-policies/${p2}`, { type: 'Bind' });
    expect(await sessionIds(c)).toEqual([sk]);
    expect((await c.post('/sessions', { serviceId: a, type: 'Bind' }, { api: 'client' })).status).toBe(201);
    expect(sa2).toBeDefined();
    // an identity losing its attribute loses the sessions too
    await net.admin.patch(`/service-policies/${p2}`, { type: 'Dial' });
    const sa3 = await open(a);
    await net.admin.patch(`/identities/${me}`, { roleAttributes: [] });
    expect((await sessionIds(c)).includes(sa3)).toBe(false);
    expect(await sessionIds(c)).toEqual([sk]);
    // deleting the service deletes its sessions
    expect((await net.admin.del(`/services/${keep}`)).status).toBe(200);
    expect(await sessionIds(c)).toEqual([]);
    // logging out deletes the API session's sessions
    await net.admin.patch(`/identities/${me}`, { roleAttributes: ['sd-eng'] });
    await net.servicePolicy('sd-p3', 'Dial', ['#sd-eng'], ['#sd-web']);
    const last = await open(a);
    expect((await net.admin.get(`/sessions/${last}`)).status).toBe(200);
    expect((await c.del('/current-api-session', { api: 'client' })).status).toBe(200);
    expect((await net.admin.get(`/sessions/${last}`)).status).toBe(404);
  });
});
