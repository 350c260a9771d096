import { requirePermission } from '../../core/auth/permissions';
import type { Core } from '../../core/core';
import type { Ctx } from '../../core/context';
import { edgeRouterPolicies } from '../../core/entities/edgeRouterPolicies';
import { edgeRouters } from '../../core/entities/edgeRouters';
import { identities } from '../../core/entities/identities';
import { listRelated } from '../../core/entities/listings';
import { postureCheckTypes, postureChecks } from '../../core/entities/postureChecks';
import { listRows, present, requireRow, type ListExtra, type ResourceDef } from '../../core/entities/resource';
import { serviceEdgeRouterPolicies } from '../../core/entities/serviceEdgeRouterPolicies';
import { servicePolicies } from '../../core/entities/servicePolicies';
import { services } from '../../core/entities/services';
import { commonRouters, edgeRouterView, sessions } from '../../core/entities/sessions';
import { terminators } from '../../core/entities/terminators';
import { notFound, validationError } from '../../core/errors';
import { classFor, listReachableServices, reach, type PolicyTypeFilter } from '../../core/policy/access';
import { policyAdvice } from '../../core/policy/advice';
import { pageQuery } from '../../core/query/list';
import { lastServiceChange } from '../../core/policy/changes';
import type { RoleKind } from '../../core/policy/kinds';
import { failedServiceRequests } from '../../core/policy/posture';
import { parsePostureResponses, postureDataView, submitPostureResponses } from '../../core/policy/postureResponses';
import { associateServiceConfigs, listServiceConfigOverrides, removeServiceConfigs } from '../../core/policy/serviceConfigOverrides';
import { accessibleService, checkSessionTokenHeader, createSession } from '../../core/policy/sessionGrant';
import { withServiceView } from '../../core/policy/serviceView';
import type { Row } from '../../core/store/db';
import { queryList, queryString, type ApiName, type ApiRequest, type RouteDef } from '../registry';
import { roleAttributeRoute, roleFilter } from './management';
import { listParams, resourceRoutes } from './resources';

const mgmt: ApiName[] = ['management'];
const client: ApiName[] = ['client'];

/** `/parent/:id/<name>`: `child` rows reached from the parent (its class links), listed and paged in SQL. */
function reachRoute(
  parent: ResourceDef,
  name: string,
  child: ResourceDef,
  extra: (req: ApiRequest, id: string) => ListExtra,
  viewCtx: (req: ApiRequest, id: string) => Ctx = (req) => req.ctx,
): RouteDef {
  return {
    apis: mgmt,
    method: 'GET',
    path: `/${parent.entity}/:id/${name}`,
    auth: 'session',
    summary: `List ${name} of one of ${parent.entity}`,
    handler: (req) => listRelated(viewCtx(req, req.params.id!), parent, req.params.id!, child, listParams(req), extra(req, req.params.id!)),
  };
}

function policyType(req: ApiRequest): PolicyTypeFilter {
  const v = queryString(req.query.policyType);
  if (v === undefined || v === '') return undefined;
  const t = v.toLowerCase();
  if (t !== 'dial' && t !== 'bind') throw validationError('policyType', "must be 'dial' or 'bind'", v);
  return t;
}

/** `configTypes` query values (repeated or comma-separated); undefined when absent. */
function configTypes(req: ApiRequest): string[] | undefined {
  const values = queryList(req.query.configTypes)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  return values.length ? values : undefined;
}

const classOfParam = (core: Core, kind: RoleKind) => (_req: ApiRequest, id: string) => classFor(core, kind, id);

/** The caller's own session (Client API), 404 for anyone else's. */
function ownSession(req: ApiRequest): Row {
  const row = req.ctx.core.store.getSql<Row>('SELECT * FROM sessions WHERE id = ? AND identity_id = ?', req.params.id, req.ctx.caller.identityId);
  if (!row) throw notFound('session');
  return row;
}

function clientSessionView(ctx: Ctx, rows: Row[]) {
  return present(ctx, sessions, rows).map(({ servicePolicies: _omit, ...rest }) => rest);
}

export function policyRoutes(core: Core): RouteDef[] {
  const identityClass = classOfParam(core, 'identity');
  const serviceClass = classOfParam(core, 'service');
  const routerClass = classOfParam(core, 'edge-router');
  const postureClass = classOfParam(core, 'posture-check');
  return [
    // ---- Management: policies, posture checks, terminators, sessions ----
    ...resourceRoutes(servicePolicies, { cacheable: true }),
    ...resourceRoutes(edgeRouterPolicies, { cacheable: true }),
    ...resourceRoutes(serviceEdgeRouterPolicies, { cacheable: true }),
    ...resourceRoutes(postureChecks, { roleFilter: roleFilter('posture-check') }),
    ...resourceRoutes(postureCheckTypes, { only: ['list', 'get'] }),
    ...resourceRoutes(terminators),
    ...resourceRoutes(sessions, { only: ['list', 'get', 'delete'] }),
    roleAttributeRoute('/posture-check-role-attributes', 'posture-check', 'posture-check'),
    {
      apis: mgmt,
      method: 'GET',
      path: '/sessions/:id/route-path',
      auth: 'session',
      summary: 'The route path of a session (no circuits are tracked: empty)',
      handler: (req) => {
        requirePermission(req.ctx.caller, 'ops', 'read');
        requireRow(core.store, sessions, req.params.id!);
        return { data: { routePath: [] } };
      },
    },

    // ---- Management: who a policy selects ----
    reachRoute(servicePolicies, 'identities', identities, (_r, id) => reach.membersOfPolicy(id, 'identity')),
    reachRoute(servicePolicies, 'services', services, (_r, id) => reach.membersOfPolicy(id, 'service')),
    reachRoute(servicePolicies, 'posture-checks', postureChecks, (_r, id) => reach.membersOfPolicy(id, 'posture-check')),
    reachRoute(edgeRouterPolicies, 'edge-routers', edgeRouters, (_r, id) => reach.membersOfPolicy(id, 'edge-router')),
    reachRoute(edgeRouterPolicies, 'identities', identities, (_r, id) => reach.membersOfPolicy(id, 'identity')),
    reachRoute(serviceEdgeRouterPolicies, 'edge-routers', edgeRouters, (_r, id) => reach.membersOfPolicy(id, 'edge-router')),
    reachRoute(serviceEdgeRouterPolicies, 'services', services, (_r, id) => reach.membersOfPolicy(id, 'service')),

    // ---- Management: what an identity, service, edge router or posture check is linked to ----
    reachRoute(identities, 'service-policies', servicePolicies, (r, id) => reach.policiesOfClass(identityClass(r, id))),
    reachRoute(identities, 'edge-router-policies', edgeRouterPolicies, (r, id) => reach.policiesOfClass(identityClass(r, id))),
    reachRoute(
      identities,
      'services',
      services,
      (r, id) => reach.servicesOfIdentity(identityClass(r, id), policyType(r)),
      (r, id) => withServiceView(r.ctx, { identityId: id, configTypes: configTypes(r) }),
    ),
    reachRoute(identities, 'edge-routers', edgeRouters, (r, id) => reach.routersOfIdentity(identityClass(r, id))),
    reachRoute(services, 'service-policies', servicePolicies, (r, id) => reach.policiesOfClass(serviceClass(r, id))),
    reachRoute(services, 'service-edge-router-policies', serviceEdgeRouterPolicies, (r, id) => reach.policiesOfClass(serviceClass(r, id))),
    reachRoute(services, 'identities', identities, (r, id) => reach.identitiesOfService(serviceClass(r, id), policyType(r))),
    reachRoute(services, 'edge-routers', edgeRouters, (r, id) => reach.routersOfService(serviceClass(r, id))),
    reachRoute(services, 'terminators', terminators, (_r, id) => ({ where: 't.service_id = ?', params: [id] })),
    reachRoute(edgeRouters, 'edge-router-policies', edgeRouterPolicies, (r, id) => reach.policiesOfClass(routerClass(r, id))),
    reachRoute(edgeRouters, 'service-edge-router-policies', serviceEdgeRouterPolicies, (r, id) => reach.policiesOfClass(routerClass(r, id))),
    reachRoute(edgeRouters, 'identities', identities, (r, id) => reach.identitiesOfRouter(routerClass(r, id))),
    reachRoute(edgeRouters, 'services', services, (r, id) => reach.servicesOfRouter(routerClass(r, id))),
    reachRoute(postureChecks, 'service-policies', servicePolicies, (r, id) => reach.policiesOfClass(postureClass(r, id))),

    // ---- Management: analysis, posture data, per-identity service configs ----
    {
      apis: mgmt,
      method: 'GET',
      path: '/identities/:id/policy-advice/:serviceId',
      auth: 'session',
      cacheable: true,
      summary: 'Whether an identity can dial/bind a service, and through which edge routers',
      handler: (req) => {
        const advice = policyAdvice(req.ctx, req.params.id!, req.params.serviceId!);
        // all common routers, as OpenZiti answers (its CLI counts them); `limit` / `offset` page them (a Weft
        // extension), with the total in meta.pagination
        const limit = queryString(req.query.limit);
        const offset = queryString(req.query.offset);
        if (limit === undefined && offset === undefined) return { data: advice };
        const page = pageQuery({ limit, offset }, {});
        return {
          data: { ...advice, commonRouters: advice.commonRouters.slice(page.offset, page.offset + page.limit) },
          meta: { pagination: { limit: page.limit, offset: page.offset, totalCount: advice.commonRouters.length } },
        };
      },
    },
    {
      apis: mgmt,
      method: 'GET',
      path: '/identities/:id/posture-data',
      auth: 'session',
      summary: 'Posture data reported by an identity',
      handler: (req) => ({ data: postureDataView(req.ctx, req.params.id!) }),
    },
    {
      apis: mgmt,
      method: 'GET',
      path: '/identities/:id/failed-service-requests',
      auth: 'session',
      summary: 'Recent session requests of an identity refused for failing posture checks',
      handler: (req) => {
        requirePermission(req.ctx.caller, 'identity', 'read');
        requireRow(core.store, identities, req.params.id!);
        return { data: failedServiceRequests(core.store, req.params.id!) };
      },
    },
    {
      apis: mgmt,
      method: 'GET',
      path: '/identities/:id/service-configs',
      auth: 'session',
      summary: "An identity's service config overrides",
      handler: (req) => ({ data: listServiceConfigOverrides(req.ctx, req.params.id!) }),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/identities/:id/service-configs',
      auth: 'session',
      summary: 'Associate service config overrides with an identity',
      handler: (req) => (associateServiceConfigs(req.ctx, req.params.id!, req.body), {}),
    },
    {
      apis: mgmt,
      method: 'DELETE',
      path: '/identities/:id/service-configs',
      auth: 'session',
      summary: 'Remove service config overrides from an identity (all of them without a body)',
      handler: (req) => (removeServiceConfigs(req.ctx, req.params.id!, req.body), {}),
    },

    // ---- Client API: services, edge routers, sessions, posture ----
    {
      apis: client,
      method: 'GET',
      path: '/services',
      auth: 'session',
      cacheable: true,
      summary: 'The services the current identity may dial or bind',
      handler: (req) => {
        const ctx = req.ctx;
        const identityClass = classFor(core, 'identity', ctx.caller.identityId);
        const { rows, meta } = listReachableServices(ctx, services, identityClass, listParams(req), roleFilter('service')(req));
        return { data: present(withServiceView(ctx, { configTypes: configTypes(req) }), services, rows), meta };
      },
    },
    {
      apis: client,
      method: 'GET',
      path: '/services/:id',
      auth: 'session',
      summary: 'One service the current identity may dial or bind',
      handler: (req) => {
        const { service } = accessibleService(req.ctx, req.params.id!);
        return { data: present(withServiceView(req.ctx, { configTypes: configTypes(req) }), services, [service])[0] };
      },
    },
    ...resourceRoutes(services, { apis: client, only: ['update', 'patch', 'delete'] }),
    {
      apis: client,
      method: 'GET',
      path: '/services/:id/edge-routers',
      auth: 'session',
      summary: 'Edge routers the current identity may use for a service (optional session-token header)',
      handler: (req) => {
        checkSessionTokenHeader(req.ctx, queryString(req.headers['session-token'] as string | string[] | undefined));
        const { identityClass, serviceClass } = accessibleService(req.ctx, req.params.id!);
        return { data: { edgeRouters: commonRouters(core.store, identityClass, serviceClass).map(edgeRouterView) } };
      },
    },
    {
      apis: client,
      method: 'GET',
      path: '/services/:id/terminators',
      auth: 'session',
      summary: 'Terminators of a service the current identity may use',
      handler: (req) => {
        accessibleService(req.ctx, req.params.id!);
        const { rows, meta } = listRows(req.ctx, terminators, listParams(req), { where: 't.service_id = ?', params: [req.params.id!] });
        return { data: present(req.ctx, terminators, rows), meta };
      },
    },
    {
      apis: client,
      method: 'GET',
      path: '/current-api-session/service-updates',
      auth: 'session',
      summary: "When the current identity's services last changed",
      handler: (req) => ({ data: { lastChangeAt: lastServiceChange(core.store, req.session!) } }),
    },
    {
      apis: client,
      method: 'GET',
      path: '/current-identity/edge-routers',
      auth: 'session',
      summary: 'Edge routers the current identity may use',
      handler: (req) => {
        const extra = reach.routersOfIdentity(classFor(core, 'identity', req.ctx.caller.identityId));
        const { rows, meta } = listRows(req.ctx, edgeRouters, listParams(req), extra);
        const data = rows.map((r) => ({
          _links: { self: { href: `./edge-routers/${r.id}` } },
          id: r.id,
          createdAt: r.created_at,
          updatedAt: r.updated_at,
          tags: JSON.parse(r.tags as string),
          ...edgeRouterView(r),
        }));
        return { data, meta };
      },
    },
    {
      apis: client,
      method: 'POST',
      path: '/sessions',
      auth: 'session',
      summary: 'Create a Dial or Bind session for a service',
      handler: (req) => {
        const id = createSession(req.ctx, req.session!, req.body);
        return { status: 201, data: clientSessionView(req.ctx, [requireRow(core.store, sessions, id)])[0] };
      },
    },
    {
      apis: client,
      method: 'GET',
      path: '/sessions',
      auth: 'session',
      summary: "The current identity's sessions",
      handler: (req) => {
        const { rows, meta } = listRows(req.ctx, sessions, listParams(req), { where: 't.identity_id = ?', params: [req.ctx.caller.identityId] });
        return { data: clientSessionView(req.ctx, rows), meta };
      },
    },
    {
      apis: client,
      method: 'GET',
      path: '/sessions/:id',
      auth: 'session',
      summary: "One of the current identity's sessions",
      handler: (req) => ({ data: clientSessionView(req.ctx, [ownSession(req)])[0] }),
    },
    {
      apis: client,
      method: 'DELETE',
      path: '/sessions/:id',
      auth: 'session',
      summary: "Delete one of the current identity's sessions",
      handler: (req) => (core.store.runSql('DELETE FROM sessions WHERE id = ?', ownSession(req).id), {}),
    },
    {
      apis: client,
      method: 'POST',
      path: '/posture-response',
      auth: 'session',
      summary: 'Submit a posture response',
      handler: (req) => ({ status: 201, data: { services: submitPostureResponses(req.ctx, req.session!, parsePostureResponses(req.body, false)) } }),
    },
    {
      apis: client,
      method: 'POST',
      path: '/posture-response-bulk',
      auth: 'session',
      summary: 'Submit several posture responses',
      handler: (req) => ({ data: { services: submitPostureResponses(req.ctx, req.session!, parsePostureResponses(req.body, true)) } }),
    },
  ];
}
