import { z } from 'zod';
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { builtinRouterId } from './edgeRouters';
import { nameSchema } from '../entities/common';
import { configs } from '../entities/configs';
import { edgeRouterPolicies } from './edgeRouterPolicies';
import { applyCreate, namesById, type ResourceDef } from '../entities/resource';
import { serviceEdgeRouterPolicies } from './serviceEdgeRouterPolicies';
import { servicePolicies } from './servicePolicies';
import { services } from './services';
import { ApiError, validationError } from '../errors';
import { getRow, rowShape, selectList, type Decoded } from '../store/rows';
import { parseInput } from '../validation';
import { ROLE_KINDS, type RoleKind } from '../kinds';
import { parseRoles, roleMatchSql } from '../query/roles';
import { resolveRoleFields, type RoleField } from './roleNames';
import { wizardCommands, type WizardCommands } from './wizardCommands';
import type { StepKey, WizardPlan, WizardStep, RoleDisplay } from './wizardPlan';

export type { StepKey, WizardPlan, WizardStep, RoleDisplay } from './wizardPlan';

/**
 * The service wizard: one form that makes a service usable — the service, its intercept.v1 and host.v1 configs, the
 * Dial and Bind service policies, the service edge router policy and (when the dialers do not reach the chosen
 * routers yet) an edge router policy — planned here, shown as a preview computed by a dry run of the very same
 * plan, and created in one transaction through the generic resource write path (all or nothing).
 */

const port = z.number().int().min(1, 'must be between 1 and 65535').max(65535, 'must be between 1 and 65535');
const role = z
  .string()
  .trim()
  .regex(/^[#@]./s, "must be '#attribute', '@name', '@id' or '#all'");
const roles = z.array(role).max(100);
const address = z.string().trim().min(1, 'must not be empty').max(500);

export const serviceWizardSchema = z.object({
  name: nameSchema,
  roleAttributes: z.array(z.string().trim().min(1)).max(50).default([]),
  encryptionRequired: z.boolean().default(true),
  /** how clients reach it: the host name(s) and port a tunneler intercepts (intercept.v1); none for SDK-only clients */
  intercept: z
    .object({
      addresses: z.array(address).min(1, 'must contain at least one address').max(20),
      port,
      protocols: z
        .array(z.enum(['tcp', 'udp']))
        .min(1)
        .default(['tcp']),
    })
    .optional(),
  /** where it lives */
  host: z.discriminatedUnion('kind', [
    // the router connects to address:port itself (router hosting); its router identity gets the Bind
    z.object({ kind: z.literal('router'), routerId: z.string().min(1).optional(), address, port }),
    // a tunneler (`ziti tunnel host`, a desktop app) on these identities connects to address:port
    z.object({
      kind: z.literal('identity'),
      identityRoles: roles.min(1, 'name at least one identity or #attribute'),
      address,
      port,
      protocol: z.enum(['tcp', 'udp']).default('tcp'),
    }),
    // an SDK application on these identities binds the service itself (no host.v1)
    z.object({ kind: z.literal('sdk'), identityRoles: roles.min(1, 'name at least one identity or #attribute') }),
  ]),
  /** who may dial: identities (`@id`) and `#attributes` */
  dialRoles: roles.min(1, 'name at least one identity or #attribute'),
  /** which edge routers carry it; default: the built-in router (or every router when Weft runs none) */
  routerRoles: roles.optional(),
  /** `auto`: an edge router policy only when some dialer or host would not reach the routers otherwise */
  edgeRouterPolicy: z.enum(['auto', 'always', 'never']).default('auto'),
});
export type ServiceWizardInput = z.input<typeof serviceWizardSchema>;

const STEP_DEFS: Record<StepKey, ResourceDef> = {
  'intercept-config': configs,
  'host-config': configs,
  service: services,
  'dial-policy': servicePolicies,
  'bind-policy': servicePolicies,
  'service-edge-router-policy': serviceEdgeRouterPolicies,
  'edge-router-policy': edgeRouterPolicies,
};

const REF = /^(@?)\$([a-z-]+)$/;

/** The edge router chosen to host the service. */
const HOSTING_ROUTER = rowShape({ id: 'string', name: 'string', is_tunneler_enabled: 'bool' });

/** The body with `$<step>` references replaced by the ids created so far. */
function resolve(value: unknown, ids: Partial<Record<StepKey, string>>): unknown {
  if (typeof value === 'string') {
    const m = REF.exec(value);
    if (!m) return value;
    const id = ids[m[2] as StepKey];
    if (!id) throw new Error(`wizard plan refers to ${m[2]} before it is created`);
    return `${m[1]}${id}`;
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, ids));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, ids)]));
  return value;
}

async function configTypeId(ctx: Ctx, name: string): Promise<string> {
  const row = await ctx.core.store.getSql<{ id: string }>('SELECT id FROM config_types WHERE name = ?', name);
  if (!row) throw validationError('configTypeId', `config type ${name} not found`, name);
  return row.id;
}

/** `@id` roles shown with names; `#attr` as is. Unknown ids keep the id (the dry run reports them). */
async function displayRoles(ctx: Ctx, kind: RoleKind, list: string[], planned: Record<string, string> = {}): Promise<RoleDisplay[]> {
  const ids = list.filter((r) => r.startsWith('@') && !REF.test(r)).map((r) => r.slice(1));
  const names = await namesById(ctx.core.store, ROLE_KINDS[kind].table, ids);
  return list.map((r) => {
    const ref = REF.exec(r);
    if (ref) return { role: r, name: `@${planned[ref[2]!] ?? ref[2]} (new)` };
    if (r.startsWith('@')) return { role: r, name: `@${names.get(r.slice(1)) ?? r.slice(1)}` };
    return { role: r, name: r };
  });
}

/** Entities of a kind the roles match now (AnyOf, as the wizard's policies use). */
async function countMatches(ctx: Ctx, kind: RoleKind, list: string[]): Promise<number> {
  const real = list.filter((r) => !REF.test(r));
  if (!real.length) return 0;
  const m = roleMatchSql(ctx.core.store.sql, kind, parseRoles(real), 'AnyOf');
  return (await ctx.core.store.getSql<{ n: number }>(`SELECT count(*) AS n FROM ${ROLE_KINDS[kind].table} t WHERE ${m.where}`, ...m.params))!.n;
}

/**
 * Whether an edge router policy is needed: some identity the roles match (dialers, SDK or tunneler hosts) reaches
 * none of the routers the roles select — or nobody matches yet and no `#all` edge router policy reaches them.
 */
async function dialersNeedRouters(ctx: Ctx, identityRoles: string[], routerRoles: string[]): Promise<{ needed: boolean; why: string }> {
  const store = ctx.core.store;
  const ids = roleMatchSql(store.sql, 'identity', parseRoles(identityRoles), 'AnyOf');
  const rs = roleMatchSql(store.sql, 'edge-router', parseRoles(routerRoles), 'AnyOf');
  const routerClasses = `SELECT m.class_id FROM edge_routers t JOIN role_class_members m ON m.kind = 'edge-router' AND m.entity_id = t.id WHERE ${rs.where}`;
  const identityClasses = `SELECT DISTINCT m.class_id FROM identities t JOIN role_class_members m ON m.kind = 'identity' AND m.entity_id = t.id WHERE ${ids.where}`;
  const matched = (await store.getSql<{ n: number }>(`SELECT count(*) AS n FROM (${identityClasses}) AS c`, ...ids.params))!.n;
  if (!(await store.getSql<{ n: number }>(`SELECT count(*) AS n FROM (${routerClasses}) AS c`, ...rs.params))!.n) {
    return { needed: true, why: 'The router roles match no edge router yet.' };
  }
  if (matched) {
    const uncovered = (await store.getSql<{ n: number }>(
      `SELECT count(*) AS n FROM (${identityClasses}) c WHERE NOT EXISTS (
         SELECT 1 FROM identity_router_access a WHERE a.identity_class = c.class_id AND a.router_class IN (${routerClasses}))`,
      ...ids.params,
      ...rs.params,
    ))!.n;
    return uncovered
      ? { needed: true, why: 'Some identities that would use the service reach none of its edge routers: an edge router policy is added.' }
      : { needed: false, why: 'Every identity that would use the service already reaches one of its edge routers: no edge router policy is needed.' };
  }
  const everyone = await store.getSql(
    `SELECT 1 FROM policy_sides s JOIN class_policies r ON r.policy_id = s.policy_id AND r.kind = 'edge-router'
     WHERE s.kind = 'identity' AND s.policy_type = 'edge-router-policy' AND s.is_all = 1 AND r.class_id IN (${routerClasses}) LIMIT 1`,
    ...rs.params,
  );
  return everyone
    ? { needed: false, why: 'An edge router policy for #all identities already reaches its edge routers: no edge router policy is needed.' }
    : { needed: true, why: 'No identity matches the roles yet: an edge router policy is added so those that will can reach the edge routers.' };
}

/** The wizard's role fields with `@name` resolved to `@id` (every field at fault named at once, by its form field). */
async function resolveWizardNames(ctx: Ctx, input: z.output<typeof serviceWizardSchema>): Promise<void> {
  const host = input.host.kind === 'router' ? undefined : input.host;
  const fields: RoleField[] = [
    ...(host ? [{ field: 'host.identityRoles', kind: 'identity' as const, roles: host.identityRoles }] : []),
    { field: 'dialRoles', kind: 'identity', roles: input.dialRoles },
    ...(input.routerRoles ? [{ field: 'routerRoles', kind: 'edge-router' as const, roles: input.routerRoles }] : []),
  ];
  const resolved = await resolveRoleFields(ctx.core.store, fields);
  fields.forEach((f, i) => {
    if (f.field === 'host.identityRoles') host!.identityRoles = resolved[i]!;
    else if (f.field === 'dialRoles') input.dialRoles = resolved[i]!;
    else input.routerRoles = resolved[i]!;
  });
}

/** Checks what can be checked before any write and builds the steps. Needs create rights for every kind it creates. */
export async function planServiceWizard(ctx: Ctx, body: unknown): Promise<WizardPlan> {
  const caller = ctx.caller;
  requirePermission(caller, 'service', 'create');
  requirePermission(caller, 'service-policy', 'create');
  requirePermission(caller, 'service-edge-router-policy', 'create');
  requirePermission(caller, 'identity', 'read');
  requirePermission(caller, 'router', 'read');
  const input = parseInput(serviceWizardSchema, body);
  if (ctx.roleNames) await resolveWizardNames(ctx, input);
  if (input.intercept || input.host.kind !== 'sdk') requirePermission(caller, 'config', 'create');
  const store = ctx.core.store;
  const name = input.name;
  const notes: string[] = [];
  const steps: WizardStep[] = [];
  const planned: Record<string, string> = { service: name };

  // where it lives
  let hostRoles: string[];
  let hostingRouter: Decoded<typeof HOSTING_ROUTER> | undefined;
  if (input.host.kind === 'router') {
    const routerId = input.host.routerId ?? (await builtinRouterId(ctx.core));
    if (!routerId) throw validationError('host.routerId', 'Weft runs no edge router: choose a router, or host the service on an identity', null);
    hostingRouter = await getRow(store, HOSTING_ROUTER, `SELECT ${selectList(HOSTING_ROUTER)} FROM edge_routers WHERE id = ?`, routerId);
    if (!hostingRouter) throw validationError('host.routerId', 'edge router not found', routerId);
    if (!hostingRouter.is_tunneler_enabled || !(await store.getSql('SELECT 1 FROM identities WHERE id = ?', routerId))) {
      throw validationError('host.routerId', 'the edge router is not tunneler-enabled, so it cannot host services', routerId);
    }
    hostRoles = [`@${routerId}`];
    notes.push(`The edge router ${hostingRouter.name} hosts the service: it connects to ${input.host.address}:${input.host.port} for every dial.`);
  } else {
    hostRoles = input.host.identityRoles;
    notes.push(
      input.host.kind === 'sdk'
        ? 'An SDK application on the hosting identities binds the service itself.'
        : `A tunneler on the hosting identities (ziti tunnel host, a Ziti app) connects to ${input.host.address}:${input.host.port}.`,
    );
  }

  // which routers
  const defaultRouter = await builtinRouterId(ctx.core);
  let routerRoles = input.routerRoles?.length ? [...input.routerRoles] : defaultRouter ? [`@${defaultRouter}`] : ['#all'];
  if (hostingRouter && !routerRoles.includes('#all') && !routerRoles.includes(`@${hostingRouter.id}`)) {
    // a router-hosted circuit starts and ends on the hosting router: the service must be allowed on it
    routerRoles = [...routerRoles, `@${hostingRouter.id}`];
    notes.push(`The hosting router ${hostingRouter.name} is added to the service's edge routers.`);
  }

  if (input.intercept) {
    const { addresses, port: p, protocols } = input.intercept;
    planned['intercept-config'] = `${name}-intercept`;
    steps.push({
      key: 'intercept-config',
      resource: 'configs',
      name: `${name}-intercept`,
      summary: `How clients reach it: tunnelers intercept ${addresses.join(', ')} port ${p} (${protocols.join('/')}).`,
      body: {
        name: `${name}-intercept`,
        configTypeId: await configTypeId(ctx, 'intercept.v1'),
        data: { protocols, addresses, portRanges: [{ low: p, high: p }] },
      },
    });
  }
  if (input.host.kind !== 'sdk') {
    const protocol = input.host.kind === 'identity' ? input.host.protocol : 'tcp';
    planned['host-config'] = `${name}-host`;
    steps.push({
      key: 'host-config',
      resource: 'configs',
      name: `${name}-host`,
      summary: `Where it lives: ${protocol} ${input.host.address}:${input.host.port}, as seen by ${hostingRouter ? `the router ${hostingRouter.name}` : 'the hosting tunneler'}.`,
      body: {
        name: `${name}-host`,
        configTypeId: await configTypeId(ctx, 'host.v1'),
        data: { protocol, address: input.host.address, port: input.host.port },
      },
    });
  }
  steps.push({
    key: 'service',
    resource: 'services',
    name,
    summary: `The service${input.roleAttributes.length ? ` (attributes ${input.roleAttributes.map((a) => `#${a}`).join(', ')})` : ''}${input.encryptionRequired ? ', end-to-end encrypted' : ''}.`,
    body: {
      name,
      encryptionRequired: input.encryptionRequired,
      roleAttributes: input.roleAttributes,
      configs: steps.filter((s) => s.key.endsWith('-config')).map((s) => `$${s.key}`),
    },
  });
  const policy = async (key: StepKey, policyName: string, type: 'Dial' | 'Bind', identityRoles: string[], summary: string): Promise<WizardStep> => ({
    key,
    resource: 'service-policies',
    name: policyName,
    summary,
    body: { name: policyName, type, semantic: 'AnyOf', identityRoles, serviceRoles: ['@$service'], postureCheckRoles: [] },
    roles: {
      identityRoles: await displayRoles(ctx, 'identity', identityRoles),
      serviceRoles: await displayRoles(ctx, 'service', ['@$service'], planned),
    },
    matches: { identityRoles: await countMatches(ctx, 'identity', identityRoles) },
  });
  steps.push(await policy('dial-policy', `${name}-dial`, 'Dial', input.dialRoles, 'Who may dial (use) the service.'));
  steps.push(
    await policy(
      'bind-policy',
      `${name}-bind`,
      'Bind',
      hostRoles,
      hostingRouter ? `The router ${hostingRouter.name} may bind (host) the service.` : 'Who may bind (host) the service.',
    ),
  );
  steps.push({
    key: 'service-edge-router-policy',
    resource: 'service-edge-router-policies',
    name: `${name}-routers`,
    summary: 'Which edge routers may carry the service.',
    body: { name: `${name}-routers`, semantic: 'AnyOf', serviceRoles: ['@$service'], edgeRouterRoles: routerRoles },
    roles: {
      serviceRoles: await displayRoles(ctx, 'service', ['@$service'], planned),
      edgeRouterRoles: await displayRoles(ctx, 'edge-router', routerRoles),
    },
    matches: { edgeRouterRoles: await countMatches(ctx, 'edge-router', routerRoles) },
  });

  // the dialers (and SDK or tunneler hosts) must reach one of those routers
  const reaching = [...new Set([...input.dialRoles, ...(hostingRouter ? [] : hostRoles)])];
  if (reaching.includes('#all') && reaching.length > 1) reaching.splice(0, reaching.length, '#all');
  const need =
    input.edgeRouterPolicy === 'always'
      ? { needed: true, why: 'An edge router policy is added, as asked.' }
      : input.edgeRouterPolicy === 'never'
        ? { needed: false, why: 'No edge router policy is created, as asked.' }
        : await dialersNeedRouters(ctx, reaching, routerRoles);
  notes.push(need.why);
  if (need.needed) {
    requirePermission(caller, 'edge-router-policy', 'create');
    steps.push({
      key: 'edge-router-policy',
      resource: 'edge-router-policies',
      name: `${name}-clients`,
      summary: 'Lets the identities that dial or host the service connect to its edge routers.',
      body: { name: `${name}-clients`, semantic: 'AnyOf', identityRoles: reaching, edgeRouterRoles: routerRoles },
      roles: {
        identityRoles: await displayRoles(ctx, 'identity', reaching),
        edgeRouterRoles: await displayRoles(ctx, 'edge-router', routerRoles),
      },
      matches: {
        identityRoles: await countMatches(ctx, 'identity', reaching),
        edgeRouterRoles: await countMatches(ctx, 'edge-router', routerRoles),
      },
    });
  }
  return { steps, notes };
}

/** Which wizard field a failing step's field belongs to, so the form can show the error where the user typed. */
function wizardField(step: StepKey, field: string | undefined): string {
  const f = field ?? '';
  if (f === 'name') return 'name';
  switch (step) {
    case 'intercept-config':
      return 'intercept';
    case 'host-config':
      return 'host';
    case 'service':
      return f === 'roleAttributes' || f.startsWith('roleAttributes.') ? 'roleAttributes' : f.startsWith('configs') ? 'name' : f || 'name';
    case 'dial-policy':
      return 'dialRoles';
    case 'bind-policy':
      return 'host.identityRoles';
    case 'service-edge-router-policy':
      return f.startsWith('edgeRouterRoles') ? 'routerRoles' : 'name';
    case 'edge-router-policy':
      return f.startsWith('edgeRouterRoles') ? 'routerRoles' : f.startsWith('identityRoles') ? 'dialRoles' : 'name';
  }
}

/** A failed step as the wizard's error: the same code and status, the field mapped onto the form, the step named. */
export class WizardStepError extends ApiError {
  constructor(
    readonly step: StepKey,
    e: ApiError,
    what: string,
  ) {
    const cause = e.fieldCause;
    const plain = e.forPeople?.plain;
    super(
      e.code,
      e.status,
      `${e.message} (${what})`,
      {
        field: wizardField(step, cause?.field),
        reason: `${cause?.reason ?? e.message} (${what}${cause?.field ? `, field ${cause.field}` : ''})`,
        value: cause?.value,
      },
      undefined,
      plain ? { plain: `${plain} (${what})` } : undefined,
    );
  }
}

function stepError(step: WizardStep, e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  return new WizardStepError(step.key, e, `creating the ${step.resource.replace(/-/g, ' ').replace(/ies$/, 'y').replace(/s$/, '')} "${step.name}"`);
}

class DryRun extends Error {
  constructor(readonly created: CreatedEntity[]) {
    super('dry run');
  }
}

export interface CreatedEntity {
  key: StepKey;
  resource: string;
  id: string;
  name: string;
}

export interface WizardPreview extends WizardPlan {
  /** the dry run: every step ran in a transaction that was then rolled back */
  ok: boolean;
  /** the step that failed in the dry run, and why (the same error a create would give) */
  problem?: { step: StepKey; code: string; message: string; field?: string; reason?: string };
  /** the same plan as `ziti edge create` commands and Management API requests */
  commands: WizardCommands;
}

async function execute(ctx: Ctx, plan: WizardPlan, dryRun: boolean): Promise<CreatedEntity[]> {
  const store = ctx.core.store;
  try {
    return await store.tx(async () => {
      const ids: Partial<Record<StepKey, string>> = {};
      const created: CreatedEntity[] = [];
      for (const step of plan.steps) {
        try {
          ids[step.key] = await applyCreate(ctx, STEP_DEFS[step.key], resolve(step.body, ids));
        } catch (e) {
          throw stepError(step, e);
        }
        created.push({ key: step.key, resource: step.resource, id: ids[step.key]!, name: step.name });
      }
      if (dryRun) throw new DryRun(created);
      return created;
    });
  } catch (e) {
    if (e instanceof DryRun) return e.created;
    throw e;
  }
}

/** The plan and a dry run of it (nothing is kept). Input and permission errors throw; a failing step is reported. */
export async function previewServiceWizard(ctx: Ctx, body: unknown): Promise<WizardPreview> {
  const plan = await planServiceWizard(ctx, body);
  const commands = wizardCommands(plan);
  try {
    await execute(ctx, plan, true);
    return { ...plan, ok: true, commands };
  } catch (e) {
    if (!(e instanceof WizardStepError)) throw e;
    return {
      ...plan,
      commands,
      ok: false,
      problem: { step: e.step, code: e.code, message: e.message, field: e.fieldCause?.field, reason: e.forPeople?.plain ?? e.fieldCause?.reason },
    };
  }
}

/** Creates everything the plan lists in one transaction: all of it, or (on any failing step) none of it. */
export async function runServiceWizard(ctx: Ctx, body: unknown): Promise<{ serviceId: string; created: CreatedEntity[] }> {
  const plan = await planServiceWizard(ctx, body);
  const created = await execute(ctx, plan, false);
  return { serviceId: created.find((c) => c.key === 'service')!.id, created };
}
