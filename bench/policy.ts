import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { Agent, request } from 'undici';
import { startApp } from '../src/main/app';
import { authenticators } from '../src/main/core/entities/authenticators';
import { edgeRouterPolicies } from '../src/main/core/entities/edgeRouterPolicies';
import { edgeRouters } from '../src/main/core/entities/edgeRouters';
import { identities } from '../src/main/core/entities/identities';
import { createResource, resourceOps } from '../src/main/core/entities/resource';
import { serviceEdgeRouterPolicies } from '../src/main/core/entities/serviceEdgeRouterPolicies';
import { servicePolicies } from '../src/main/core/entities/servicePolicies';
import { services } from '../src/main/core/entities/services';
import { benchConfigFile, load, printTable, rowOf, startChild, type Measurement, type Row } from './lib';

/**
 * Issue 4's table: services, policies and sessions at OpenZiti's reference models. Each model is seeded through the
 * core, then Weft runs in its own process and is measured side by side with the floor server (same bytes):
 * the client service list of a random identity, session creation, policy advice, and how long a policy update
 * takes until an identity sees it. A 20-service/100-identity model is the baseline for the "within 3×" goal.
 */

interface ModelSpec {
  name: string;
  services: number;
  identities: number;
  routers: number;
  servicePolicies: number;
  edgeRouterPolicies: number;
  serviceEdgeRouterPolicies: number;
}

const SMALL: ModelSpec = { name: 'small', services: 20, identities: 100, routers: 10, servicePolicies: 10, edgeRouterPolicies: 10, serviceEdgeRouterPolicies: 10 };
const LARGE: ModelSpec = { name: 'large', services: 2000, identities: 100_000, routers: 500, servicePolicies: 250, edgeRouterPolicies: 250, serviceEdgeRouterPolicies: 100 };
const MANY: ModelSpec = { name: 'many-services', services: 10_000, identities: 16_000, routers: 100, servicePolicies: 100, edgeRouterPolicies: 100, serviceEdgeRouterPolicies: 100 };
const scaled = (m: ModelSpec, f: number, name: string): ModelSpec => ({
  name, services: Math.round(m.services * f), identities: Math.round(m.identities * f), routers: Math.max(2, Math.round(m.routers * f)),
  servicePolicies: Math.max(3, Math.round(m.servicePolicies * f)), edgeRouterPolicies: Math.max(3, Math.round(m.edgeRouterPolicies * f)),
  serviceEdgeRouterPolicies: Math.max(3, Math.round(m.serviceEdgeRouterPolicies * f)),
});

const ADMIN = { username: 'admin', password: 'bench-admin-password' };
const USER_PASSWORD = 'bench-user-password';
const GOAL_RATIO = 3;
const GOAL_UPDATE_MS = 1000;

/** A small deterministic PRNG (mulberry32), so every run samples the same identity. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * OpenZiti's attribute assignment (tests/model_sdk_performance_test.go): 8 attributes given to 1/2, 1/2, 1/3,
 * 1/4, 1/5, 1/8, 1/10 and 1/10 of the entities by striding; entity 0 gets none.
 */
function roleAttributes(count: number, prefix: string): { perEntity: string[][]; set: string[] } {
  const perEntity: string[][] = Array.from({ length: count }, () => []);
  if (count < 2) return { perEntity, set: [] };
  const counts = [2, 2, 3, 4, 5, 8, 10, 10].map((d) => Math.floor(count / d));
  const set = [`${prefix}0`];
  let offset = 2;
  let index = 0;
  while (counts.length) {
    perEntity[1 + index]!.push(set.at(-1)!);
    counts[0]!--;
    while (counts.length && counts[0]! <= 0) {
      counts.shift();
      if (counts.length && counts[0]! > 0) {
        if (counts.length < 4) offset++;
        set.push(`${prefix}${set.length}`);
      }
    }
    index = (index + offset) % (count - 1);
  }
  return { perEntity, set };
}

/** The first n attribute subsets in OpenZiti's depth-first order, repeated when there are fewer. */
function firstNPermutations(n: number, values: string[]): string[][] {
  const out: string[][] = [];
  const walk = (base: string[], rest: string[]): boolean => {
    for (let i = 0; i < rest.length; i++) {
      const next = [...base, rest[i]!];
      out.push(next);
      if (out.length >= n || !walk(next, rest.slice(i + 1))) return false;
    }
    return true;
  };
  walk([], values);
  for (let i = 0; out.length < n && out.length; i++) out.push(out[i]!);
  return out;
}

interface Seeded {
  sampleIdentity: string;
  sampleUsername: string;
  probeService: string;
  /** policy with identityRoles #all: adding a service to it shows the service to everyone */
  allIdentitiesPolicy: string;
  /** policy giving identity 0 every service: adding an attribute to its identities gives them every service */
  identityZeroPolicy: string;
  sampleAttribute: string;
  /** extra API sessions of the sampled identity (made through the core: no password hashing), for session creation */
  sessionTokens: string[];
  seconds: number;
}

/** API sessions of the sampled identity prepared for session creation: every request must be a new (API session, service) pair. */
const EXTRA_API_SESSIONS = 600;

/** Seeds a model through the core in batched transactions (only the sampled identity gets a hashed password). */
async function seed(dataDir: string, spec: ModelSpec): Promise<Seeded> {
  const started = process.hrtime.bigint();
  const app = await startApp({
    dataDir, apiAddress: '127.0.0.1:0', logger: pino({ level: 'silent' }),
    env: { WEFT_ADMIN_USERNAME: ADMIN.username, WEFT_ADMIN_PASSWORD: ADMIN.password },
  });
  const ctx = app.core.system;
  const store = app.core.store;
  const batches = <T>(n: number, make: (i: number) => T): T[] => {
    const out: T[] = [];
    for (let i = 0; i < n; i += 2000) store.tx(() => { for (let j = i; j < Math.min(n, i + 2000); j++) out.push(make(j)); });
    return out;
  };
  const pad = (i: number) => String(i).padStart(6, '0');
  const svcAttrs = roleAttributes(spec.services, 'sattr-');
  const idAttrs = roleAttributes(spec.identities, 'iattr-');
  const erAttrs = roleAttributes(spec.routers, 'rattr-');
  const svcIds = batches(spec.services, (i) =>
    createResource(ctx, services, { name: `svc-${pad(i)}`, encryptionRequired: true, roleAttributes: svcAttrs.perEntity[i] }));
  const idIds = batches(spec.identities, (i) =>
    createResource(ctx, identities, { name: `id-${pad(i)}`, type: 'Device', isAdmin: false, roleAttributes: idAttrs.perEntity[i] }));
  const erIds = batches(spec.routers, (i) => {
    const id = createResource(ctx, edgeRouters, { name: `er-${pad(i)}`, roleAttributes: erAttrs.perEntity[i] });
    store.runSql("UPDATE edge_routers SET is_online = ?, hostname = ?, supported_protocols = '{\"tls\":\"tls://127.0.0.1:3022\"}' WHERE id = ?", i % 2, `er-${i}.local`, id);
    return id;
  });
  const roles = (attrs: string[][], i: number, zero: string) => [...attrs[i]!.map((a) => `#${a}`), `@${zero}`];
  const [s0, i0, r0] = [svcIds[0]!, idIds[0]!, erIds[0]!];
  let allIdentitiesPolicy = '';
  let identityZeroPolicy = '';
  store.tx(() => {
    const sp = (name: string, identityRoles: string[], serviceRoles: string[]) =>
      createResource(ctx, servicePolicies, { name, type: 'Dial', semantic: 'AnyOf', identityRoles, serviceRoles });
    identityZeroPolicy = sp('sp-0', [`@${i0}`], ['#all']);
    allIdentitiesPolicy = sp('sp-1', ['#all'], [`@${s0}`]);
    const sRoles = firstNPermutations(spec.servicePolicies, svcAttrs.set);
    const iRoles = firstNPermutations(spec.servicePolicies, idAttrs.set);
    for (let i = 2; i < spec.servicePolicies; i++) sp(`sp-${i}`, roles(iRoles, i, i0), roles(sRoles, i, s0));
    const erp = (name: string, identityRoles: string[], edgeRouterRoles: string[]) =>
      createResource(ctx, edgeRouterPolicies, { name, semantic: 'AnyOf', identityRoles, edgeRouterRoles });
    erp('erp-0', [`@${i0}`], ['#all']);
    erp('erp-1', ['#all'], [`@${r0}`]);
    const eRoles = firstNPermutations(spec.edgeRouterPolicies, erAttrs.set);
    const iRoles2 = firstNPermutations(spec.edgeRouterPolicies, idAttrs.set);
    for (let i = 2; i < spec.edgeRouterPolicies; i++) erp(`erp-${i}`, roles(iRoles2, i, i0), roles(eRoles, i, r0));
    const serp = (name: string, serviceRoles: string[], edgeRouterRoles: string[]) =>
      createResource(ctx, serviceEdgeRouterPolicies, { name, semantic: 'AnyOf', serviceRoles, edgeRouterRoles });
    serp('serp-0', ['#all'], [`@${r0}`]);
    serp('serp-1', [`@${s0}`], ['#all']);
    const sRoles2 = firstNPermutations(spec.serviceEdgeRouterPolicies, svcAttrs.set);
    const eRoles2 = firstNPermutations(spec.serviceEdgeRouterPolicies, erAttrs.set);
    for (let i = 2; i < spec.serviceEdgeRouterPolicies; i++) serp(`serp-${i}`, roles(sRoles2, i, s0), roles(eRoles2, i, r0));
  });
  const probeService = createResource(ctx, services, { name: 'zz-probe', encryptionRequired: true });
  const random = rng(spec.identities);
  const sample = 1 + Math.floor(random() * (spec.identities - 1));
  const sampleUsername = `bench-${sample}`;
  const authenticatorId = await resourceOps(authenticators).create(ctx, { method: 'updb', identityId: idIds[sample], username: sampleUsername, password: USER_PASSWORD });
  const sessionTokens = store.tx(() => Array.from({ length: EXTRA_API_SESSIONS }, () => app.core.sessions.create({
    identityId: idIds[sample]!, authenticatorId, ipAddress: '127.0.0.1', configTypes: [], isMfaRequired: false,
  }).token as string));
  await app.close();
  return {
    sampleIdentity: idIds[sample]!, sampleUsername, probeService, allIdentitiesPolicy, identityZeroPolicy,
    sampleAttribute: idAttrs.perEntity[sample]![0] ?? idAttrs.set[0]!,
    sessionTokens,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
}

// ---- HTTP helpers -------------------------------------------------------------------------------------

class Http {
  readonly agent: Agent;
  constructor(readonly origin: string, ca: string) {
    this.agent = new Agent({ connect: { ca } });
  }
  async call(method: string, path: string, token?: string, body?: unknown) {
    const headers: Record<string, string> = token ? { 'zt-session': token } : {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await request(this.origin + path, { method: method as 'GET', headers, body: body === undefined ? undefined : JSON.stringify(body), dispatcher: this.agent });
    const text = await res.body.text();
    return { status: res.statusCode, contentType: String(res.headers['content-type']), text, json: text ? JSON.parse(text) : undefined };
  }
  async login(api: 'client' | 'management', username: string, password: string, configTypes?: string[]): Promise<string> {
    const r = await this.call('POST', `/edge/${api}/v1/authenticate?method=password`, undefined, { username, password, configTypes });
    if (r.status !== 200) throw new Error(`login ${username}: ${r.status} ${r.text}`);
    return r.json.data.token;
  }
}

interface ModelResult {
  spec: ModelSpec;
  weft: Record<string, Measurement>;
  floor: Record<string, Measurement>;
  updates: Array<{ name: string; patchMs: number; visibleMs: number; ok: boolean }>;
  seeded: Seeded;
  /** session-creation requests sent vs distinct (API session, service) pairs: beyond that they repeat (and return the existing session) */
  pairs?: { used: number; available: number };
}

const CASES = ['GET /services?limit=100 (client)', 'POST /sessions (create Dial)', 'GET policy-advice'] as const;

async function measureModel(workDir: string, spec: ModelSpec, durationMs: number, configFile: string): Promise<ModelResult> {
  const dataDir = join(workDir, `policy-${spec.name}`);
  console.log(`seeding ${spec.name}: ${spec.services} services, ${spec.identities} identities, ${spec.routers} edge routers, `
    + `${spec.servicePolicies}/${spec.edgeRouterPolicies}/${spec.serviceEdgeRouterPolicies} policies…`);
  const seeded = await seed(dataDir, spec);
  console.log(`  seeded in ${seeded.seconds.toFixed(1)} s`);
  const weft = await startChild(new URL('./weftServer.ts', import.meta.url).pathname, [dataDir, configFile]);
  try {
    const origin = weft.info.origin as string;
    const ca = readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
    const http = new Http(origin, ca);
    const admin = await http.login('management', ADMIN.username, ADMIN.password);
    const user = await http.login('client', seeded.sampleUsername, USER_PASSWORD, ['all']);
    const listPath = '/edge/client/v1/services?limit=100';
    const visible = await http.call('GET', '/edge/client/v1/services?limit=500', user);
    const dialable: string[] = visible.json.data.filter((s: any) => s.permissions.includes('Dial')).map((s: any) => s.id);
    if (!dialable.length) throw new Error(`the sampled identity of ${spec.name} can dial nothing`);
    const advicePath = `/edge/management/v1/identities/${seeded.sampleIdentity}/policy-advice/${dialable[0]}`;
    // session creation: every request a new (API session, service) pair
    const tokens = seeded.sessionTokens;
    let n = 0;
    const nextSession = () => {
      const i = n++;
      return {
        path: '/edge/client/v1/sessions',
        method: 'POST' as const,
        headers: { 'zt-session': tokens[Math.floor(i / dialable.length) % tokens.length]!, 'content-type': 'application/json' },
        body: JSON.stringify({ serviceId: dialable[i % dialable.length], type: 'Dial' }),
      };
    };
    const recorded = {
      [listPath]: await http.call('GET', listPath, user),
      [advicePath]: await http.call('GET', advicePath, admin),
      '/edge/client/v1/sessions': await http.call('POST', '/edge/client/v1/sessions', tokens.at(-1), { serviceId: dialable.at(-1), type: 'Dial' }),
    };
    const specFile = join(workDir, `floor-${spec.name}.json`);
    writeFileSync(specFile, JSON.stringify({
      key: readFileSync(join(dataDir, 'pki', 'server.key.pem'), 'utf8'),
      cert: readFileSync(join(dataDir, 'pki', 'server-chain.pem'), 'utf8'),
      responses: Object.fromEntries(Object.entries(recorded).map(([p, r]) => [p, { status: r.status, contentType: r.contentType, body: r.text }])),
    }));
    const floor = await startChild(new URL('./floorServer.ts', import.meta.url).pathname, [specFile]);
    const result: ModelResult = { spec, weft: {}, floor: {}, updates: [], seeded };
    try {
      const f = floor.info.origin as string;
      result.weft[CASES[0]] = await load({ origin, path: listPath, headers: { 'zt-session': user }, ca, durationMs });
      result.floor[CASES[0]] = await load({ origin: f, path: listPath, ca, durationMs });
      result.weft[CASES[1]] = await load({ origin, path: '', next: nextSession, ca, durationMs, ok: (st) => st === 201 });
      result.pairs = { used: n, available: tokens.length * dialable.length };
      result.floor[CASES[1]] = await load({ origin: f, path: '/edge/client/v1/sessions', method: 'POST', ca, durationMs, ok: (s) => s === 201 });
      result.weft[CASES[2]] = await load({ origin, path: advicePath, headers: { 'zt-session': admin }, ca, durationMs });
      result.floor[CASES[2]] = await load({ origin: f, path: advicePath, ca, durationMs });
    } finally {
      await floor.stop();
    }
    result.updates = await measureUpdates(http, admin, user, seeded);
    return result;
  } finally {
    await weft.stop();
  }
}

/** PATCH, then poll the sampled identity's /services until the change shows (it should on the first poll). */
async function measureUpdates(http: Http, admin: string, user: string, s: Seeded) {
  const probe = `/edge/client/v1/services?filter=${encodeURIComponent('name = "zz-probe"')}`;
  const sees = async () => (await http.call('GET', probe, user)).json.data.length === 1;
  const timed = async (name: string, path: string, body: object, want: boolean) => {
    const t0 = performance.now();
    const r = await http.call('PATCH', `/edge/management/v1${path}`, admin, body);
    const t1 = performance.now();
    let ok = r.status === 200;
    let polls = 0;
    while (ok && (await sees()) !== want) if (++polls > 200) ok = false;
    return { name, patchMs: t1 - t0, visibleMs: performance.now() - t1, ok };
  };
  const mgmt = async (path: string) => (await http.call('GET', `/edge/management/v1${path}`, admin)).json.data;
  const spAll = await mgmt(`/service-policies/${s.allIdentitiesPolicy}`);
  const spZero = await mgmt(`/service-policies/${s.identityZeroPolicy}`);
  const identity = await mgmt(`/identities/${s.sampleIdentity}`);
  return [
    await timed('service side: +1 service for every identity', `/service-policies/${s.allIdentitiesPolicy}`, { serviceRoles: [...spAll.serviceRoles, `@${s.probeService}`] }, true),
    await timed('service side: -1 service for every identity', `/service-policies/${s.allIdentitiesPolicy}`, { serviceRoles: spAll.serviceRoles }, false),
    await timed(`identity side: #${s.sampleAttribute} gains every service`, `/service-policies/${s.identityZeroPolicy}`, { identityRoles: [...spZero.identityRoles, `#${s.sampleAttribute}`] }, true),
    await timed('identity side: back', `/service-policies/${s.identityZeroPolicy}`, { identityRoles: spZero.identityRoles }, false),
    await timed('identity attribute change (re-classing)', `/identities/${s.sampleIdentity}`, { roleAttributes: [...identity.roleAttributes, 'bench-extra'] }, false),
  ];
}

export async function policyBench(workDir: string, opts: { quick: boolean; durationMs: number }): Promise<Row[]> {
  const configFile = benchConfigFile(workDir);
  const models = opts.quick
    ? [SMALL, scaled(LARGE, 0.05, 'large-x0.05'), scaled(MANY, 0.05, 'many-services-x0.05')]
    : [SMALL, LARGE, MANY];
  const results: ModelResult[] = [];
  for (const m of models) results.push(await measureModel(workDir, m, opts.durationMs, configFile));
  const rows: Row[] = [];
  const base = results[0]!;
  for (const r of results) {
    const label = `${r.spec.name} (${r.spec.services} svc, ${r.spec.identities} id)`;
    rows.push({ scenario: label, target: 'seed through the core', note: `${r.seeded.seconds.toFixed(1)} s` });
    for (const c of CASES) {
      const repeated = c === CASES[1] && r.pairs && r.pairs.used > r.pairs.available ? `${r.pairs.used - r.pairs.available} requests repeated a pair` : undefined;
      rows.push(rowOf(`${label} ${c}`, 'weft', r.weft[c]!, repeated));
      rows.push(rowOf(`${label} ${c}`, 'floor (node:https, same bytes)', r.floor[c]!));
      if (r !== base) {
        const ratio = base.weft[c]!.rps / r.weft[c]!.rps;
        const own = (x: ModelResult) => 1e3 / x.weft[c]!.rps - 1e3 / x.floor[c]!.rps;
        rows.push({
          scenario: `${label} ${c}`, target: 'check',
          note: `${ratio.toFixed(2)}× the ${base.spec.name} model per request (Weft's own cost over floor: ${(own(r) / own(base)).toFixed(2)}×); `
            + `goal ≤ ${GOAL_RATIO}× ${ratio <= GOAL_RATIO ? 'MET' : 'NOT MET'}`,
        });
      }
    }
    for (const u of r.updates) {
      const total = u.patchMs + u.visibleMs;
      rows.push({
        scenario: `${label} update: ${u.name}`, target: 'check',
        note: `PATCH ${u.patchMs.toFixed(1)} ms + visible ${u.visibleMs.toFixed(1)} ms later = ${total.toFixed(1)} ms; `
          + `goal ≤ ${GOAL_UPDATE_MS} ms ${u.ok && total <= GOAL_UPDATE_MS ? 'MET' : 'NOT MET'}`,
      });
    }
  }
  printTable(`Policy: services, sessions, advice and policy updates (${results.map((r) => r.spec.name).join(', ')})`, rows);
  return rows;
}
