import { z } from 'zod';
import { perCore, type Core, type Ctx } from '../core';
import { nameSchema } from '../entities/common';
import { defineResource } from '../entities/define';
import { listResource, type ApiObject } from '../entities/resource';
import { validationError } from '../errors';
import { requirePermission, SYSTEM } from '../permissions';
import { parseRoles, roleMatchSql } from '../query/roles';
import { SerialQueue } from '../serialQueue';
import { sqlMigration } from '../store/migrations/index';
import { explainAccess, type AccessExplanation, type Ref } from './accessExplain';
import { identities } from './identities';
import { services } from './services';

/**
 * Saved policy tests: "laptop-1 must reach wiki", "#guests must not reach #db". A test names an identity (`@id`, or
 * `@name` resolved to the id when it is written) or an identity role (`#attr`, `#all`), a service or a service role,
 * and an expectation. Every test runs again after each committed change that can affect access (the store's change
 * feed over the tables below: policies, identities, services, edge routers, posture checks and data, the tests
 * themselves); a run reads the same "why" chain as the policy advice (accessExplain.ts), so a broken test names the
 * pair that breaks it and why. Results are kept per core (each node runs its own), never written back.
 */

export const EXPECTATIONS = ['canDial', 'canBind', 'mustNotDial', 'mustNotBind'] as const;
export type Expectation = (typeof EXPECTATIONS)[number];
/** The pairs (identity × service) one test may select: more is an error (narrow the roles). */
export const MAX_PAIRS = 200;

const role = z
  .string()
  .trim()
  .min(2, "must be '@<id or name>', '#<attribute>' or '#all'")
  .max(300)
  .regex(/^[@#]/, "must be '@<id or name>', '#<attribute>' or '#all'");

export const policyTests = defineResource({
  entity: 'weft/policy-tests',
  table: 'policy_tests',
  permission: 'service-policy',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    identityRole: { codec: 'string', schema: role, required: true, filter: true },
    serviceRole: { codec: 'string', schema: role, required: true, filter: true },
    expectation: { codec: 'string', schema: z.enum(EXPECTATIONS), required: true, filter: true },
  },
  defaultSort: 't.name ASC',
  migrations: [
    sqlMigration(
      1028,
      'policy tests',
      `CREATE TABLE policy_tests (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  identity_role TEXT NOT NULL, service_role TEXT NOT NULL, expectation TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}'
);`,
    ),
  ],
  async beforeWrite(_op, input, _existing, ctx) {
    if (input.identityRole) input.identityRole = await resolveRole(ctx, 'identities', 'identityRole', input.identityRole);
    if (input.serviceRole) input.serviceRole = await resolveRole(ctx, 'services', 'serviceRole', input.serviceRole);
  },
  decorate(items: ApiObject[], rows, ctx) {
    // the latest result of each test on this node (pending until its first run)
    const latest = policyTestsOf(ctx.core).resultsById;
    rows.forEach((row, i) => void (items[i]!.result = latest.get(String(row.id)) ?? { status: 'pending' }));
  },
});

/** `@name` becomes `@id` (a test keeps naming its entity after a rename); an `@` naming nothing is refused. */
async function resolveRole(ctx: Ctx, table: 'identities' | 'services', field: string, given: string): Promise<string> {
  if (!given.startsWith('@')) {
    parseRoles([given], field);
    return given;
  }
  const key = given.slice(1);
  const row = await ctx.core.store.getSql<{ id: string }>(
    `SELECT id FROM ${table} WHERE id = ? UNION ALL SELECT id FROM ${table} WHERE name = ? LIMIT 1`,
    key,
    key,
  );
  if (!row) throw validationError(field, `no ${table === 'identities' ? 'identity' : 'service'} has this id or name`, given);
  return `@${row.id}`;
}

export interface PolicyTestResult {
  id: string;
  name: string;
  identityRole: string;
  serviceRole: string;
  expectation: Expectation;
  status: 'passing' | 'failing' | 'pending';
  /** the roles as people read them: an `@id` as the entity's name */
  identityLabel?: string;
  serviceLabel?: string;
  /** pairs checked (up to the first that breaks the test) */
  pairs?: number;
  /** the pair that breaks the test, and why (the advice's "why" in words) */
  failure?: { identity?: Ref; service?: Ref; why: string };
  checkedAt?: string;
}

export interface PolicyTestReport {
  tests: PolicyTestResult[];
  failing: number;
  /** the run these results come from (0: none yet); a changed number means changed results */
  run: number;
  /** the last run could not read the database: the results are those of the run before */
  error?: string;
}

type Row = { id: string; name: string; identity_role: string; service_role: string; expectation: Expectation };

/** The tables whose committed writes can change what a test finds. */
const WATCHED = [
  'service_policies',
  'edge_router_policies',
  'service_edge_router_policies',
  'identities',
  'services',
  'edge_routers',
  'posture_checks',
  'posture_data',
  'role_class_members',
  'service_access',
  'identity_router_access',
  'service_router_access',
];

/** Entities a test's role selects (one more than needed to tell "too many"). */
async function selected(ctx: Ctx, kind: 'identity' | 'service', given: string, limit: number) {
  const match = roleMatchSql(ctx.core.store.sql, kind, parseRoles([given]), 'AnyOf');
  const page = await listResource(ctx, kind === 'identity' ? identities : services, { limit: Math.min(500, limit) }, match);
  return { total: page.meta.pagination.totalCount, items: page.data.map((e) => ({ id: String(e.id), name: String(e.name) })) };
}

const verb = (e: Expectation) => (e.endsWith('Dial') ? 'Dial' : 'Bind');

/** Whether the pair may dial (bind) by policy: a grant with passing posture and an edge router in common, online or not. */
const grantedByPolicy = (x: AccessExplanation, type: 'Dial' | 'Bind') => {
  const g = type === 'Dial' ? x.dial : x.bind;
  return g.allowed && g.posturePasses && x.advice.commonRouters.length > 0;
};

function why(x: AccessExplanation, e: Expectation): string {
  const type = verb(e);
  const who = `${x.identity.name ?? x.identity.id}`;
  const what = `${x.service.name ?? x.service.id}`;
  if (e.startsWith('can')) return `${who} cannot ${type.toLowerCase()} ${what}: ${x.missing ?? 'access is missing'}`;
  const policies = (type === 'Dial' ? x.dial : x.bind).policies.map((p) => p.name ?? p.id).join(', ');
  const routers = x.advice.commonRouters.map((r) => r.name ?? r.id).join(', ');
  return `${who} may ${type.toLowerCase()} ${what}: granted by ${policies} through ${routers}`;
}

/** One test, read with the system's rights (whoever wrote the test, it checks the whole network). */
export async function evaluatePolicyTest(
  core: Core,
  t: Row,
): Promise<Omit<PolicyTestResult, 'id' | 'name' | 'identityRole' | 'serviceRole' | 'expectation'>> {
  const ctx: Ctx = { core, caller: SYSTEM };
  const checkedAt = core.clock.now().toISOString();
  const ids = await selected(ctx, 'identity', t.identity_role, MAX_PAIRS + 1);
  const svcs = await selected(ctx, 'service', t.service_role, MAX_PAIRS + 1);
  const label = (given: string, found: typeof ids) => (given.startsWith('@') && found.items[0] ? found.items[0].name : given);
  const labels = { identityLabel: label(t.identity_role, ids), serviceLabel: label(t.service_role, svcs), checkedAt };
  if (!ids.total || !svcs.total) {
    const what = !ids.total ? `${t.identity_role} selects no identity` : `${t.service_role} selects no service`;
    return { status: 'failing', pairs: 0, failure: { why: what }, ...labels };
  }
  if (ids.total * svcs.total > MAX_PAIRS) {
    const why = `selects ${ids.total} identities × ${svcs.total} services, more than ${MAX_PAIRS} pairs: narrow its roles`;
    return { status: 'failing', pairs: 0, failure: { why }, ...labels };
  }
  let pairs = 0;
  for (const i of ids.items) {
    for (const s of svcs.items) {
      pairs++;
      const type = verb(t.expectation);
      const x = await explainAccess(ctx, i.id, s.id, type);
      const ok = t.expectation.startsWith('can') ? (type === 'Dial' ? x.canDial : x.canBind) : !grantedByPolicy(x, type);
      if (!ok) return { status: 'failing', pairs, failure: { identity: x.identity, service: x.service, why: why(x, t.expectation) }, ...labels };
    }
  }
  return { status: 'passing', pairs, ...labels };
}

/** Runs every test after each change that can affect access; one run at a time, changes during a run make one more. */
class PolicyTestRunner {
  private readonly queue: SerialQueue;
  private queued = false;
  private off: Array<() => void> = [];
  private readonly listeners = new Set<() => void>();
  private report: PolicyTestReport = { tests: [], failing: 0, run: 0 };
  /** each test's latest result without its own fields (what REST lists add to a test) */
  resultsById: ReadonlyMap<string, Omit<PolicyTestResult, 'id' | 'name' | 'identityRole' | 'serviceRole' | 'expectation'>> = new Map();

  constructor(private readonly core: Core) {
    this.queue = new SerialQueue((e) => core.log.warn({ err: e }, 'policy tests: run failed'));
  }

  start(): void {
    const store = this.core.store;
    // with no tests saved, the network's writes cost nothing here (a write to the tests themselves always runs them)
    this.off = [
      store.watchTables(['policy_tests'], () => this.schedule()),
      store.watchTables(WATCHED, () => {
        if (this.report.run === 0 || this.report.tests.length > 0 || this.report.error) this.schedule();
      }),
      store.watchGaps(() => this.schedule()),
    ];
    this.schedule();
  }

  async stop(): Promise<void> {
    this.off.forEach((f) => f());
    this.off = [];
    this.queue.cancel();
    await this.queue.settled();
  }

  /** A run after what is committed now; runs already waiting cover it. */
  schedule(): void {
    if (this.queued) return;
    this.queued = true;
    this.queue.push(async () => {
      this.queued = false;
      await this.runAll();
    });
  }

  /** Resolves once the runs asked for so far are over. */
  settled(): Promise<void> {
    return this.queue.settled();
  }

  get latest(): PolicyTestReport {
    return this.report;
  }

  /** Calls `listener` after each run; returns the unsubscribe function. */
  onRun(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async runAll(): Promise<void> {
    const run = this.report.run + 1;
    try {
      const rows = await this.core.store.allSql<Row>('SELECT id, name, identity_role, service_role, expectation FROM policy_tests ORDER BY name');
      const tests: PolicyTestResult[] = [];
      for (const t of rows) {
        const base = { id: t.id, name: t.name, identityRole: t.identity_role, serviceRole: t.service_role, expectation: t.expectation };
        tests.push({ ...base, ...(await evaluatePolicyTest(this.core, t)) });
      }
      this.report = { tests, failing: tests.filter((t) => t.status === 'failing').length, run };
    } catch (e) {
      this.core.log.warn({ err: e }, 'policy tests: could not run');
      this.report = { ...this.report, run, error: (e as Error).message };
    }
    this.resultsById = new Map(this.report.tests.map(({ id, name: _n, identityRole: _i, serviceRole: _s, expectation: _e, ...r }) => [id, r]));
    for (const l of this.listeners) l();
  }
}

export const policyTestsOf = perCore((core) => new PolicyTestRunner(core));

/** The latest results, after the runs that changes committed so far asked for. */
export async function policyTestResults(ctx: Ctx): Promise<PolicyTestReport> {
  requirePermission(ctx.caller, 'service-policy', 'read');
  const runner = policyTestsOf(ctx.core);
  await runner.settled();
  return runner.latest;
}

/** Runs every test now (e.g. from CI, keeping tests in code) and returns the results. */
export async function runPolicyTests(ctx: Ctx): Promise<PolicyTestReport> {
  requirePermission(ctx.caller, 'service-policy', 'read');
  const runner = policyTestsOf(ctx.core);
  runner.schedule();
  await runner.settled();
  return runner.latest;
}

/** Calls `listener` after every run of the tests the caller may read; returns the unsubscribe function. */
export function watchPolicyTests(ctx: Ctx, listener: () => void): () => void {
  requirePermission(ctx.caller, 'service-policy', 'read');
  return policyTestsOf(ctx.core).onRun(listener);
}
