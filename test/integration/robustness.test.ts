import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildRoutes } from '../../src/main/api/routes/index';
import { API_BASES, type RouteDef } from '../../src/main/api/registry';
import { startTestApp, tempDir, type TestApp } from '../support/app';
import type { ApiClient } from '../support/client';
import { externalCa } from '../support/pki';

/**
 * Every route of both APIs, called by an admin and by an anonymous client with hostile bodies, parameters and
 * headers: nothing may answer 5xx (other than the documented 503) or leak internals, and the server keeps serving.
 */
let app: TestApp;
let admin: ApiClient;
let anon: ApiClient;
const configDir = tempDir('weft-robustness-');

beforeAll(async () => {
  // thousands of requests in a burst: the per-client rate limit would answer most of them with 429 instead
  writeFileSync(join(configDir, 'weft.yml'), 'rate_limits:\n  per_client:\n    enabled: false\n');
  app = await startTestApp({ configFile: join(configDir, 'weft.yml') });
  admin = await app.adminClient();
  anon = app.client();
});
afterAll(async () => {
  await admin.close();
  await anon.close();
  await app.stop();
  rmSync(configDir, { recursive: true, force: true });
});

const HOSTILE_BODIES: Array<{ raw: string; contentType: string }> = [
  { raw: '', contentType: 'application/json' },
  { raw: 'null', contentType: 'application/json' },
  { raw: '[]', contentType: 'application/json' },
  { raw: '"string"', contentType: 'application/json' },
  { raw: '12345678901234567890', contentType: 'application/json' },
  { raw: '{"name": {"$gt": ""}, "id": [1,2], "tags": "x", "roleAttributes": "#all", "limit": -1}', contentType: 'application/json' },
  {
    raw: JSON.stringify({ name: 'x'.repeat(10000), type: 'User', isAdmin: false, password: null, code: 123, csr: 5 }),
    contentType: 'application/json',
  },
  { raw: '{"__proto__": {"isAdmin": true}, "constructor": {"prototype": {"x": 1}}}', contentType: 'application/json' },
  { raw: '-----BEGIN CERTIFICATE-----\nnot base64 !!\n-----END CERTIFICATE-----\n', contentType: 'text/plain' },
  { raw: '\u0000\u0001\u0002garbage', contentType: 'application/x-pem-file' },
];
const HOSTILE_IDS = ['does-not-exist', '%00', '..%2F..%2Fetc', "' OR 1=1 --", 'x'.repeat(2000)];

function concrete(path: string, id: string): string {
  return path.replace(/:[A-Za-z]+/g, encodeURIComponent(id).replace(/%25/g, '%'));
}

describe('robustness of every route', () => {
  it('no route answers 5xx to hostile input, and the server keeps serving', async () => {
    const routes = buildRoutes(app.core);
    expect(routes.length).toBeGreaterThan(30);
    const failures: string[] = [];
    for (const route of routes) {
      for (const api of route.apis) {
        for (const client of [admin, anon]) {
          if (client === admin && route.method === 'DELETE' && route.path === '/current-api-session') continue; // keep the admin logged in
          const ids = route.path.includes(':') ? HOSTILE_IDS : ['-'];
          for (const id of ids) {
            const path = API_BASES[api] + concrete(route.path, id);
            const bodies = route.method === 'GET' || route.method === 'DELETE' ? [undefined] : HOSTILE_BODIES;
            for (const body of bodies) {
              const r = await client.req(route.method, path + '?filter=%22&limit=x&method=password&token=nope', undefined, {
                api: 'root',
                ...(body ? { raw: body.raw, contentType: body.contentType } : {}),
                headers: { 'mfa-validation-code': '\u00ff', 'session-token': 'garbage', 'svc-token-issuer-id': '..' },
              });
              const label = `${route.method} ${path} ${client === admin ? 'admin' : 'anon'} ${body?.raw.slice(0, 30) ?? ''}`;
              if (r.status >= 500 && r.status !== 503) failures.push(`${r.status} ${label}: ${r.text.slice(0, 200)}`);
              if (/\bat .+\.(ts|js):\d+/.test(r.text)) failures.push(`stack trace leaked: ${label}`);
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect((await admin.get('/version')).status).toBe(200);
    expect(({} as any).isAdmin).toBeUndefined();
  }, 600_000);

  it('null for any field of any create, PUT or PATCH body is refused or accepted, never a 5xx, and the entity stays valid', async () => {
    // one entity of each kind the bodies are about; every later read of it is checked against the OpenZiti swagger
    const seeded: Record<string, string> = {};
    const seed = async (entity: string, body: object) => (seeded[entity] = await admin.create(`/${entity}`, body));
    const identity = await seed('identities', { name: 'null-identity', type: 'User', isAdmin: false, roleAttributes: ['n'] });
    const service = await seed('services', { name: 'null-service', encryptionRequired: true, roleAttributes: ['n'] });
    const configType = await seed('config-types', { name: 'null-config-type', schema: { type: 'object' } });
    await seed('configs', { name: 'null-config', configTypeId: configType, data: { a: 1 } });
    const router = await seed('edge-routers', { name: 'null-edge-router', roleAttributes: ['n'] });
    seeded['transit-routers'] = await seed('routers', { name: 'null-router' });
    await seed('service-policies', { name: 'null-sp', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#n'], serviceRoles: ['#n'] });
    await seed('edge-router-policies', { name: 'null-erp', semantic: 'AnyOf', identityRoles: ['#n'], edgeRouterRoles: ['#n'] });
    await seed('service-edge-router-policies', { name: 'null-serp', semantic: 'AnyOf', serviceRoles: ['#n'], edgeRouterRoles: ['#n'] });
    await seed('posture-checks', { name: 'null-pc', typeId: 'DOMAIN', domains: ['corp.example'], roleAttributes: ['n'] });
    const defaultPolicy = (await admin.get('/auth-policies/default')).body.data;
    await seed('auth-policies', { ...defaultPolicy, name: 'null-auth-policy' });
    await seed('external-jwt-signers', {
      name: 'null-signer',
      issuer: 'null-issuer',
      audience: 'a',
      enabled: true,
      jwksEndpoint: 'https://127.0.0.1:1/jwks',
    });
    await seed('cas', {
      name: 'null-ca',
      certPem: (await externalCa('Null CA')).certPem,
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: true,
      identityRoles: [],
    });
    await seed('terminators', { service, router, binding: 'transport', address: 'tcp:127.0.0.1:1' });
    await seed('authenticators', { method: 'updb', identityId: identity, username: 'null-user', password: 'null-password-1' });
    await seed('enrollments', { method: 'ott', identityId: identity, expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    await seed('revocations', { id: randomUUID(), type: 'JTI' });
    seeded['controller-settings'] = 'global';

    const routes = buildRoutes(app.core).filter((r) => r.body && r.method !== 'GET' && r.method !== 'DELETE');
    expect(routes.length).toBeGreaterThan(20);
    const failures: string[] = [];
    let accepted = 0;
    let n = 0;
    for (const route of routes) {
      const entity = route.path.split('/')[1]!;
      const id = seeded[entity];
      const path = route.path.replace(/:[A-Za-z]+/g, id ?? 'does-not-exist');
      const detail = id && !route.path.includes('/:id/') ? `/${entity}/${id}` : undefined;
      // PUT starts from the entity as read (what the ziti CLI does), create from a renamed copy of the seeded one
      const current = detail ? stripRead((await admin.get(detail)).body.data ?? {}) : {};
      const base = route.method === 'PUT' ? current : route.method === 'POST' && route.path === `/${entity}` && id ? renamed(current, ++n) : {};
      for (const key of bodyKeys(route)) {
        for (const api of route.apis) {
          const r = await admin.req(route.method, API_BASES[api] + path, { ...base, [key]: null }, { api: 'root' });
          const label = `${route.method} ${api} ${route.path} {${key}: null}`;
          if (r.status >= 500 && r.status !== 503) failures.push(`${r.status} ${label}: ${r.text.slice(0, 200)}`);
          if (r.status < 300) accepted++;
          // whatever was accepted, the entity still reads back in the documented shape (checked by the client)
          if (r.status < 300 && detail) expect((await admin.get(detail)).status).toBe(200);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(accepted).toBeGreaterThan(50);

    // the two reported cases, answered as OpenZiti does: a PUT's null role attributes are none, a PATCH's null
    // leaves the field alone; a PUT's null schema is "no schema", a PATCH's null schema changes nothing
    await admin.patch(`/services/${service}`, { roleAttributes: ['n'] });
    expect((await admin.req('PATCH', `/services/${service}`, { roleAttributes: null }, { api: 'client' })).status).toBe(200);
    expect((await admin.get(`/services/${service}`)).body.data.roleAttributes).toEqual(['n']);
    const put = await admin.req(
      'PUT',
      `/services/${service}`,
      { name: 'null-service', encryptionRequired: true, roleAttributes: null },
      { api: 'client' },
    );
    expect(put.status).toBe(200);
    expect((await admin.get(`/services/${service}`)).body.data.roleAttributes ?? []).toEqual([]);
    await admin.put(`/config-types/${configType}`, { name: 'null-config-type', schema: { type: 'object' } });
    expect((await admin.patch(`/config-types/${configType}`, { schema: null })).status).toBe(200);
    expect((await admin.get(`/config-types/${configType}`)).body.data.schema).toEqual({ type: 'object' });
    expect((await admin.put(`/config-types/${configType}`, { name: 'null-config-type', schema: null })).status).toBe(200);
    expect((await admin.get(`/config-types/${configType}`)).body.data.schema).toEqual({});
  }, 600_000);
});

/** Top-level field names of a route's body (object schemas, and the members of unions). */
function bodyKeys(route: RouteDef): string[] {
  const keys = new Set<string>();
  const visit = (s: any): void => {
    if (!s || typeof s !== 'object') return;
    for (const k of Object.keys(s.properties ?? {})) keys.add(k);
    for (const sub of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) visit(sub);
  };
  try {
    visit(z.toJSONSchema(route.body!, { io: 'input', unrepresentable: 'any' }));
  } catch {
    // a schema JSON schema cannot express: no fields to null
  }
  return [...keys];
}

/** An entity as read, without what the server owns. */
function stripRead(data: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, _links, createdAt: _c, updatedAt: _u, ...rest } = data;
  return rest;
}

/** A copy for a create: unique values where the seeded entity has them. */
function renamed(data: Record<string, unknown>, n: number): Record<string, unknown> {
  const out = { ...data };
  for (const k of ['name', 'issuer', 'username']) if (typeof out[k] === 'string') out[k] = `${out[k]}-${n}`;
  return out;
}
