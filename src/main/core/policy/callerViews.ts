import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { authenticators, updateCredentials, type ApiSession } from '../auth/index';
import { edgeRouters } from './edgeRouters';
import { identities } from './identities';
import { listRows, present, requireRow, type ApiObject } from '../entities/resource';
import { services } from './services';
import { commonRouters, edgeRouterView, sessions } from './sessions';
import { terminators } from '../entities/terminators';
import { notFound } from '../errors';
import type { ListParams, Page } from '../query/list';
import type { Row } from '../store/db';
import { decode } from '../store/rows';
import { classFor, listReachableServices, reach } from './access';
import { policyAdvice } from './advice';
import { failedServiceRequests } from './posture';
import { accessibleService, checkSessionTokenHeader, createSession } from './sessionGrant';
import { withServiceView } from './serviceView';
import { pageQuery } from '../query/list';

/**
 * What the Client API shows an identity of its own network: its services, routers and sessions, each read with
 * the caller's access (never another identity's), plus the Management API's per-identity views that need more
 * than a listing.
 */

/** The services the caller may dial or bind, as it sees them (`configTypes`: the configs it wants inlined). */
export async function listCallerServices(ctx: Ctx, params: ListParams, configTypes: string[] | undefined): Promise<Page<ApiObject>> {
  const identityClass = await classFor(ctx.core, 'identity', ctx.caller.identityId);
  const { rows, meta } = await listReachableServices(ctx, services, identityClass, params);
  return { data: await present(withServiceView(ctx, { configTypes }), services, rows), meta };
}

export async function getCallerService(ctx: Ctx, id: string, configTypes: string[] | undefined): Promise<ApiObject> {
  const { service } = await accessibleService(ctx, id);
  return (await present(withServiceView(ctx, { configTypes }), services, [service]))[0]!;
}

/** Edge routers the caller may use for a service; a `session-token` given must be one of the caller's API session. */
export async function callerServiceEdgeRouters(ctx: Ctx, serviceId: string, sessionToken: string | undefined) {
  checkSessionTokenHeader(ctx, sessionToken);
  const { identityClass, serviceClass } = await accessibleService(ctx, serviceId);
  return { edgeRouters: (await commonRouters(ctx.core.store, identityClass, serviceClass)).map(edgeRouterView) };
}

export async function listCallerServiceTerminators(ctx: Ctx, serviceId: string, params: ListParams): Promise<Page<ApiObject>> {
  await accessibleService(ctx, serviceId);
  const { rows, meta } = await listRows(ctx, terminators, params, { where: 't.service_id = ?', params: [serviceId] });
  return { data: await present(ctx, terminators, rows), meta };
}

/** Edge routers the caller may use at all, in the Client API's shape. */
export async function listCallerEdgeRouters(ctx: Ctx, params: ListParams): Promise<Page<ApiObject>> {
  const extra = reach.routersOfIdentity(await classFor(ctx.core, 'identity', ctx.caller.identityId));
  const { rows, meta } = await listRows(ctx, edgeRouters, params, extra);
  const data = rows.map((r) => ({
    _links: { self: { href: `./edge-routers/${r.id}` } },
    id: r.id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    tags: decode('json', r.tags),
    ...edgeRouterView(r),
  }));
  return { data, meta };
}

/** Sessions in the Client API's shape: without the policies that granted them. */
async function callerSessionView(ctx: Ctx, rows: Row[]): Promise<ApiObject[]> {
  return (await present(ctx, sessions, rows)).map(({ servicePolicies: _omit, ...rest }) => rest);
}

/** The caller's own session, 404 for anyone else's. */
async function ownSession(ctx: Ctx, id: string): Promise<Row> {
  const row = await ctx.core.store.getSql<Row>('SELECT * FROM sessions WHERE id = ? AND identity_id = ?', id, ctx.caller.identityId);
  if (!row) throw notFound('session');
  return row;
}

/** A Dial or Bind session of the caller's API session (sessionGrant.ts), shown as created. */
export async function createCallerSession(ctx: Ctx, apiSession: ApiSession, body: unknown): Promise<ApiObject> {
  const id = await createSession(ctx, apiSession, body);
  return (await callerSessionView(ctx, [await requireRow(ctx.core.store, sessions, id)]))[0]!;
}

export async function listCallerSessions(ctx: Ctx, params: ListParams): Promise<Page<ApiObject>> {
  const { rows, meta } = await listRows(ctx, sessions, params, { where: 't.identity_id = ?', params: [ctx.caller.identityId] });
  return { data: await callerSessionView(ctx, rows), meta };
}

export async function getCallerSession(ctx: Ctx, id: string): Promise<ApiObject> {
  return (await callerSessionView(ctx, [await ownSession(ctx, id)]))[0]!;
}

export async function deleteCallerSession(ctx: Ctx, id: string): Promise<void> {
  await ctx.core.store.runSql('DELETE FROM sessions WHERE id = ?', (await ownSession(ctx, id)).id);
}

/** A session's route path: Weft tracks no fabric circuits, so it is empty. */
export async function sessionRoutePath(ctx: Ctx, id: string) {
  requirePermission(ctx.caller, 'ops', 'read');
  await requireRow(ctx.core.store, sessions, id);
  return { routePath: [] };
}

export async function identityFailedServiceRequests(ctx: Ctx, identityId: string) {
  requirePermission(ctx.caller, 'identity', 'read');
  await requireRow(ctx.core.store, identities, identityId);
  return failedServiceRequests(ctx.core.store, identityId);
}

/**
 * Policy advice with all common routers, as OpenZiti answers (its CLI counts them); `limit` / `offset` page them
 * (a Weft extension), with the total in `meta.pagination`.
 */
export async function pagedPolicyAdvice(ctx: Ctx, identityId: string, serviceId: string, paging: Pick<ListParams, 'limit' | 'offset'>) {
  const advice = await policyAdvice(ctx, identityId, serviceId);
  if (paging.limit === undefined && paging.offset === undefined) return { data: advice };
  const page = pageQuery(paging, {});
  return {
    data: { ...advice, commonRouters: advice.commonRouters.slice(page.offset, page.offset + page.limit) },
    meta: { pagination: { limit: page.limit, offset: page.offset, totalCount: advice.commonRouters.length } },
  };
}

/** The identity of the caller's API session. */
export async function getCurrentIdentity(ctx: Ctx): Promise<ApiObject> {
  return (await present(ctx, identities, [await requireRow(ctx.core.store, identities, ctx.caller.identityId)]))[0]!;
}

/** The caller's own authenticator, 404 for anyone else's. */
async function ownAuthenticator(ctx: Ctx, id: string): Promise<Row> {
  const row = await requireRow(ctx.core.store, authenticators, id);
  if (row.identity_id !== ctx.caller.identityId) throw notFound('authenticator');
  return row;
}

export async function listOwnAuthenticators(ctx: Ctx, params: ListParams): Promise<Page<ApiObject>> {
  const { rows, meta } = await listRows(ctx, authenticators, params, { where: 't.identity_id = ?', params: [ctx.caller.identityId] });
  return { data: await present(ctx, authenticators, rows), meta };
}

export async function getOwnAuthenticator(ctx: Ctx, id: string): Promise<ApiObject> {
  return (await present(ctx, authenticators, [await ownAuthenticator(ctx, id)]))[0]!;
}

/** A new password (and username) for one of the caller's own authenticators, given its current password. */
export async function updateOwnAuthenticator(ctx: Ctx, id: string, body: unknown, op: 'update' | 'patch'): Promise<void> {
  await ownAuthenticator(ctx, id);
  await updateCredentials(ctx, id, body, op, true);
}
