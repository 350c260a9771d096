import type { Core } from '../../core/context';
import {
  callerServiceEdgeRouters,
  createCallerSession,
  deleteCallerSession,
  getCallerService,
  getCallerSession,
  identityFailedServiceRequests,
  listCallerEdgeRouters,
  listCallerServices,
  listCallerServiceTerminators,
  listCallerSessions,
  pagedPolicyAdvice,
  sessionRoutePath,
  lastServiceChange,
  parsePostureResponses,
  postureDataView,
  submitPostureResponses,
  associateServiceConfigs,
  listServiceConfigOverrides,
  removeServiceConfigs,
  configTypesOf,
} from '../../core/policy/index';
import { listParams } from './resources';
import { queryString, type ApiName, type RouteDef } from '../registry';

const mgmt: ApiName[] = ['management'];
const client: ApiName[] = ['client'];

export function policyRoutes(core: Core): RouteDef[] {
  return [
    // ---- Management: sessions, analysis, posture data, per-identity service configs ----
    {
      apis: mgmt,
      method: 'GET',
      path: '/sessions/:id/route-path',
      auth: 'session',
      summary: 'The route path of a session (no circuits are tracked: empty)',
      handler: async (req) => ({ data: await sessionRoutePath(req.ctx, req.params.id!) }),
    },

    {
      apis: mgmt,
      method: 'GET',
      path: '/identities/:id/policy-advice/:serviceId',
      auth: 'session',
      cacheable: true,
      summary: 'Whether an identity can dial/bind a service, and through which edge routers',
      handler: (req) =>
        pagedPolicyAdvice(req.ctx, req.params.id!, req.params.serviceId!, {
          limit: queryString(req.query.limit),
          offset: queryString(req.query.offset),
        }),
    },
    {
      apis: mgmt,
      method: 'GET',
      path: '/identities/:id/posture-data',
      auth: 'session',
      summary: 'Posture data reported by an identity',
      handler: async (req) => ({ data: await postureDataView(req.ctx, req.params.id!) }),
    },
    {
      apis: mgmt,
      method: 'GET',
      path: '/identities/:id/failed-service-requests',
      auth: 'session',
      summary: 'Recent session requests of an identity refused for failing posture checks',
      handler: async (req) => ({ data: await identityFailedServiceRequests(req.ctx, req.params.id!) }),
    },
    {
      apis: mgmt,
      method: 'GET',
      path: '/identities/:id/service-configs',
      auth: 'session',
      summary: "An identity's service config overrides",
      handler: async (req) => ({ data: await listServiceConfigOverrides(req.ctx, req.params.id!) }),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/identities/:id/service-configs',
      auth: 'session',
      summary: 'Associate service config overrides with an identity',
      handler: async (req) => (await associateServiceConfigs(req.ctx, req.params.id!, req.body), {}),
    },
    {
      apis: mgmt,
      method: 'DELETE',
      path: '/identities/:id/service-configs',
      auth: 'session',
      summary: 'Remove service config overrides from an identity (all of them without a body)',
      handler: async (req) => (await removeServiceConfigs(req.ctx, req.params.id!, req.body), {}),
    },

    // ---- Client API: services, edge routers, sessions, posture ----
    {
      apis: client,
      method: 'GET',
      path: '/services',
      auth: 'session',
      cacheable: true,
      summary: 'The services the current identity may dial or bind',
      handler: (req) => listCallerServices(req.ctx, listParams(req), configTypesOf(req.query)),
    },
    {
      apis: client,
      method: 'GET',
      path: '/services/:id',
      auth: 'session',
      summary: 'One service the current identity may dial or bind',
      handler: async (req) => ({ data: await getCallerService(req.ctx, req.params.id!, configTypesOf(req.query)) }),
    },
    {
      apis: client,
      method: 'GET',
      path: '/services/:id/edge-routers',
      auth: 'session',
      summary: 'Edge routers the current identity may use for a service (optional session-token header)',
      handler: async (req) => ({ data: await callerServiceEdgeRouters(req.ctx, req.params.id!, queryString(req.headers['session-token'])) }),
    },
    {
      apis: client,
      method: 'GET',
      path: '/services/:id/terminators',
      auth: 'session',
      summary: 'Terminators of a service the current identity may use',
      handler: (req) => listCallerServiceTerminators(req.ctx, req.params.id!, listParams(req)),
    },
    {
      apis: client,
      method: 'GET',
      path: '/current-api-session/service-updates',
      auth: 'session',
      summary: "When the current identity's services last changed",
      handler: async (req) => ({ data: { lastChangeAt: await lastServiceChange(core.store, req.session!) } }),
    },
    {
      apis: client,
      method: 'GET',
      path: '/current-identity/edge-routers',
      auth: 'session',
      summary: 'Edge routers the current identity may use',
      handler: (req) => listCallerEdgeRouters(req.ctx, listParams(req)),
    },
    {
      apis: client,
      method: 'POST',
      path: '/sessions',
      auth: 'session',
      summary: 'Create a Dial or Bind session for a service',
      handler: async (req) => ({ status: 201, data: await createCallerSession(req.ctx, req.session!, req.body) }),
    },
    {
      apis: client,
      method: 'GET',
      path: '/sessions',
      auth: 'session',
      summary: "The current identity's sessions",
      handler: (req) => listCallerSessions(req.ctx, listParams(req)),
    },
    {
      apis: client,
      method: 'GET',
      path: '/sessions/:id',
      auth: 'session',
      summary: "One of the current identity's sessions",
      handler: async (req) => ({ data: await getCallerSession(req.ctx, req.params.id!) }),
    },
    {
      apis: client,
      method: 'DELETE',
      path: '/sessions/:id',
      auth: 'session',
      summary: "Delete one of the current identity's sessions",
      handler: async (req) => (await deleteCallerSession(req.ctx, req.params.id!), {}),
    },
    {
      apis: client,
      method: 'POST',
      path: '/posture-response',
      auth: 'session',
      summary: 'Submit a posture response',
      handler: async (req) => ({
        status: 201,
        data: { services: await submitPostureResponses(req.ctx, req.session!, parsePostureResponses(req.body, false)) },
      }),
    },
    {
      apis: client,
      method: 'POST',
      path: '/posture-response-bulk',
      auth: 'session',
      summary: 'Submit several posture responses',
      handler: async (req) => ({ data: { services: await submitPostureResponses(req.ctx, req.session!, parsePostureResponses(req.body, true)) } }),
    },
  ];
}
