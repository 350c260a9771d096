import { readFileSync, writeFileSync } from 'node:fs';
import type { LoadOptions } from './lib';
import { join } from 'node:path';
import pino from 'pino';
import { Agent, request } from 'undici';
import { startApp } from '../src/main/app';
import { authenticators } from '../src/main/core/auth/authenticators';
import { edgeRouterPolicies } from '../src/main/core/policy/edgeRouterPolicies';
import { edgeRouters } from '../src/main/core/policy/edgeRouters';
import { identities } from '../src/main/core/policy/identities';
import { createResource, resourceOps } from '../src/main/core/entities/resource';
import { serviceEdgeRouterPolicies } from '../src/main/core/policy/serviceEdgeRouterPolicies';
import { servicePolicies } from '../src/main/core/policy/servicePolicies';
import { services } from '../src/main/core/policy/services';
import {
  benchConfigFile,
  checkRow,
  inBatches,
  interleaved,
  medianRatio,
  memoryMiB,
  printTable,
  rowOf,
  startChild,
  weftNodeArgs,
  type Measurement,
  type Row,
} from './lib';
import { describeModel, LARGE, MANY, planModel, resolveRoles, scaled, SMALL, type EntityKind, type ModelPlan, type ModelSpec } from './model';
import { apiSessionsOf } from '../src/main/core/auth/apiSessions';

/**
 * Issue 4's table: services, policies and sessions at OpenZiti's reference models. Each model is seeded through the
 * core, then Weft runs in its own process and is measured side by side with the floor server (same bytes):
 * the client service list of a random identity, session creation, policy advice, and how long a policy update
 * takes until an identity sees it. A 20-service/100-identity model is the baseline for the "within 3×" goal.
 */

const ADMIN = { username: 'admin', password: 'bench-admin-password' };
const USER_PASSWORD = 'bench-user-password';
/** per-request cost at a model over the small model's, each relative to the floor serving the same bytes */
const GOALS = { services: 1.5, sessions: 1.5, advice: 2 } as const;
const GOAL_UPDATE_MS = 1000;
const GOAL_RSS_MIB = 400;
/** POST /sessions: Weft's cost per request in floors (the floor serving the same reply), at every model */
const GOAL_SESSION_FLOORS = 3;
/** uncached management list/get of identities, services and service policies at the large model, in floors */
const GOAL_UNCACHED_FLOORS = 2;

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
  ids: Record<EntityKind, string[]>;
  seconds: number;
}

/** API sessions of the sampled identity prepared for session creation: every request must be a new (API session, service) pair. */
const EXTRA_API_SESSIONS = 600;

/**
 * Seeds a model through the core in batched transactions (only the sampled identity gets a hashed password).
 * `onlineRouters`: half the routers online with a hostname (written by SQL; there is no router process), as the
 * reference models have them; off for the model shared with the OpenZiti controller, whose routers are all offline.
 */
export async function seedWeft(dataDir: string, plan: ModelPlan, opts: { onlineRouters: boolean; apiSessions: number }): Promise<Seeded> {
  const started = process.hrtime.bigint();
  const app = await startApp({
    dataDir,
    apiAddress: '127.0.0.1:0',
    logger: pino({ level: 'silent' }),
    routerListener: 'off',
    env: { WEFT_ADMIN_USERNAME: ADMIN.username, WEFT_ADMIN_PASSWORD: ADMIN.password },
  });
  const ctx = app.core.system;
  const store = app.core.store;
  const batches = <T>(n: number, make: (i: number) => Promise<T>) => inBatches(store, n, make);
  const ids: Record<EntityKind, string[]> = {
    service: await batches(plan.services.length, (i) => createResource(ctx, services, { ...plan.services[i]!, encryptionRequired: true })),
    identity: await batches(plan.identities.length, (i) =>
      createResource(ctx, identities, { ...plan.identities[i]!, type: 'Device', isAdmin: false }),
    ),
    router: await batches(plan.routers.length, async (i) => {
      const id = await createResource(ctx, edgeRouters, plan.routers[i]!);
      if (opts.onlineRouters) {
        await store.runSql(
          'UPDATE edge_routers SET is_online = ?, hostname = ?, supported_protocols = \'{"tls":"tls://127.0.0.1:3022"}\' WHERE id = ?',
          i % 2,
          `er-${i}.local`,
          id,
        );
      }
      return id;
    }),
  };
  const policyIds = await store.tx(async () => {
    const service: string[] = [];
    for (const p of plan.servicePolicies)
      service.push(await createResource(ctx, servicePolicies, { name: p.name, type: 'Dial', semantic: 'AnyOf', ...resolveRoles(p.roles, ids) }));
    const edgeRouter: string[] = [];
    for (const p of plan.edgeRouterPolicies)
      edgeRouter.push(await createResource(ctx, edgeRouterPolicies, { name: p.name, semantic: 'AnyOf', ...resolveRoles(p.roles, ids) }));
    const serviceEdgeRouter: string[] = [];
    for (const p of plan.serviceEdgeRouterPolicies)
      serviceEdgeRouter.push(
        await createResource(ctx, serviceEdgeRouterPolicies, { name: p.name, semantic: 'AnyOf', ...resolveRoles(p.roles, ids) }),
      );
    return { service, edgeRouter, serviceEdgeRouter };
  });
  const probeService = await createResource(ctx, services, { name: 'zz-probe', encryptionRequired: true });
  const sampleUsername = `bench-${plan.sample}`;
  const authenticatorId = await resourceOps(authenticators).create(ctx, {
    method: 'updb',
    identityId: ids.identity[plan.sample],
    username: sampleUsername,
    password: USER_PASSWORD,
  });
  const sessionTokens = await store.tx(async () => {
    const tokens: string[] = [];
    for (let i = 0; i < opts.apiSessions; i++) {
      const session = await apiSessionsOf(app.core).create({
        identityId: ids.identity[plan.sample]!,
        authenticatorId,
        ipAddress: '127.0.0.1',
        configTypes: [],
        isMfaRequired: false,
      });
      tokens.push(session.token as string);
    }
    return tokens;
  });
  await app.close();
  return {
    sampleIdentity: ids.identity[plan.sample]!,
    sampleUsername,
    probeService,
    allIdentitiesPolicy: policyIds.service[plan.allIdentitiesPolicy]!,
    identityZeroPolicy: policyIds.service[plan.identityZeroPolicy]!,
    sampleAttribute: plan.sampleAttribute,
    sessionTokens,
    ids,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
}

// ---- HTTP helpers -------------------------------------------------------------------------------------

export class Http {
  readonly agent: Agent;
  constructor(
    readonly origin: string,
    ca: string | undefined,
    connections = 16,
  ) {
    this.agent = new Agent({ connections, connect: ca ? { ca } : { rejectUnauthorized: false } });
  }
  async call(method: string, path: string, token?: string, body?: unknown) {
    const headers: Record<string, string> = token ? { 'zt-session': token } : {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await request(this.origin + path, {
      method: method as 'GET',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: this.agent,
    });
    const text = await res.body.text();
    return { status: res.statusCode, contentType: String(res.headers['content-type']), text, json: text ? JSON.parse(text) : undefined };
  }
  async login(api: 'client' | 'management', username: string, password: string, configTypes?: string[]): Promise<string> {
    const r = await this.call('POST', `/edge/${api}/v1/authenticate?method=password`, undefined, { username, password, configTypes });
    if (r.status !== 200) throw new Error(`login ${username}: ${r.status} ${r.text}`);
    return r.json.data.token;
  }
  close() {
    return this.agent.close();
  }
}

interface ModelResult {
  spec: ModelSpec;
  weft: Record<Case, Measurement>;
  floor: Record<Case, Measurement>;
  /** per case, the median over rounds of floor rate / Weft rate (Weft's cost in floors) */
  floors: Record<Case, number>;
  updates: Array<{ name: string; patchMs: number; visibleMs: number; ok: boolean }>;
  seeded: Seeded;
  /** session-creation requests sent vs distinct (API session, service) pairs: beyond that they repeat (and return the existing session) */
  pairs?: { used: number; available: number };
  /** resident memory of the Weft process after the measurements */
  memory?: { rss: number; peak: number };
  bytes: Record<Case, number>;
  /** at the large model: uncached management reads (every request a miss of the reply cache), Weft's cost in floors */
  uncached?: Array<{ name: string; weft: Measurement; floor: Measurement; floors: number; bytes: number }>;
}

const CASES = ['GET /services?limit=100 (client)', 'POST /sessions (create Dial)', 'GET policy-advice'] as const;
type Case = (typeof CASES)[number];
const GOAL_OF: Record<Case, number> = { [CASES[0]]: GOALS.services, [CASES[1]]: GOALS.sessions, [CASES[2]]: GOALS.advice };

async function measureModel(workDir: string, spec: ModelSpec, durationMs: number, rounds: number, configFile: string): Promise<ModelResult> {
  const dataDir = join(workDir, `policy-${spec.name}`);
  console.log(`seeding ${spec.name}: ${describeModel(spec)}…`);
  const seeded = await seedWeft(dataDir, planModel(spec), { onlineRouters: true, apiSessions: EXTRA_API_SESSIONS });
  console.log(`  seeded in ${seeded.seconds.toFixed(1)} s`);
  const weft = await startChild(new URL('./weftServer.ts', import.meta.url).pathname, [dataDir, configFile], {}, weftNodeArgs());
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
    // management reads at the large model, every request a miss of the reply cache (a query parameter that changes
    // with every request and means nothing to the route): each reply is computed afresh
    const m = '/edge/management/v1';
    const uncachedPaths: Record<string, string> = spec.name.startsWith('large')
      ? {
          'GET /identities/:id': `${m}/identities/${seeded.ids.identity[1]}`,
          'GET /services?limit=10': `${m}/services?limit=10`,
          'GET /services/:id': `${m}/services/${seeded.ids.service[1]}`,
          'GET /service-policies?limit=10': `${m}/service-policies?limit=10`,
          'GET /service-policies/:id': `${m}/service-policies/${seeded.allIdentitiesPolicy}`,
        }
      : {};
    const recorded = {
      ...Object.fromEntries(await Promise.all(Object.values(uncachedPaths).map(async (p) => [p, await http.call('GET', p, admin)] as const))),
      [listPath]: await http.call('GET', listPath, user),
      [advicePath]: await http.call('GET', advicePath, admin),
      '/edge/client/v1/sessions': await http.call('POST', '/edge/client/v1/sessions', tokens.at(-1), { serviceId: dialable.at(-1), type: 'Dial' }),
    };
    const specFile = join(workDir, `floor-${spec.name}.json`);
    writeFileSync(
      specFile,
      JSON.stringify({
        key: readFileSync(join(dataDir, 'pki', 'server.key.pem'), 'utf8'),
        cert: readFileSync(join(dataDir, 'pki', 'server-chain.pem'), 'utf8'),
        responses: Object.fromEntries(Object.entries(recorded).map(([p, r]) => [p, { status: r.status, contentType: r.contentType, body: r.text }])),
      }),
    );
    const floor = await startChild(new URL('./floorServer.ts', import.meta.url).pathname, [specFile]);
    const result = { spec, weft: {}, floor: {}, floors: {}, updates: [], seeded, bytes: {} } as unknown as ModelResult;
    result.bytes[CASES[0]] = recorded[listPath]!.text.length;
    result.bytes[CASES[1]] = recorded['/edge/client/v1/sessions']!.text.length;
    result.bytes[CASES[2]] = recorded[advicePath]!.text.length;
    try {
      const f = floor.info.origin as string;
      const targets: Record<Case, { weft: LoadOptions; floor: LoadOptions }> = {
        [CASES[0]]: { weft: { origin, path: listPath, headers: { 'zt-session': user }, ca }, floor: { origin: f, path: listPath, ca } },
        [CASES[1]]: {
          weft: { origin, path: '', next: nextSession, ca, ok: (st) => st === 201 },
          floor: { origin: f, path: '/edge/client/v1/sessions', method: 'POST', ca, ok: (st) => st === 201 },
        },
        [CASES[2]]: { weft: { origin, path: advicePath, headers: { 'zt-session': admin }, ca }, floor: { origin: f, path: advicePath, ca } },
      };
      for (const c of CASES) {
        const m = await interleaved({ weft: targets[c].weft, floor: targets[c].floor }, { rounds, durationMs });
        result.weft[c] = m.combined.weft;
        result.floor[c] = m.combined.floor;
        result.floors[c] = medianRatio(m.rounds.floor, m.rounds.weft);
        if (c === CASES[1]) result.pairs = { used: n, available: tokens.length * dialable.length };
      }
      result.uncached = [];
      for (const [name, path] of Object.entries(uncachedPaths)) {
        let k = 0;
        const miss = () => ({ path: `${path}${path.includes('?') ? '&' : '?'}bench-miss=${k++}`, headers: { 'zt-session': admin } });
        const u = await interleaved({ weft: { origin, path, next: miss, ca }, floor: { origin: f, path, ca } }, { rounds, durationMs });
        const floors = medianRatio(u.rounds.floor, u.rounds.weft);
        result.uncached.push({ name, weft: u.combined.weft, floor: u.combined.floor, floors, bytes: recorded[path]!.text.length });
      }
    } finally {
      await floor.stop();
    }
    result.memory = memoryMiB(weft.proc.pid);
    result.updates = await measureUpdates(http, admin, user, seeded);
    await http.close();
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
    await timed(
      'service side: +1 service for every identity',
      `/service-policies/${s.allIdentitiesPolicy}`,
      { serviceRoles: [...spAll.serviceRoles, `@${s.probeService}`] },
      true,
    ),
    await timed(
      'service side: -1 service for every identity',
      `/service-policies/${s.allIdentitiesPolicy}`,
      { serviceRoles: spAll.serviceRoles },
      false,
    ),
    await timed(
      `identity side: #${s.sampleAttribute} gains every service`,
      `/service-policies/${s.identityZeroPolicy}`,
      { identityRoles: [...spZero.identityRoles, `#${s.sampleAttribute}`] },
      true,
    ),
    await timed('identity side: back', `/service-policies/${s.identityZeroPolicy}`, { identityRoles: spZero.identityRoles }, false),
    await timed(
      'identity attribute change (re-classing)',
      `/identities/${s.sampleIdentity}`,
      { roleAttributes: [...identity.roleAttributes, 'bench-extra'] },
      false,
    ),
  ];
}

export async function policyBench(workDir: string, opts: { quick: boolean; durationMs: number }): Promise<Row[]> {
  const configFile = benchConfigFile(workDir);
  const models = opts.quick ? [SMALL, scaled(LARGE, 0.05, 'large-x0.05'), scaled(MANY, 0.05, 'many-services-x0.05')] : [SMALL, LARGE, MANY];
  const rounds = opts.quick ? 2 : 3;
  const results: ModelResult[] = [];
  for (const m of models) results.push(await measureModel(workDir, m, opts.durationMs, rounds, configFile));
  const rows: Row[] = [];
  const base = results[0]!;
  for (const r of results) {
    const label = `${r.spec.name} (${r.spec.services} svc, ${r.spec.identities} id)`;
    rows.push({ scenario: label, target: 'seed through the core', note: `${r.seeded.seconds.toFixed(1)} s` });
    for (const c of CASES) {
      const repeated =
        c === CASES[1] && r.pairs && r.pairs.used > r.pairs.available ? `${r.pairs.used - r.pairs.available} requests repeated a pair` : undefined;
      rows.push(rowOf(`${label} ${c}`, 'weft', r.weft[c]!, [`${r.bytes[c]} B reply`, repeated].filter(Boolean).join('; ')));
      rows.push(rowOf(`${label} ${c}`, 'floor (node:https, same bytes)', r.floor[c]!));
      if (c === CASES[1]) {
        rows.push(
          checkRow(
            `${label} ${c}`,
            `${r.floors[c].toFixed(2)}× the floor per request`,
            `≤ ${GOAL_SESSION_FLOORS}×`,
            r.floors[c] <= GOAL_SESSION_FLOORS,
          ),
        );
      }
      if (r === base) {
        rows.push({
          scenario: `${label} ${c}`,
          target: 'weft cost in floors',
          note: `${r.floors[c].toFixed(2)}× the floor per request (the baseline)`,
        });
        continue;
      }
      // The reply grows with the model (more services on the page, more common routers), and so does the floor's cost
      // of sending it: the check compares Weft's cost relative to the floor serving the same bytes, large over small.
      const growth = r.floors[c] / base.floors[c];
      const raw = base.weft[c]!.okRps / r.weft[c]!.okRps;
      rows.push(
        checkRow(
          `${label} ${c}`,
          `${r.floors[c].toFixed(2)}× the floor here vs ${base.floors[c].toFixed(2)}× at ${base.spec.name}: ${growth.toFixed(2)}× (raw per-request ${raw.toFixed(2)}× the ${base.spec.name} model, replies ${r.bytes[c]} vs ${base.bytes[c]} B)`,
          `≤ ${GOAL_OF[c]}×`,
          growth <= GOAL_OF[c],
        ),
      );
    }
    for (const u of r.uncached ?? []) {
      const scenario = `${label} ${u.name} (management)`;
      rows.push(rowOf(scenario, 'weft, every request a miss', u.weft, `${u.bytes} B reply`));
      rows.push(rowOf(scenario, 'floor (node:https, same bytes)', u.floor));
      rows.push(
        checkRow(
          scenario,
          `${u.floors.toFixed(2)}× the floor per request (uncached)`,
          `≤ ${GOAL_UNCACHED_FLOORS}×`,
          u.floors <= GOAL_UNCACHED_FLOORS,
        ),
      );
    }
    for (const u of r.updates) {
      const total = u.patchMs + u.visibleMs;
      rows.push(
        checkRow(
          `${label} update: ${u.name}`,
          `PATCH ${u.patchMs.toFixed(1)} ms + visible ${u.visibleMs.toFixed(1)} ms later = ${total.toFixed(1)} ms`,
          `≤ ${GOAL_UPDATE_MS} ms`,
          u.ok && total <= GOAL_UPDATE_MS,
        ),
      );
    }
    if (r.memory) {
      const memory = `RSS ${r.memory.rss.toFixed(0)} MiB (peak ${r.memory.peak.toFixed(0)} MiB) after the measurements`;
      rows.push(
        r.spec.name.startsWith('large')
          ? checkRow(`${label} memory of the Weft process`, memory, `peak ≤ ${GOAL_RSS_MIB} MiB`, r.memory.peak <= GOAL_RSS_MIB)
          : { scenario: `${label} memory of the Weft process`, target: 'weft', note: memory },
      );
    }
  }
  printTable(`Policy: services, sessions, advice and policy updates (${results.map((r) => r.spec.name).join(', ')})`, rows);
  return rows;
}
