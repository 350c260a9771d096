// Writes started together, good and bad mixed, through REST and through the console's tRPC batches: every
// acknowledged write is there afterwards, no request gets a 5xx, and a random concurrent workload of creates, updates
// and deletes of identities, services and service policies leaves exactly what a small in-memory model says — the
// entities and the policy index's views. Runs on both stores (npm run test:postgres runs this folder again).
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { ApiClient, Resp } from '../support/client';
import { ConsoleClient } from '../support/consoleTrpc';
import { rng } from '../support/policyModel';
import { afterAll } from 'vitest';

let app: TestApp;
let admin: ApiClient;
let ui: ConsoleClient;

beforeAll(async () => {
  app = await startTestApp({ consoleAddress: '127.0.0.1:0' });
  admin = await app.adminClient();
  ui = await new ConsoleClient(app.urls.console!).login('admin', 'admin-password-1');
});
afterAll(async () => {
  await admin?.close();
  await app?.stop();
});

/** Every entity of a list whose name starts with `prefix` (all pages). */
async function all(path: string, prefix: string): Promise<any[]> {
  const out: any[] = [];
  const filter = encodeURIComponent(`name contains "${prefix}"`);
  for (let offset = 0; ; offset += 500) {
    const r = await admin.get(`${path}?filter=${filter}&limit=500&offset=${offset}`);
    expect(r.status).toBe(200);
    out.push(...(r.body.data as any[]).filter((e) => String(e.name).startsWith(prefix)));
    if (offset + 500 >= r.body.meta.pagination.totalCount) return out;
  }
}

const noServerError = (rs: Array<{ status: number }>) => expect(rs.filter((r) => r.status >= 500).map((r) => r.status)).toEqual([]);

describe('writes started together', () => {
  it('a REST burst of creates, duplicates and invalid bodies: every 201 is stored, nothing else is', async () => {
    await admin.create('/identities', { name: 'burst-taken', type: 'Device', isAdmin: false });
    const bodies = Array.from({ length: 60 }, (_, i) =>
      i % 10 === 3
        ? { name: 'burst-taken', type: 'Device', isAdmin: false }
        : i % 10 === 7
          ? { name: `burst-bad-${i}`, isAdmin: 'no' }
          : { name: `burst-${i}`, type: 'Device', isAdmin: false, roleAttributes: [`r${i % 4}`] },
    );
    const rs = await Promise.all(bodies.map((b) => admin.post('/identities', b)));
    noServerError(rs);
    const acknowledged = rs.filter((r) => r.status === 201).map((r) => r.body.data.id as string);
    expect(acknowledged).toHaveLength(48);
    expect(rs.filter((r) => r.status === 201).length + rs.filter((r) => r.status >= 400).length).toBe(60);
    const stored = await all('/identities', 'burst-');
    expect(stored.map((e) => e.id).sort()).toEqual([...acknowledged, stored.find((e) => e.name === 'burst-taken').id].sort());
  });

  it('tRPC batches of creates with a duplicate in each: every acknowledged create is stored, no internal error', async () => {
    await ui.ok('mutate', 'resources.create', { resource: 'identities', body: { name: 'batch-taken', type: 'Device', isAdmin: false } });
    const acknowledged: string[] = [];
    for (let round = 0; round < 10; round++) {
      const calls = Array.from({ length: 10 }, (_, i) => ({
        path: 'resources.create',
        input: { resource: 'identities', body: { name: i === 4 ? 'batch-taken' : `batch-${round}-${i}`, type: 'Device', isAdmin: false } },
      }));
      const results = await ui.batch('mutate', calls);
      expect(results.filter((r) => r.error).map((r) => r.error!.data.code)).toEqual([expect.not.stringMatching(/INTERNAL_SERVER_ERROR/)]);
      for (const r of results) if (!r.error) acknowledged.push(r.data.id);
    }
    expect(acknowledged).toHaveLength(90);
    const stored = new Set((await all('/identities', 'batch-')).map((e) => e.id));
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect(stored.size).toBe(91);
  });

  it('updates and deletes of different entities at once: each acknowledged change is what is stored', async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => admin.create('/services', { name: `mix-${i}`, encryptionRequired: true })));
    const rs = await Promise.all(
      ids.map((id, i) =>
        i % 3 === 0
          ? admin.del(`/services/${id}`)
          : i % 3 === 1
            ? admin.patch(`/services/${id}`, { roleAttributes: [`changed-${i}`] })
            : admin.patch(`/services/${id}`, { roleAttributes: 'not-a-list' }),
      ),
    );
    noServerError(rs);
    const stored = new Map((await all('/services', 'mix-')).map((s) => [s.id, s]));
    ids.forEach((id, i) => {
      const r = rs[i]!;
      if (i % 3 === 0) return expect([r.status, stored.has(id)]).toEqual([200, false]);
      if (i % 3 === 1) return expect([r.status, stored.get(id)?.roleAttributes]).toEqual([200, [`changed-${i}`]]);
      expect([r.status, stored.get(id)?.roleAttributes]).toEqual([400, []]);
    });
  });
});

// ---- model-based: random concurrent rounds against an in-memory model ----------------------------------------

interface ModelEntity {
  id: string;
  name: string;
  attrs: string[];
}
interface ModelPolicy {
  id: string;
  name: string;
  semantic: 'AnyOf' | 'AllOf';
  identityRoles: string[];
  serviceRoles: string[];
}

const ATTRS = ['a', 'b', 'c', 'd'];

function matches(roles: string[], semantic: string, e: ModelEntity): boolean {
  if (roles.includes('#all') || roles.includes(`@${e.id}`)) return true;
  const wanted = roles.filter((r) => r.startsWith('#')).map((r) => r.slice(1));
  if (!wanted.length) return false;
  return semantic === 'AnyOf' ? wanted.some((a) => e.attrs.includes(a)) : wanted.every((a) => e.attrs.includes(a));
}

describe('random concurrent writes against a model', () => {
  it('after every round the entities and the policy views equal the model: no lost write, no phantom', async () => {
    const random = rng(22);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
    const someAttrs = () => ATTRS.filter(() => random() < 0.4);
    const identities = new Map<string, ModelEntity>();
    const services = new Map<string, ModelEntity>();
    const policies = new Map<string, ModelPolicy>();
    let seq = 0;

    for (let round = 0; round < 12; round++) {
      const touched = new Set<string>();
      /** an existing entity no other operation of this round touches (and, for identities, that no policy names) */
      const untouched = <T extends { id: string }>(m: Map<string, T>, also: (e: T) => boolean = () => true): T | undefined => {
        const free = [...m.values()].filter((e) => !touched.has(e.id) && also(e));
        const e = free.length ? pick(free) : undefined;
        if (e) touched.add(e.id);
        return e;
      };
      const namedByPolicy = (id: string) => [...policies.values()].some((p) => p.identityRoles.includes(`@${id}`));
      const ops: Array<() => Promise<{ r: Resp; apply?: () => void; expectFailure?: boolean }>> = [];
      for (let k = 0; k < 16; k++) {
        const roll = random();
        if (roll < 0.2) {
          const name = `m-id-${++seq}`;
          const attrs = someAttrs();
          ops.push(async () => {
            const r = await admin.post('/identities', { name, type: 'Device', isAdmin: false, roleAttributes: attrs });
            return { r, apply: () => identities.set(r.body.data.id, { id: r.body.data.id, name, attrs }) };
          });
        } else if (roll < 0.3) {
          const e = untouched(identities);
          if (!e) continue;
          const attrs = someAttrs();
          ops.push(async () => ({ r: await admin.patch(`/identities/${e.id}`, { roleAttributes: attrs }), apply: () => (e.attrs = attrs) }));
        } else if (roll < 0.37) {
          const e = untouched(identities, (i) => !namedByPolicy(i.id));
          if (!e) continue;
          ops.push(async () => ({ r: await admin.del(`/identities/${e.id}`), apply: () => identities.delete(e.id) }));
        } else if (roll < 0.52) {
          const name = `m-svc-${++seq}`;
          const attrs = someAttrs();
          ops.push(async () => {
            const r = await admin.post('/services', { name, encryptionRequired: true, roleAttributes: attrs });
            return { r, apply: () => services.set(r.body.data.id, { id: r.body.data.id, name, attrs }) };
          });
        } else if (roll < 0.6) {
          const e = untouched(services);
          if (!e) continue;
          const attrs = someAttrs();
          ops.push(async () => ({ r: await admin.patch(`/services/${e.id}`, { roleAttributes: attrs }), apply: () => (e.attrs = attrs) }));
        } else if (roll < 0.66) {
          const e = untouched(services);
          if (!e) continue;
          ops.push(async () => ({ r: await admin.del(`/services/${e.id}`), apply: () => services.delete(e.id) }));
        } else if (roll < 0.8) {
          const name = `m-sp-${++seq}`;
          const semantic = random() < 0.5 ? 'AnyOf' : 'AllOf';
          const named = untouched(identities);
          // #all stands alone
          const identityRoles = random() < 0.1 ? ['#all'] : [...someAttrs().map((a) => `#${a}`), ...(named ? [`@${named.id}`] : [])];
          const serviceRoles = random() < 0.15 ? ['#all'] : someAttrs().map((a) => `#${a}`);
          ops.push(async () => {
            const r = await admin.post('/service-policies', { name, type: 'Dial', semantic, identityRoles, serviceRoles });
            return { r, apply: () => policies.set(r.body.data.id, { id: r.body.data.id, name, semantic, identityRoles, serviceRoles }) };
          });
        } else if (roll < 0.88) {
          const p = untouched(policies);
          if (!p) continue;
          const serviceRoles = someAttrs().map((a) => `#${a}`);
          ops.push(async () => ({
            r: await admin.patch(`/service-policies/${p.id}`, { serviceRoles }),
            apply: () => (p.serviceRoles = serviceRoles),
          }));
        } else if (roll < 0.93) {
          const p = untouched(policies);
          if (!p) continue;
          ops.push(async () => ({ r: await admin.del(`/service-policies/${p.id}`), apply: () => policies.delete(p.id) }));
        } else {
          // bad input: a duplicate name, or a body that does not validate; nothing may change
          const existing = [...identities.values()][0];
          ops.push(async () => ({
            r: existing
              ? await admin.post('/identities', { name: existing.name, type: 'Device', isAdmin: false })
              : await admin.post('/services', { name: `m-bad-${++seq}`, roleAttributes: 'x' }),
            expectFailure: true,
          }));
        }
      }
      // all of the round's requests start in the same tick
      const results = await Promise.all(ops.map((op) => op()));
      for (const { r, apply, expectFailure } of results) {
        expect(r.status, r.text).toBeLessThan(500);
        if (expectFailure) expect(r.status).toBeGreaterThanOrEqual(400);
        else if (r.status < 300) apply!();
        else throw new Error(`round ${round}: unexpected ${r.status} ${r.text}`);
      }
      await compare(round, identities, services, policies);
    }
  });
});

async function compare(round: number, identities: Map<string, ModelEntity>, services: Map<string, ModelEntity>, policies: Map<string, ModelPolicy>) {
  const entities = (list: any[]) => Object.fromEntries(list.map((e) => [e.id, { name: e.name, attrs: [...e.roleAttributes].sort() }]));
  const model = (m: Map<string, ModelEntity>) => Object.fromEntries([...m.values()].map((e) => [e.id, { name: e.name, attrs: [...e.attrs].sort() }]));
  expect(entities(await all('/identities', 'm-id-')), `identities after round ${round}`).toEqual(model(identities));
  expect(entities(await all('/services', 'm-svc-')), `services after round ${round}`).toEqual(model(services));
  const storedPolicies = await all('/service-policies', 'm-sp-');
  expect(
    Object.fromEntries(
      storedPolicies.map((p) => [p.id, { name: p.name, semantic: p.semantic, identityRoles: p.identityRoles, serviceRoles: p.serviceRoles }]),
    ),
    `policies after round ${round}`,
  ).toEqual(
    Object.fromEntries(
      [...policies.values()].map((p) => [p.id, { name: p.name, semantic: p.semantic, identityRoles: p.identityRoles, serviceRoles: p.serviceRoles }]),
    ),
  );
  const idsOf = async (path: string) => ((await admin.get(`${path}?limit=500`)).body.data as any[]).map((e) => e.id as string).sort();
  for (const p of policies.values()) {
    const wantIdentities = [...identities.values()].filter((e) => matches(p.identityRoles, p.semantic, e)).map((e) => e.id);
    const wantServices = [...services.values()].filter((e) => matches(p.serviceRoles, p.semantic, e)).map((e) => e.id);
    expect(
      (await idsOf(`/service-policies/${p.id}/identities`)).filter((id) => identities.has(id)),
      `${p.name} identities`,
    ).toEqual(wantIdentities.sort());
    expect(
      (await idsOf(`/service-policies/${p.id}/services`)).filter((id) => services.has(id)),
      `${p.name} services`,
    ).toEqual(wantServices.sort());
  }
  for (const e of identities.values()) {
    const want = [...services.values()]
      .filter((s) => [...policies.values()].some((p) => matches(p.identityRoles, p.semantic, e) && matches(p.serviceRoles, p.semantic, s)))
      .map((s) => s.id)
      .sort();
    expect(
      (await idsOf(`/identities/${e.id}/services`)).filter((id) => services.has(id)),
      `services of ${e.name}`,
    ).toEqual(want);
  }
}
