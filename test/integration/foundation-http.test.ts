import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { parse as parseYaml } from 'yaml';
import { pkcs7ToPems, fingerprintSha1 } from '../../src/main/core/pki/index';
import { useTestApp, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';

let app: TestApp;
let admin: ApiClient;

useTestApp((a, c) => ((app = a), (admin = c)));

const expectError = (r: { status: number; body: any }, status: number, code: string) => {
  expect(r.status).toBe(status);
  expect(r.body.error.code).toBe(code);
  expect(r.body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
  expect(r.body.meta.apiVersion).toBeTypeOf('string');
  expect(JSON.stringify(r.body)).not.toMatch(/at .+\.(ts|js):\d+/); // never a stack trace
};

describe('informational operations', () => {
  it('serves version on both APIs and the root aliases', async () => {
    for (const [path, api] of [
      ['/version', 'client'],
      ['/version', 'management'],
      ['/', 'root'],
      ['/version', 'root'],
    ] as const) {
      const r = await admin.get(path, { api });
      expect(r.status).toBe(200);
      expect(r.body.meta).toMatchObject({ apiVersion: expect.any(String), apiEnrollmentVersion: expect.any(String) });
      const v = r.body.data;
      expect(v).toMatchObject({
        version: expect.any(String),
        revision: expect.any(String),
        buildDate: expect.any(String),
        runtimeVersion: expect.stringContaining('node'),
      });
      expect(v.capabilities).toBeInstanceOf(Array);
      expect(v.apiVersions['edge-client'].v1).toEqual({ apiBaseUrls: [`${app.urls.api}/edge/client/v1`], path: '/edge/client/v1', version: 'v1' });
      expect(v.apiVersions['edge-management'].v1.path).toBe('/edge/management/v1');
    }
  });

  it('lists enumerated capabilities and protocols', async () => {
    expect((await admin.get('/enumerated-capabilities', { api: 'client' })).body.data).toEqual(['OIDC_AUTH', 'HA_CONTROLLER']);
    const p = await admin.get('/protocols', { api: 'management' });
    expect(p.body.data.https.address).toBe(new URL(app.urls.api).host);
  });

  it('serves its own OpenAPI documents as JSON and YAML', async () => {
    const list = await admin.get('/specs', { api: 'client' });
    expect(list.body.data.map((s: any) => s.id)).toEqual(['edge-client']);
    expect((await admin.get('/specs', { api: 'management' })).body.data[0]).toMatchObject({ id: 'edge-management', name: 'edge-management' });
    expect((await admin.get('/specs/edge-client', { api: 'client' })).body.data.name).toBe('edge-client');
    const json = JSON.parse((await admin.get('/specs/edge-management/spec', { api: 'management' })).body.data);
    expect(json.openapi).toBe('3.1.0');
    expect(json.paths['/identities'].post.requestBody.content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['name', 'type', 'isAdmin']),
    );
    const yaml = await admin.get('/specs/edge-client/spec?format=yaml', { api: 'client' });
    expect(yaml.headers['content-type']).toContain('text/yaml');
    expect(parseYaml(yaml.text).paths['/authenticate'].post).toBeDefined();
    expectError(await admin.get('/specs/nope', { api: 'client' }), 404, 'NOT_FOUND');
  });

  it('serves the CA bundle as base64 PKCS#7 at the root and under both APIs', async () => {
    for (const api of ['root', 'client', 'management'] as const) {
      const r = await admin.get('/.well-known/est/cacerts', { api });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toContain('application/pkcs7-mime');
      const pems = pkcs7ToPems(r.text);
      expect(pems.map(fingerprintSha1)).toContain(fingerprintSha1(app.core.pki.root.certPem));
      expect(pems).toHaveLength(3);
    }
  });

  it('lists this controller', async () => {
    const r = await admin.get('/controllers', { api: 'client' });
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0]).toMatchObject({ isOnline: true, fingerprint: fingerprintSha1(app.core.pki.server.certPem) });
    expect(r.body.data[0].apiAddresses['edge-management'][0].url).toBe(app.urls.management);
  });
});

describe('errors', () => {
  it('404 for unknown paths and 405 with Allow for wrong methods', async () => {
    expectError(await admin.get('/no-such-thing'), 404, 'NOT_FOUND');
    expectError(await admin.get('/identities/does-not-exist'), 404, 'NOT_FOUND');
    const r = await admin.req('DELETE', '/identities');
    expectError(r, 405, 'METHOD_NOT_ALLOWED');
    expect(String(r.headers.allow)).toContain('POST');
    expectError(await admin.req('PATCH', '/version', {}, { api: 'client' }), 405, 'METHOD_NOT_ALLOWED');
  });

  it('400 COULD_NOT_PARSE_BODY for malformed JSON, and nothing is created', async () => {
    const before = (await admin.get('/identities')).body.meta.pagination.totalCount;
    const r = await admin.req('POST', '/identities', undefined, { raw: '{"name": "x", ', contentType: 'application/json' });
    expectError(r, 400, 'COULD_NOT_PARSE_BODY');
    expect((await admin.get('/identities')).body.meta.pagination.totalCount).toBe(before);
  });

  it('400 COULD_NOT_VALIDATE with cause.field for missing fields, wrong types and out-of-range values', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['/identities', { type: 'User', isAdmin: false }, 'name'],
      ['/identities', { name: 'x', type: 'User' }, 'isAdmin'],
      ['/identities', { name: 'x', type: 'Robot', isAdmin: false }, 'type'],
      ['/identities', { name: 7, type: 'User', isAdmin: false }, 'name'],
      ['/identities', { name: 'x', type: 'User', isAdmin: 'yes' }, 'isAdmin'],
      ['/identities', { name: 'x', type: 'User', isAdmin: false, defaultHostingCost: 65536 }, 'defaultHostingCost'],
      ['/identities', { name: 'x', type: 'User', isAdmin: false, defaultHostingCost: -1 }, 'defaultHostingCost'],
      ['/identities', { name: 'x', type: 'User', isAdmin: false, serviceHostingCosts: { s: 70000 } }, 'serviceHostingCosts.s'],
      ['/identities', { name: 'x', type: 'User', isAdmin: false, permissions: ['root'] }, 'permissions.0'],
      ['/identities', { name: 'x', type: 'User', isAdmin: false, tags: { a: 1 } }, 'tags.a'],
      ['/edge-routers', { name: 'r', cost: 70000 }, 'cost'],
      ['/identities', [], '(root)'],
    ];
    for (const [path, body, field] of cases) {
      const r = await admin.post(path, body);
      expectError(r, 400, 'COULD_NOT_VALIDATE');
      expect(r.body.error.cause.field, JSON.stringify(body)).toBe(field);
      expect(r.body.error.cause.reason).toBeTypeOf('string');
    }
    const id = await admin.create('/identities', { name: 'range-check', type: 'User', isAdmin: false });
    const short = await admin.post('/authenticators', { method: 'updb', identityId: id, username: 'abc', password: 'secret-1' });
    expectError(short, 400, 'COULD_NOT_VALIDATE');
    expect(short.body.error.cause.field).toBe('username');
    const pw = await admin.post('/authenticators', { method: 'updb', identityId: id, username: 'abcd', password: '1234' });
    expect(pw.body.error.cause.field).toBe('password');
    const long = await admin.post('/authenticators', { method: 'updb', identityId: id, username: 'a'.repeat(101), password: 'secret-1' });
    expect(long.body.error.cause.field).toBe('username');
    expect((await admin.get(`/identities/${id}/authenticators`)).body.data).toHaveLength(0);
    const login = await admin.post('/authenticate?method=password', { username: 'abc', password: 'x' }, { api: 'client' });
    expectError(login, 400, 'COULD_NOT_VALIDATE');
  });

  it('413 REQUEST_ENTITY_TOO_LARGE above 1 MiB', async () => {
    const r = await admin.req('POST', '/identities', undefined, {
      raw: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
      contentType: 'application/json',
    });
    expectError(r, 413, 'REQUEST_ENTITY_TOO_LARGE');
  });

  it('415 for an unsupported content type', async () => {
    const r = await admin.req('POST', '/identities', undefined, { raw: '<x/>', contentType: 'application/xml' });
    expectError(r, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('accepts request lines and headers up to 1 MiB (long filters), and answers larger ones with the error envelope', async () => {
    const names = ['big-filter-a', 'big-filter-b'];
    for (const name of names) await admin.create('/identities', { name, type: 'User', isAdmin: false });
    const list = (filter: string) => admin.get(`/identities?filter=${encodeURIComponent(filter)}&limit=500`);
    // ~100 KB each: a long `in` list, a long `or` chain (thousands of terms), a long string literal
    const many = Array.from({ length: 9000 }, (_, i) => `"absent-${i}"`);
    const inList = await list(`name in [${[...many, ...names.map((n) => `"${n}"`)].join(', ')}]`);
    expect(inList.status).toBe(200);
    expect(inList.body.data.map((i: any) => i.name).sort()).toEqual(names);
    const chain = await list([...many.slice(0, 5000), `"${names[0]}"`].map((v) => `name = ${v}`).join(' or '));
    expect(chain.status).toBe(200);
    expect(chain.body.data.map((i: any) => i.name)).toEqual([names[0]]);
    const literal = await list(`name = "${'x'.repeat(100 * 1024)}"`);
    expect(literal.status).toBe(200);
    expect(literal.body.data).toEqual([]);
    // too deep is a filter error, not a crash
    expectError(await list(`${'('.repeat(20000)}name = "x"${')'.repeat(20000)}`), 400, 'INVALID_FILTER');
    expectError(await list(`${'not '.repeat(20000)}name = "x"`), 400, 'INVALID_FILTER');
    const alternating = Array.from({ length: 4000 }, (_, i) => `${i ? (i % 2 ? ' or ' : ' and ') : ''}name = "n${i}"`).join('');
    expectError(await list(alternating), 400, 'INVALID_FILTER');
    // a 100 KB header is fine too
    expect((await admin.get('/identities?limit=1', { headers: { 'x-padding': 'p'.repeat(100 * 1024) } })).status).toBe(200);

    // over the limit: 431 in the JSON error envelope (written by the listener before any routing)
    const huge = await request(`${app.urls.api}/edge/management/v1/identities?filter=${'x'.repeat(2 * 1024 * 1024)}`, { dispatcher: admin.agent });
    expect(huge.statusCode).toBe(431);
    expect(String(huge.headers['content-type'])).toContain('application/json');
    const body = (await huge.body.json()) as any;
    expect(body).toMatchObject({
      error: { code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', message: expect.any(String) },
      meta: { apiVersion: expect.any(String) },
    });
    expect(body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
    // and the listener keeps serving
    expect((await admin.get('/version')).status).toBe(200);
  });

  it('survives hostile input: prototype keys, deep nesting, unicode, odd query strings', async () => {
    const proto = await admin.post(
      '/identities',
      JSON.parse('{"name":"proto","type":"User","isAdmin":false,"tags":{"__proto__":{"polluted":"yes"}}}'),
    );
    expect(proto.status).toBe(201);
    expect(({} as any).polluted).toBeUndefined();
    const deep = await admin.req('POST', '/identities', undefined, { raw: '['.repeat(5000) + ']'.repeat(5000), contentType: 'application/json' });
    expect(deep.status).toBe(400);
    const uni = await admin.post('/identities', { name: 'ünïcødé 🔐', type: 'User', isAdmin: false });
    expect(uni.status).toBe(201);
    for (const q of ['?limit=abc', '?limit=1e3', '?offset=-1', '?limit=501', '?limit=0', '?offset=100001', '?limit=10&limit=20']) {
      const r = await admin.get('/identities' + q);
      expect([200, 400], q).toContain(r.status);
      if (r.status === 400) expect(r.body.error.code).toBe('INVALID_PAGINATION');
    }
    expect((await admin.get('/version', { api: 'client' })).status).toBe(200);
  });
});

describe('authentication of requests', () => {
  it('401 UNAUTHORIZED with WWW-Authenticate without a token, with a bad token, and accepts Bearer', async () => {
    const anon = app.client();
    const r = await anon.get('/identities');
    expectError(r, 401, 'UNAUTHORIZED');
    expect(String(r.headers['www-authenticate'])).toContain('zt-session');
    const bad = await anon.get('/identities', { headers: { 'zt-session': 'not-a-token' } });
    expectError(bad, 401, 'UNAUTHORIZED');
    const bearer = await anon.get('/identities', { headers: { authorization: `Bearer ${admin.token}` } });
    expect(bearer.status).toBe(200);
    await anon.close();
  });

  it('password login returns an API session with token and expiry', async () => {
    const c = app.client();
    const r = await c.login('admin', 'admin-password-1', 'client');
    const s = r.body.data;
    expect(s).toMatchObject({
      token: expect.any(String),
      identityId: expect.any(String),
      isMfaRequired: false,
      isMfaComplete: false,
      authQueries: [],
      configTypes: [],
      expirationSeconds: expect.any(Number),
      expiresAt: expect.any(String),
      lastActivityAt: expect.any(String),
      identity: { entity: 'identities', name: 'Default Admin' },
    });
    expect(s.expirationSeconds).toBeGreaterThan(1700);
    expect(s.expirationSeconds).toBeLessThanOrEqual(1800);
    const cur = await c.get('/current-api-session', { api: 'client' });
    expect(cur.body.data.id).toBe(s.id);
    expect(cur.body.data.expiresAt).toBeTypeOf('string');
    const me = await c.get('/current-identity', { api: 'client' });
    expect(me.body.data).toMatchObject({ name: 'Default Admin', isAdmin: true, isDefaultAdmin: true });
    expect((await c.del('/current-api-session', { api: 'client' })).status).toBe(200);
    expect((await c.get('/current-identity', { api: 'client' })).status).toBe(401);
    await c.close();
  });

  it('wrong password and unknown user both give 401 INVALID_AUTH', async () => {
    const c = app.client();
    expectError(await c.post('/authenticate?method=password', { username: 'admin', password: 'wrong-password' }), 401, 'INVALID_AUTH');
    expectError(await c.post('/authenticate?method=password', { username: 'nobody-here', password: 'wrong-password' }), 401, 'INVALID_AUTH');
    expectError(await c.post('/authenticate?method=telepathy', {}), 400, 'COULD_NOT_VALIDATE');
    await c.close();
  });

  it('handles many concurrent requests over one keep-alive pool without errors', async () => {
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        request(`${app.urls.management}/identities?limit=1&offset=${i % 3}`, {
          headers: { 'zt-session': admin.token! },
          dispatcher: admin.agent,
        }).then(async (r) => {
          await r.body.dump();
          return r.statusCode;
        }),
      ),
    );
    expect(new Set(results)).toEqual(new Set([200]));
  });
});
