import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csr, externalCa } from '../support/pki';
import { buildRoutes } from '../../src/main/api/routes/index';
import { registeredTypes } from '../../src/main/core/registry';
import { specOperations } from '../support/swagger';
import { Network } from './policies-network';

/**
 * Reaches the operations of the official OpenZiti specs that other tests leave out, over a small network with one
 * entity of each kind. Every response is checked against the spec by the test client (test/support/swagger.ts);
 * here the point is that each documented read succeeds, so that its documented shape is what gets checked.
 */
let net: Network;

beforeAll(async () => {
  net = await Network.start();
  const { admin } = net;
  const user = await net.identity('cov-user', ['cov']);
  await admin.create('/authenticators', { method: 'updb', identityId: user, username: 'cov-user', password: 'cov-password-1' });
  const service = await net.service('cov-service', ['cov']);
  const configType = await admin.create('/config-types', { name: 'cov-config-type', schema: { type: 'object' } });
  const config = await admin.create('/configs', { name: 'cov-config', configTypeId: configType, data: { port: 80 } });
  await admin.patch(`/services/${service}`, { configs: [config] });
  const router = await net.openRouting('cov-router');
  await net.servicePolicy('cov-dial', 'Dial', ['#all'], ['#cov']);
  await net.servicePolicy('cov-bind', 'Bind', ['#cov'], ['#cov']);
  await admin.create('/posture-checks', { name: 'cov-domain', typeId: 'DOMAIN', domains: ['corp.example'], roleAttributes: ['cov'] });
  await admin.create('/routers', { name: 'cov-transit' });
  await admin.create('/terminators', { service, router, binding: 'transport', address: 'tcp:127.0.0.1:1' });
  await admin.create('/external-jwt-signers', {
    name: 'cov-signer',
    issuer: 'cov-issuer',
    audience: 'cov',
    enabled: true,
    jwksEndpoint: 'https://127.0.0.1:1/jwks',
  });
  await admin.create('/cas', {
    name: 'cov-ca',
    certPem: (await externalCa('Coverage CA')).certPem,
    isAuthEnabled: true,
    isAutoCaEnrollmentEnabled: true,
    isOttCaEnrollmentEnabled: true,
    identityRoles: [],
  });
  await admin.create('/enrollments', {
    method: 'ott',
    identityId: await net.identity('cov-enrollee'),
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  });
  const controller = (await admin.get('/controllers')).body.data[0].id;
  await admin.create('/controller-settings', { controllerId: controller, oidc: { redirectUris: ['https://cov.example/cb'] } });
  await admin.create('/revocations', { id: randomUUID(), type: 'JTI' });
  // the admin's own edge session and API session certificate, for the Client API's session reads
  expect((await admin.post('/sessions', { serviceId: service, type: 'Dial' }, { api: 'client' })).status).toBe(201);
  expect((await admin.post('/current-api-session/certificates', { csr: (await csr()).csrPem }, { api: 'client' })).status).toBe(201);
});
afterAll(async () => {
  await net.stop();
});

describe('OpenZiti spec coverage', () => {
  it('every documented read answers with success on both APIs', async () => {
    const failures: string[] = [];
    const unreached: string[] = [];
    for (const api of ['management', 'client'] as const) {
      // the MFA reads need a verified enrollment of the caller (test/integration/mfa.test.ts reads them)
      for (const op of specOperations(api).filter((o) => o.method === 'GET' && o.json && !o.template.startsWith('/current-identity/mfa'))) {
        const path = await concrete(op.template, api);
        if (!path) {
          unreached.push(`${api} ${op.template}`);
          continue;
        }
        const r = await net.admin.get(path, { api });
        if (r.status >= 300) failures.push(`${api} GET ${path}: ${r.status} ${r.text.slice(0, 200)}`);
        else collectLinks(api, r.body);
      }
    }
    expect(failures).toEqual([]);
    expect(unreached).toEqual([]);
  });

  it('every _links href in those answers resolves to a registered route', () => {
    const routes = buildRoutes(net.app.core);
    const registered = (api: 'client' | 'management', path: string) =>
      routes.some((r) => r.apis.includes(api) && new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}$`).test(path));
    expect(links.size).toBeGreaterThan(50);
    // a link names a route of its API (actions such as ./cas/x/verify are POST routes); OpenZiti renders the same
    // links in Client API answers, where they name Management API resources
    const dangling = [...links].filter((l) => {
      const [api, href] = l.split(' ') as ['client' | 'management', string];
      const path = new URL(href, 'https://x/').pathname;
      return !registered(api, path) && !registered('management', path);
    });
    expect(dangling).toEqual([]);
  });

  it('every link every registered type declares (associations, refs, other links) names a route', () => {
    // reads, and actions such as ./cas/x/verify (POST)
    const routes = buildRoutes(net.app.core);
    const registered = (path: string) => routes.some((r) => new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}$`).test(path));
    // a stub row: every column holds an id-like value
    const row = new Proxy({}, { get: (_t, key) => (key === 'tags' ? '{}' : `x-${String(key)}`) }) as Record<string, unknown>;
    const dangling: string[] = [];
    for (const { paths, entry } of registeredTypes()) {
      const { def } = entry;
      const hrefs = [
        ...paths.map((p) => `${p}/x`),
        ...Object.keys(def.associations ?? {}).map((name) => `${def.entity}/x/${name}`),
        ...Object.values(def.refs ?? {}).map((ref) => `${ref.entity}/x`),
        ...Object.values(def.links?.(row) ?? {}),
      ];
      for (const href of hrefs) if (!registered(`/${href}`)) dangling.push(`${def.entity}: ${href}`);
    }
    expect(dangling).toEqual([]);
  });

  it('writes the other tests leave out: transit routers, config types, router policies, Client API services, own passwords', async () => {
    const { admin } = net;
    const tr = await admin.create('/transit-routers', { name: 'cov-transit-2', cost: 3 });
    ok(await admin.put(`/transit-routers/${tr}`, { name: 'cov-transit-3', cost: 4 }));
    ok(await admin.patch(`/transit-routers/${tr}`, { noTraversal: true }));
    expect((await admin.get(`/transit-routers/${tr}`)).body.data).toMatchObject({ name: 'cov-transit-3', cost: 4, noTraversal: true });
    ok(await admin.del(`/transit-routers/${tr}`));

    const ct = await admin.create('/config-types', { name: 'cov-config-type-2' });
    ok(await admin.put(`/config-types/${ct}`, { name: 'cov-config-type-3', schema: { type: 'object' } }));
    ok(await admin.patch(`/config-types/${ct}`, { name: 'cov-config-type-4' }));
    ok(await admin.del(`/config-types/${ct}`));

    const serp = await net.serviceEdgeRouterPolicy('cov-serp-2', ['#cov'], ['#all']);
    ok(await admin.put(`/service-edge-router-policies/${serp}`, { name: 'cov-serp-3', semantic: 'AllOf', serviceRoles: [], edgeRouterRoles: [] }));
    ok(await admin.patch(`/service-edge-router-policies/${serp}`, { serviceRoles: ['#cov'] }));
    ok(await admin.del(`/service-edge-router-policies/${serp}`));

    const erp = await net.edgeRouterPolicy('cov-erp-2', ['#cov'], ['#all']);
    ok(await admin.put(`/edge-router-policies/${erp}`, { name: 'cov-erp-3', semantic: 'AnyOf', identityRoles: [], edgeRouterRoles: [] }));
    ok(await admin.patch(`/edge-router-policies/${erp}`, { identityRoles: ['#cov'] }));

    const svc = await net.service('cov-client-service', ['cov']);
    ok(await admin.put(`/services/${svc}`, { name: 'cov-client-service', encryptionRequired: true, maxIdleTimeMillis: 5000 }, { api: 'client' }));
    ok(await admin.patch(`/services/${svc}`, { roleAttributes: ['cov', 'more'] }, { api: 'client' }));
    ok(await admin.del(`/services/${svc}`, { api: 'client' }));

    // a user changes their own password, with PUT and PATCH on both APIs
    const user = net.app.client();
    await user.login('cov-user', 'cov-password-1', 'client');
    const auth = (await user.get('/current-identity/authenticators', { api: 'client' })).body.data[0].id;
    const self = `/current-identity/authenticators/${auth}`;
    ok(await user.patch(self, { password: 'cov-password-2', currentPassword: 'cov-password-1' }, { api: 'client' }));
    ok(await user.put(self, { username: 'cov-user', password: 'cov-password-3', currentPassword: 'cov-password-2' }, { api: 'client' }));
    ok(await user.patch(self, { password: 'cov-password-4', currentPassword: 'cov-password-3' }));
    ok(await user.put(self, { username: 'cov-user', password: 'cov-password-5', currentPassword: 'cov-password-4' }));
    await user.close();
  });
});

/** Every `_links` href seen in a successful read, as "<api> <href>". */
const links = new Set<string>();

function collectLinks(api: 'client' | 'management', body: unknown): void {
  if (Array.isArray(body)) return body.forEach((v) => collectLinks(api, v));
  if (!body || typeof body !== 'object') return;
  for (const [k, v] of Object.entries(body)) {
    if (k === '_links' && v && typeof v === 'object') {
      for (const link of Object.values(v as Record<string, { href?: unknown }>)) if (typeof link?.href === 'string') links.add(`${api} ${link.href}`);
    } else {
      collectLinks(api, v);
    }
  }
}

function ok(r: { status: number; text: string }): void {
  expect(r.status, r.text).toBeLessThan(300);
}

/** A concrete path for a spec template: each `{id}` is the first item of the listing before it. */
async function concrete(template: string, api: 'client' | 'management'): Promise<string | undefined> {
  let path = '';
  for (const segment of template.split('/').slice(1)) {
    if (!segment.startsWith('{')) {
      path += `/${segment}`;
      continue;
    }
    const listing = segment === '{serviceId}' ? '/services' : path;
    const r = await net.admin.get(`${listing}?limit=1`, { api });
    const id = r.status === 200 && Array.isArray(r.body.data) ? r.body.data[0]?.id : undefined;
    if (!id) return undefined;
    path += `/${encodeURIComponent(id)}`;
  }
  return path || '/';
}
