// Public shares through the Management API: a svc.proxy.v1 config is live on the frontend only while a
// service carries it, and share configs are validated against the running frontend's configuration.
import { describe, expect, it } from 'vitest';
import { SVC_PROXY_CONFIG_TYPE_ID } from '../../src/main/core/entities/builtinConfigTypes';
import { findLiveShare } from '../../src/main/core/shares';
import type { TestApp } from '../support/app';
import { HttpUserAgent, type EchoBackend } from '../support/browser';
import type { ApiClient } from '../support/client';
import { frontendSection, shareUrl, startShareApp, useShareApp } from '../support/shares';

let app: TestApp;
let admin: ApiClient;
let backend: EchoBackend;
const agent = new HttpUserAgent();

useShareApp((s) => ({ app, admin, backend } = s));

const configBody = (token: string, data: Record<string, unknown> = {}) => ({
  name: `cfg-${token}`,
  configTypeId: SVC_PROXY_CONFIG_TYPE_ID,
  data: { token, backendMode: 'proxy', target: backend.url, ...data },
});

const shareConfigCount = async (c: ApiClient) =>
  (await c.get(`/configs?filter=${encodeURIComponent(`type = "${SVC_PROXY_CONFIG_TYPE_ID}"`)}`)).body.meta.pagination.totalCount as number;

describe('share resolver', () => {
  it('serves a share only while a service carries its config', async () => {
    const configId = await admin.create('/configs', configBody('live-one'));
    const url = shareUrl(app, 'live-one', '/p?q=1');
    expect((await agent.request(url)).status).toBe(404);
    expect(await findLiveShare(app.core, 'live-one')).toBeUndefined();

    const serviceId = await admin.create('/services', { name: 'svc-live-one', encryptionRequired: true, configs: [configId] });
    const res = await agent.request(url);
    expect(res.status).toBe(200);
    expect(res.json().url).toBe('/p?q=1');
    expect(await findLiveShare(app.core, 'live-one')).toEqual({ token: 'live-one', backendMode: 'proxy', target: backend.url });

    expect((await admin.del(`/services/${serviceId}`)).status).toBe(200);
    expect((await agent.request(url)).status).toBe(404);
    expect((await admin.del(`/configs/${configId}`)).status).toBe(200);
  });

  it('sees every change at once (the resolver caches answers only while the store is unchanged)', async () => {
    const configId = await admin.create('/configs', configBody('changing', { target: `${backend.url}/v1` }));
    const serviceId = await admin.create('/services', { name: 'svc-changing', encryptionRequired: true, configs: [configId] });
    const url = shareUrl(app, 'changing', '/x');
    expect((await agent.request(url)).json().url).toBe('/v1/x');
    expect((await agent.request(url)).json().url).toBe('/v1/x'); // answered from the cache
    expect((await admin.patch(`/configs/${configId}`, { data: { ...configBody('changing').data, target: `${backend.url}/v2` } })).status).toBe(200);
    expect((await agent.request(url)).json().url).toBe('/v2/x');
    expect((await agent.request(shareUrl(app, 'not-yet'))).status).toBe(404); // a cached miss...
    const later = await admin.create('/configs', configBody('not-yet'));
    await admin.create('/services', { name: 'svc-not-yet', encryptionRequired: true, configs: [later] });
    expect((await agent.request(shareUrl(app, 'not-yet'))).status).toBe(200); // ...is forgotten by the next write
    await app.core.store.runSql('DELETE FROM services WHERE id = ?', serviceId);
    expect((await agent.request(url)).status).toBe(404);
  });

  it('gives the frontend the OAuth settings, with the 3h default check interval', async () => {
    const configId = await admin.create('/configs', configBody('oauth-one', { oauth: { provider: 'github', emailPatterns: ['*@example.com'] } }));
    await admin.create('/services', { name: 'svc-oauth-one', encryptionRequired: true, configs: [configId] });
    expect(await findLiveShare(app.core, 'oauth-one')).toEqual({
      token: 'oauth-one',
      backendMode: 'proxy',
      target: backend.url,
      oauth: { provider: 'github', emailPatterns: ['*@example.com'], checkIntervalMs: 3 * 3_600_000 },
    });
    // An OAuth share never reaches the backend without a session: browsers go to the provider, APIs get 401.
    const page = await agent.request(shareUrl(app, 'oauth-one'));
    expect(page.status).toBe(302);
    expect(page.location).toMatch(/^https:\/\/github\.com\/login\/oauth\/authorize\?/);
    expect((await agent.request(shareUrl(app, 'oauth-one'), { headers: { accept: 'application/json' } })).status).toBe(401);
  });
});

describe('share config validation (Management API)', () => {
  const refused: Array<[string, Record<string, unknown>, string, RegExp]> = [
    [
      'unknown provider',
      { oauth: { provider: 'gitlab' } },
      'data.oauth.provider',
      /unknown OAuth provider "gitlab" \(configured providers: github, google\)/,
    ],
    ['pattern without @', { oauth: { provider: 'github', emailPatterns: ['*@ok.com', 'example.com'] } }, 'data.oauth.emailPatterns.1', /has no "@"/],
    ['bad glob', { oauth: { provider: 'github', emailPatterns: ['a b@example.com'] } }, 'data.oauth.emailPatterns.0', /must not contain spaces/],
    ['zero interval', { oauth: { provider: 'github', checkInterval: '0s' } }, 'data.oauth.checkInterval', /must be greater than zero/],
    ['interval without unit', { oauth: { provider: 'github', checkInterval: '10' } }, 'data.oauth.checkInterval', /must match pattern/],
    ['repeated unit', { oauth: { provider: 'github', checkInterval: '1h1h' } }, 'data.oauth.checkInterval', /appears twice/],
    ['no provider', { oauth: { emailPatterns: ['*@example.com'] } }, 'data.oauth.provider', /is required/],
    ['proxy target not a URL', { target: 'localhost:3000' }, 'data.target', /http or https URL/],
    ['proxy target with credentials', { target: 'http://u:p@127.0.0.1/' }, 'data.target', /without credentials/],
    ['relative web directory', { backendMode: 'web', target: 'site' }, 'data.target', /absolute directory path/],
    ['unknown backend mode', { backendMode: 'tcp' }, 'data.backendMode', /allowed values/],
    ['token ending in -', { token: 'abc-' }, 'data.token', /start and end with a letter or digit/],
    ['uppercase token', { token: 'ABC' }, 'data.token', /pattern/],
  ];
  for (const [what, data, field, reason] of refused) {
    it(`refuses ${what} with a field error and writes nothing`, async () => {
      const before = await shareConfigCount(admin);
      const r = await admin.post('/configs', configBody('refused-one', data));
      expect(r.status, r.text).toBe(400);
      expect(r.body.error.code).toBe('COULD_NOT_VALIDATE');
      expect(r.body.error.cause.field).toBe(field);
      expect(r.body.error.cause.reason).toMatch(reason);
      expect(await shareConfigCount(admin)).toBe(before);
    });
  }

  it('accepts valid OAuth options (case-insensitive globs, Go durations)', async () => {
    const r = await admin.post(
      '/configs',
      configBody('valid-oauth', { oauth: { provider: 'google', emailPatterns: ['*@Example.com', 'alice+*@x.org'], checkInterval: '1h30m' } }),
    );
    expect(r.status, r.text).toBe(201);
  });

  it('tokens are unique among share configs, on create and on update', async () => {
    const first = await admin.create('/configs', configBody('taken-one'));
    const dup = await admin.post('/configs', { ...configBody('taken-one'), name: 'another-name' });
    expect(dup.status).toBe(400);
    expect(dup.body.error.cause).toMatchObject({ field: 'data.token', reason: 'is already used by the share config "cfg-taken-one"' });

    const second = await admin.create('/configs', configBody('taken-two'));
    const moved = await admin.patch(`/configs/${second}`, { data: configBody('taken-one').data });
    expect(moved.status).toBe(400);
    expect(moved.body.error.cause.field).toBe('data.token');
    // A config keeps its own token when it is updated.
    const kept = await admin.put(`/configs/${first}`, {
      name: 'cfg-taken-one',
      data: { ...configBody('taken-one').data, target: 'http://127.0.0.1:9/' },
    });
    expect(kept.status, kept.text).toBe(200);
  });

  it('updates are validated like creates', async () => {
    const id = await admin.create('/configs', configBody('update-me'));
    const r = await admin.patch(`/configs/${id}`, { data: { ...configBody('update-me').data, oauth: { provider: 'nope' } } });
    expect(r.status).toBe(400);
    expect(r.body.error.cause.field).toBe('data.oauth.provider');
    expect((await admin.get(`/configs/${id}`)).body.data.data.oauth).toBeUndefined();
  });
});

describe('share configs on a Weft without OAuth', () => {
  for (const [what, frontend, reason] of [
    [
      'a frontend without an oauth section',
      frontendSection({ noOAuth: true }),
      'OAuth is not available: the frontend configuration has no "oauth" section',
    ],
    ['no frontend at all', undefined, 'OAuth is not available: this Weft has no frontend configured'],
  ] as const) {
    it(`refuses OAuth options with ${what}, accepts open shares`, async () => {
      const other = await startShareApp({ frontend });
      const c = await other.adminClient();
      try {
        const r = await c.post('/configs', configBody('no-oauth', { oauth: { provider: 'github' } }));
        expect(r.status).toBe(400);
        expect(r.body.error.cause.field).toBe('data.oauth');
        expect(r.body.error.cause.reason).toContain(reason);
        expect((await c.post('/configs', configBody('no-oauth'))).status).toBe(201);
        expect(other.urls.frontend === undefined).toBe(frontend === undefined);
      } finally {
        await c.close();
        await other.stop();
      }
    });
  }
});
