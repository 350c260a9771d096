import { API_SESSION } from '../auth/index';
import { allRows, getRow, json, rowShape, type Decoded } from '../store/rows';
import type { Ctx } from '../context';
import type { ApiObject, AssociationQuery } from '../entities/resource';
import type { Store } from '../store/db';
import { markVolatile } from '../replyReuse';
import { classesOf, grantsFor, permissionsOf, type Grant } from './access';
import { ensureClass } from './policyIndex';
import { anyPostureChecks, evaluationInput, policyPostureChecks, type PolicyChecks } from './posture';
import { checkPasses, timeoutRemaining, timeoutSeconds, type EvaluationInput } from './postureEvaluation';

/**
 * How a page of services is shown: for whom (permissions, overrides, posture) and with which config types.
 * Defaults: the caller, and the config types its API session asked for at authentication.
 */
export interface ServiceViewOptions {
  identityId?: string;
  /** config type names or ids, or `all` */
  configTypes?: string[];
}

const VIEW = Symbol('serviceView');
type ViewCtx = Ctx & { [VIEW]?: ServiceViewOptions };

/** A context whose service presentations use `opts`. */
/** The `configTypes` of a listing (repeated or comma-separated); undefined when absent. */
export function configTypesOf(query: AssociationQuery): string[] | undefined {
  const given = query.configTypes;
  const values = (given === undefined ? [] : Array.isArray(given) ? given : [given])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  return values.length ? values : undefined;
}

export function withServiceView(ctx: Ctx, opts: ServiceViewOptions): Ctx {
  return { ...ctx, [VIEW]: opts } as ViewCtx;
}

/** Fills `permissions`, `config` and `postureQueries` of a page of services (a fixed number of queries per page). */
export async function decorateServices(ctx: Ctx, items: ApiObject[], rows: ReadonlyArray<{ id: string }>): Promise<void> {
  if (!rows.length) return;
  const view = (ctx as ViewCtx)[VIEW] ?? {};
  const core = ctx.core;
  const store = core.store;
  const identityId = view.identityId ?? ctx.caller.identityId;
  const apiSession =
    ctx.caller.apiSessionId && !view.identityId
      ? await getRow(store, API_SESSION, 'SELECT * FROM api_sessions WHERE id = ?', ctx.caller.apiSessionId)
      : undefined;
  const identityClass = await ensureClass(core, 'identity', identityId);
  const serviceIds = rows.map((r) => r.id);
  const serviceClass = await classesOf(store, 'service', serviceIds);
  const classes = [...new Set(serviceClass.values())];
  const grants = identityClass === undefined ? new Map<number, Grant>() : await grantsFor(store, identityClass, classes);
  const configTypes = view.configTypes ?? apiSession?.config_types ?? [];
  const configs = await serviceConfigs(store, identityId, serviceIds, configTypes);
  const policies = (await anyPostureChecks(store)) ? await policyPostureChecks(store, identityClass, classes) : undefined;
  const input = policies?.length ? await evaluationInput(core, identityId, apiSession) : undefined;
  // posture results and their timeouts follow the clock second by second: such a page is not reused
  if (input) markVolatile(ctx);
  const passing = new Map<string, boolean>();
  items.forEach((item, i) => {
    const id = rows[i]!.id;
    const cls = serviceClass.get(id);
    const permissions = permissionsOf(cls === undefined ? undefined : grants.get(cls));
    item.permissions = permissions;
    item.config = configs.get(id) ?? {};
    const mine = policies?.filter((p) => p.serviceClass === cls) ?? [];
    item.postureQueries = mine.length
      ? mine.map((p) => postureQuerySet(p, input!, passing))
      : permissions.map((permission) => ({
          policyId: `dummy ${permission.toLowerCase()} policy: no posture checks defined`,
          policyType: permission,
          isPassing: true,
          postureQueries: [],
        }));
  });
}

function postureQuerySet(p: PolicyChecks, input: EvaluationInput, passing: Map<string, boolean>) {
  const queries = p.checks.map((c) => {
    const id = c.id;
    if (!passing.has(id)) passing.set(id, checkPasses(c, input));
    const remaining = timeoutRemaining(c, input);
    const d = c.details;
    return {
      _links: { self: { href: `./posture-checks/${id}` } },
      id,
      createdAt: c.created_at,
      updatedAt: c.updated_at,
      tags: c.tags,
      isPassing: passing.get(id)!,
      queryType: c.type_id,
      timeout: timeoutSeconds(c),
      timeoutRemaining: remaining,
      timeoutAt: remaining >= 0 ? new Date(input.now.getTime() + remaining * 1000).toISOString() : null,
      ...(c.type_id === 'MFA' ? { promptOnWake: !!d.promptOnWake, promptOnUnlock: !!d.promptOnUnlock } : {}),
      ...(c.type_id === 'PROCESS' ? { process: { osType: d.process!.osType, path: d.process!.path } } : {}),
      ...(c.type_id === 'PROCESS_MULTI' ? { processes: d.processes!.map((x) => ({ osType: x.osType, path: x.path })) } : {}),
    };
  });
  return { policyId: p.policyId, policyType: p.type, isPassing: queries.every((q) => q.isPassing), postureQueries: queries };
}

/** Config type ids asked for (by id or name); `all` selects every type. */
export async function resolveConfigTypes(store: Store, values: string[]): Promise<{ all: boolean; ids: Set<string> }> {
  if (values.includes('all')) return { all: true, ids: new Set() };
  if (!values.length) return { all: false, ids: new Set() };
  const ids = await store.allSql<{ id: string }>(
    `SELECT id FROM config_types WHERE id IN ${store.sql.jsonValues()} OR name IN ${store.sql.jsonValues()}`,
    JSON.stringify(values),
    JSON.stringify(values),
  );
  return { all: false, ids: new Set(ids.map((r) => r.id)) };
}

/** A config of a service: its type and its data. */
const SERVICE_CONFIG = rowShape({ service_id: 'string', type_id: 'string', type_name: 'string', data: json<unknown>() });

/**
 * `config` of each service: its configs of the wanted types keyed by type name, with the identity's overrides
 * for that service taking precedence.
 */
async function serviceConfigs(
  store: Store,
  identityId: string,
  serviceIds: string[],
  wanted: string[],
): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  const types = await resolveConfigTypes(store, wanted);
  if (!types.all && !types.ids.size) return out;
  const want = (typeId: string) => types.all || types.ids.has(typeId);
  const ids = JSON.stringify(serviceIds);
  const put = (r: Decoded<typeof SERVICE_CONFIG>) => {
    if (!want(r.type_id)) return;
    const cfg = out.get(r.service_id) ?? {};
    cfg[r.type_name] = r.data;
    out.set(r.service_id, cfg);
  };
  const select = 'SELECT x.service_id, c.config_type_id AS type_id, ct.name AS type_name, c.data FROM';
  const joins = 'JOIN configs c ON c.id = x.config_id JOIN config_types ct ON ct.id = c.config_type_id';
  for (const r of await allRows(store, SERVICE_CONFIG, `${select} service_configs x ${joins} WHERE x.service_id IN ${store.sql.jsonValues()}`, ids))
    put(r);
  for (const r of await allRows(
    store,
    SERVICE_CONFIG,
    `${select} identity_service_configs x ${joins} WHERE x.identity_id = ? AND x.service_id IN ${store.sql.jsonValues()}`,
    identityId,
    ids,
  ))
    put(r);
  return out;
}
