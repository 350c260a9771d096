import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Network } from './policies-network';

let net: Network;

beforeAll(async () => {
  net = await Network.start();
});
afterAll(async () => {
  await net.stop();
});

describe('policy advice', () => {
  it('reports dial/bind, router counts and common routers with their online state', async () => {
    const me = await net.identity('adv-me', ['adv-eng']);
    const svc = await net.service('adv-svc', ['adv-web']);
    const r1 = await net.router('adv-r1', ['adv-a'], { online: true });
    const r2 = await net.router('adv-r2', ['adv-a', 'adv-b']);
    await net.router('adv-r3', ['adv-b']);
    await net.servicePolicy('adv-dial', 'Dial', ['#adv-eng'], ['#adv-web']);
    await net.edgeRouterPolicy('adv-erp', ['#adv-eng'], ['#adv-a']);
    await net.serviceEdgeRouterPolicy('adv-serp', ['#adv-web'], ['#adv-a', '#adv-b']);
    const r = await net.admin.get(`/identities/${me}/policy-advice/${svc}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      identityId: me,
      identity: { _links: { self: { href: `./identities/${me}` } }, entity: 'identities', id: me, name: 'adv-me' },
      serviceId: svc,
      service: { _links: { self: { href: `./services/${svc}` } }, entity: 'services', id: svc, name: 'adv-svc' },
      isDialAllowed: true,
      isBindAllowed: false,
      identityRouterCount: 2,
      serviceRouterCount: 3,
      commonRouters: [
        { _links: { self: { href: `./edge-routers/${r1}` } }, entity: 'edge-routers', id: r1, name: 'adv-r1', isOnline: true },
        { _links: { self: { href: `./edge-routers/${r2}` } }, entity: 'edge-routers', id: r2, name: 'adv-r2', isOnline: false },
      ],
    });
    // every common router by default (as OpenZiti); limit/offset page them, with the total in meta.pagination
    const page = await net.admin.get(`/identities/${me}/policy-advice/${svc}?limit=1&offset=1`);
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual({ ...r.body.data, commonRouters: [r.body.data.commonRouters[1]] });
    expect(page.body.meta.pagination).toEqual({ limit: 1, offset: 1, totalCount: 2 });
    expect((await net.admin.get(`/identities/${me}/policy-advice/${svc}?limit=5`)).body.data.commonRouters).toHaveLength(2);
    expect((await net.admin.get(`/identities/${me}/policy-advice/${svc}?limit=0`)).body.error.code).toBe('INVALID_PAGINATION');
    expect((await net.admin.get(`/identities/nope/policy-advice/${svc}`)).status).toBe(404);
    expect((await net.admin.get(`/identities/${me}/policy-advice/nope`)).status).toBe(404);
    const c = await net.login(me);
    expect((await c.get(`/identities/${me}/policy-advice/${svc}`)).status).toBe(401);
  });

  it('matches what session creation allows, for every identity and service of a small network', async () => {
    const ids = {
      alice: await net.identity('mx-alice', ['mx-eng', 'mx-emea']),
      bob: await net.identity('mx-bob', ['mx-eng']),
      carol: await net.identity('mx-carol', ['mx-ops']),
      dave: await net.identity('mx-dave'),
    };
    const svcs = {
      web: await net.service('mx-web', ['mx-web']),
      db: await net.service('mx-db', ['mx-db']),
      admin: await net.service('mx-admin', ['mx-web', 'mx-admin']),
    };
    const rEmea = await net.router('mx-r-emea', ['mx-emea']);
    await net.router('mx-r-core', ['mx-core']);
    await net.servicePolicy('mx-dial-eng', 'Dial', ['#mx-eng'], ['#mx-web'], { semantic: 'AnyOf' });
    await net.servicePolicy('mx-dial-ops', 'Dial', ['#mx-ops', `@${ids.dave}`], ['#mx-db', '#mx-admin'], { semantic: 'AnyOf' });
    await net.servicePolicy('mx-bind-emea', 'Bind', ['#mx-eng', '#mx-emea'], ['#mx-db'], { semantic: 'AllOf' });
    await net.edgeRouterPolicy('mx-erp-core', ['#mx-eng', '#mx-ops'], ['#mx-core'], { semantic: 'AnyOf' });
    await net.edgeRouterPolicy('mx-erp-emea', ['#mx-emea'], [`@${rEmea}`]);
    await net.serviceEdgeRouterPolicy('mx-serp-web', ['#mx-web'], ['#mx-core']);
    await net.serviceEdgeRouterPolicy('mx-serp-db', ['#mx-db'], ['#mx-emea']);
    const seen: string[] = [];
    for (const [who, identityId] of Object.entries(ids)) {
      const client = await net.login(identityId);
      for (const [what, serviceId] of Object.entries(svcs)) {
        const advice = (await net.admin.get(`/identities/${identityId}/policy-advice/${serviceId}`)).body.data;
        for (const type of ['Dial', 'Bind'] as const) {
          const allowed = type === 'Dial' ? advice.isDialAllowed : advice.isBindAllowed;
          const r = await client.post('/sessions', { serviceId, type }, { api: 'client' });
          const expected = !allowed ? (advice.isDialAllowed || advice.isBindAllowed ? 400 : 404) : advice.commonRouters.length ? 201 : 400;
          expect(r.status, `${who} ${type} ${what}`).toBe(expected);
          if (r.status === 201) {
            expect(r.body.data.edgeRouters.map((e: any) => e.name).sort()).toEqual(advice.commonRouters.map((e: any) => e.name).sort());
            seen.push(`${who} ${type} ${what}`);
          }
          if (allowed && !advice.commonRouters.length) expect(r.body.error.code).toBe('NO_EDGE_ROUTERS_AVAILABLE');
        }
      }
    }
    // the network's intended outcome, spelled out
    expect(seen.sort()).toEqual(['alice Bind db', 'alice Dial admin', 'alice Dial web', 'bob Dial admin', 'bob Dial web', 'carol Dial admin']);
    // carol (ops) may dial db and admin but reaches only the core router, which serves web-tagged services (admin)
    const carolDb = (await net.admin.get(`/identities/${ids.carol}/policy-advice/${svcs.db}`)).body.data;
    expect(carolDb).toMatchObject({ isDialAllowed: true, identityRouterCount: 1, serviceRouterCount: 1, commonRouters: [] });
    // dave is named by id: he may dial, but reaches no router
    expect((await net.admin.get(`/identities/${ids.dave}/policy-advice/${svcs.admin}`)).body.data).toMatchObject({
      isDialAllowed: true,
      identityRouterCount: 0,
      commonRouters: [],
    });
  });
});
