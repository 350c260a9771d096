import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request, Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, MINUTE } from '../support/clock';
import { Network } from './policies-network';

/**
 * Replies of reads are kept serialized while nothing is written (api/replyCache.ts) and answered before Fastify when
 * repeated. Whatever changes in between must show at once: writes through any path, another caller, a session that
 * ended, time passing.
 */
let net: Network;
const clock = new ManualClock();
beforeAll(async () => {
  net = await Network.start({ clock });
});
afterAll(() => net.stop());

const names = (r: { body: any }) => (r.body.data as Array<{ name: string }>).map((x) => x.name);

describe('reply cache', () => {
  it('shows writes made through the API and straight to the store at once', async () => {
    const id = await net.identity('rc-one');
    const url = `/identities?filter=${encodeURIComponent('name contains "rc-"')}`;
    for (let i = 0; i < 3; i++) expect(names(await net.admin.get(url))).toEqual(['rc-one']); // computed, kept, reused
    await net.admin.patch(`/identities/${id}`, { name: 'rc-renamed' });
    expect(names(await net.admin.get(url))).toEqual(['rc-renamed']);
    await net.app.core.store.runSql('UPDATE identities SET name = ? WHERE id = ?', 'rc-raw', id);
    expect(names(await net.admin.get(url))).toEqual(['rc-raw']);
    expect((await net.admin.get(`/identities/${id}`)).body.data.name).toBe('rc-raw');
    await net.admin.del(`/identities/${id}`);
    expect(names(await net.admin.get(url))).toEqual([]);
    expect((await net.admin.get(`/identities/${id}`)).status).toBe(404);
  });

  it('answers a URL from the cache from its third request on (a change that bypasses the write count is not seen)', async () => {
    const id = await net.identity('rc-reuse');
    const url = `/identities/${id}`;
    expect((await net.admin.get(url)).body.data.name).toBe('rc-reuse'); // computed
    expect((await net.admin.get(url)).body.data.name).toBe('rc-reuse'); // computed and kept
    // touchSql is for writes no kept reply shows; misused here, it proves the next reply comes from the cache
    await net.app.core.store.touchSql('UPDATE identities SET name = ? WHERE id = ?', 'rc-hidden', id);
    expect((await net.admin.get(url)).body.data.name).toBe('rc-reuse');
    await net.app.core.store.runSql("UPDATE settings SET value = value WHERE key = 'none'");
    expect((await net.admin.get(url)).body.data.name).toBe('rc-hidden');
  });

  it('answers each API session for itself: another caller at the same URL is authorised afresh', async () => {
    const url = '/identities?limit=3';
    expect((await net.admin.get(url)).status).toBe(200);
    const user = await net.login(await net.identity('rc-plain-user'));
    expect((await user.get(url)).status).toBe(401);
    const anonymous = net.app.client();
    expect((await anonymous.get(url)).status).toBe(401);
    anonymous.token = 'not-a-token';
    expect((await anonymous.get(url)).status).toBe(401);
    await anonymous.close();
  });

  it('stops answering a session that ended', async () => {
    const admin = await net.app.adminClient();
    const url = '/services?limit=5';
    expect((await admin.get(url)).status).toBe(200);
    expect((await admin.get(url)).status).toBe(200);
    expect((await admin.del('/current-api-session')).status).toBe(200);
    expect((await admin.get(url)).status).toBe(401);
    await admin.close();
  });

  it('gives each identity its own client service list at the same URL', async () => {
    const a = await net.identity('rc-a', ['rc-team-a']);
    const b = await net.identity('rc-b', ['rc-team-b']);
    await net.service('rc-svc-a', ['rc-web-a']);
    await net.service('rc-svc-b', ['rc-web-b']);
    await net.servicePolicy('rc-p-a', 'Dial', ['#rc-team-a'], ['#rc-web-a']);
    await net.servicePolicy('rc-p-b', 'Dial', ['#rc-team-b'], ['#rc-web-b']);
    const ca = await net.login(a);
    const cb = await net.login(b);
    for (let i = 0; i < 2; i++) {
      expect(names(await ca.get('/services', { api: 'client' }))).toEqual(['rc-svc-a']);
      expect(names(await cb.get('/services', { api: 'client' }))).toEqual(['rc-svc-b']);
    }
    await net.servicePolicy('rc-p-ab', 'Dial', ['#rc-team-a'], ['#rc-web-b']);
    expect(names(await ca.get('/services', { api: 'client' }))).toEqual(['rc-svc-a', 'rc-svc-b']);
  });

  it('follows the clock: a timed disable lapses without a write', async () => {
    const id = await net.identity('rc-timed');
    expect((await net.admin.post(`/identities/${id}/disable`, { durationMinutes: 10 })).status).toBe(200);
    expect((await net.admin.get(`/identities/${id}`)).body.data.disabled).toBe(true);
    expect((await net.admin.get(`/identities/${id}`)).body.data.disabled).toBe(true);
    clock.advance(11 * MINUTE);
    expect((await net.admin.get(`/identities/${id}`)).body.data).toMatchObject({ disabled: false, disabledUntil: null });
  });

  it('answers a repeated read with the same bytes and headers as the first', async () => {
    const url = `${net.app.urls.management}/identities?limit=2`;
    const agent = new Agent({ connect: { ca: readFileSync(join(net.app.dataDir, 'pki', 'ca-bundle.pem'), 'utf8') } });
    const get = async () => {
      const r = await request(url, { headers: { 'zt-session': net.admin.token! }, dispatcher: agent });
      return { status: r.statusCode, type: r.headers['content-type'], length: r.headers['content-length'], body: await r.body.text() };
    };
    await net.app.core.store.runSql("UPDATE identities SET tags = '{}' WHERE 1 = 0"); // no change, but a write: a fresh reply
    // the first reply is computed, the second computed and kept (a URL is kept from its second request on), the
    // third answered from the cache
    const first = await get();
    const second = await get();
    const third = await get();
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(first).toMatchObject({ status: 200, type: 'application/json; charset=utf-8' });
    await agent.close();
  });
});
