import { authenticatePassword, apiSessionsOf } from '../../core/auth/index';
import type { Core } from '../../core/context';
import { ApiError } from '../../core/errors';
import { getCurrentIdentity, getOwnAuthenticator, listOwnAuthenticators, updateOwnAuthenticator } from '../../core/policy/index';
import { queryString, type ApiName, type ApiRequest, type RouteDef } from '../registry';
import { listParams } from './resources';

const both: ApiName[] = ['client', 'management'];

/** Authentication methods are pluggable: cert and ext-jwt arrive with their modules. */
export type Authenticator = (core: Core, req: ApiRequest) => Promise<Record<string, unknown>>;

export function sessionRoutes(core: Core, methods: Record<string, Authenticator>): RouteDef[] {
  return [
    {
      apis: both,
      method: 'POST',
      path: '/authenticate',
      auth: 'none',
      summary: 'Authenticate (method=password|cert|ext-jwt); returns an API session',
      handler: async (req) => {
        const method = queryString(req.query.method);
        const fn = method ? methods[method] : undefined;
        if (!fn) {
          throw new ApiError('COULD_NOT_VALIDATE', 400, 'The supplied request contains an invalid document', {
            field: 'method',
            reason: `must be one of ${Object.keys(methods).join(', ')}`,
            value: method,
          });
        }
        return { data: await fn(core, req) };
      },
    },
    {
      apis: both,
      method: 'GET',
      path: '/current-api-session',
      auth: 'partial',
      summary: 'The current API session',
      handler: async (req) => ({ data: await apiSessionsOf(core).view(req.ctx, req.session!) }),
    },
    {
      apis: both,
      method: 'DELETE',
      path: '/current-api-session',
      auth: 'partial',
      summary: 'Log out',
      handler: async (req) => (await apiSessionsOf(core).remove(req.session!.id), {}),
    },
    {
      apis: both,
      method: 'GET',
      path: '/current-identity',
      auth: 'session',
      summary: 'The identity of the current API session',
      handler: async (req) => ({ data: await getCurrentIdentity(req.ctx) }),
    },
    {
      apis: both,
      method: 'GET',
      path: '/current-identity/authenticators',
      auth: 'session',
      summary: "The current identity's authenticators",
      handler: (req) => listOwnAuthenticators(req.ctx, listParams(req)),
    },
    {
      apis: both,
      method: 'GET',
      path: '/current-identity/authenticators/:id',
      auth: 'session',
      summary: "One of the current identity's authenticators",
      handler: async (req) => ({ data: await getOwnAuthenticator(req.ctx, req.params.id!) }),
    },
    ...(['PUT', 'PATCH'] as const).map((method): RouteDef => ({
      apis: both,
      method,
      path: '/current-identity/authenticators/:id',
      auth: 'session',
      summary: `${method === 'PUT' ? 'Update' : 'Patch'} one of the current identity's authenticators (requires currentPassword)`,
      handler: async (req) => (await updateOwnAuthenticator(req.ctx, req.params.id!, req.body, method === 'PUT' ? 'update' : 'patch'), {}),
    })),
  ];
}

export const passwordMethod: Authenticator = (core, req) => authenticatePassword(core, req.body, { ipAddress: req.ip });
