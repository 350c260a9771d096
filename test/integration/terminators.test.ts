import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Network } from './policies-network';

let net: Network;

beforeAll(async () => {
  net = await Network.start();
});
afterAll(async () => {
  await net.stop();
});

describe('terminators', () => {
  it('CRUD with service and router refs; listed per service on both APIs; gone with their service or router', async () => {
    const svc = await net.service('t-svc', ['t-web']);
    const other = await net.service('t-other');
    const router = await net.router('t-router');
    const id = await net.admin.create('/terminators', {
      service: svc,
      router,
      binding: 'edge',
      address: 'tcp:10.0.0.1:443',
      identity: 'host-1',
      cost: 10,
      precedence: 'required',
      identitySecret: Buffer.from('secret').toString('base64'),
      tags: { k: 'v' },
    });
    const g = (await net.admin.get(`/terminators/${id}`)).body.data;
    expect(g).toMatchObject({
      id,
      serviceId: svc,
      service: { entity: 'services', id: svc, name: 't-svc' },
      routerId: router,
      router: { entity: 'edge-routers', id: router, name: 't-router' },
      binding: 'edge',
      address: 'tcp:10.0.0.1:443',
      identity: 'host-1',
      cost: 10,
      dynamicCost: 10,
      precedence: 'required',
      tags: { k: 'v' },
    });
    expect(g).not.toHaveProperty('identitySecret');
    const second = await net.admin.create('/terminators', { service: svc, router, binding: 'transport', address: 'udp:x' });
    expect((await net.admin.get(`/terminators/${second}`)).body.data).toMatchObject({ cost: 0, precedence: 'default', identity: '' });
    await net.admin.create('/terminators', { service: other, router, binding: 'edge', address: 'tcp:y' });
    expect(await net.ids(`/services/${svc}/terminators`)).toEqual([id, second].sort());
    const byFilter = await net.admin.get(`/terminators?filter=${encodeURIComponent(`service = "${svc}" and cost > 5`)}`);
    expect(byFilter.body.data.map((t: any) => t.id)).toEqual([id]);

    const invalid: Array<[object, string]> = [
      [{ service: 'nope', router, binding: 'edge', address: 'a' }, 'service'],
      [{ service: svc, router: 'nope', binding: 'edge', address: 'a' }, 'router'],
      [{ service: svc, router, address: 'a' }, 'binding'],
      [{ service: svc, router, binding: 'edge', address: 'a', cost: 70000 }, 'cost'],
      [{ service: svc, router, binding: 'edge', address: 'a', precedence: 'top' }, 'precedence'],
      [{ service: svc, router, binding: 'edge', address: 'a', identitySecret: 'not base64!' }, 'identitySecret'],
    ];
    for (const [body, field] of invalid) {
      const r = await net.admin.post('/terminators', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.cause.field, JSON.stringify(body)).toBe(field);
    }
    expect((await net.admin.patch(`/terminators/${id}`, { address: 'tcp:10.0.0.2:443', cost: null })).status).toBe(200);
    expect((await net.admin.get(`/terminators/${id}`)).body.data).toMatchObject({ address: 'tcp:10.0.0.2:443', cost: 10 });
    expect((await net.admin.put(`/terminators/${id}`, { service: other, router, binding: 'edge', address: 'tcp:z' })).status).toBe(200);
    expect((await net.admin.get(`/terminators/${id}`)).body.data).toMatchObject({ serviceId: other, cost: 0, precedence: 'default', tags: {} });

    // a client sees the terminators of a service it may use, and no others
    const me = await net.identity('t-me', ['t-eng']);
    await net.servicePolicy('t-p', 'Bind', ['#t-eng'], ['#t-web']);
    const c = await net.login(me);
    const mine = await c.get(`/services/${svc}/terminators`, { api: 'client' });
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((t: any) => t.id)).toEqual([second]);
    expect((await c.get(`/services/${other}/terminators`, { api: 'client' })).status).toBe(404);

    // deleting the router, then the service, removes their terminators
    const r2 = await net.router('t-router-2');
    const onR2 = await net.admin.create('/terminators', { service: svc, router: r2, binding: 'edge', address: 'a' });
    expect((await net.admin.del(`/edge-routers/${r2}`)).status).toBe(200);
    expect((await net.admin.get(`/terminators/${onR2}`)).status).toBe(404);
    expect((await net.admin.del(`/services/${other}`)).status).toBe(200);
    expect((await net.admin.get(`/terminators/${id}`)).status).toBe(404);
    expect((await net.admin.del(`/terminators/${second}`)).status).toBe(200);
    expect(await net.ids(`/services/${svc}/terminators`)).toEqual([]);
    // terminators need the terminator permission
    expect((await c.get('/terminators')).status).toBe(401);
  });
});
