import type { Core } from '../../core/core';
import { apiSessions } from '../../core/auth/apiSessions';
import { authPolicies } from '../../core/entities/authPolicies';
import { authenticators } from '../../core/entities/authenticators';
import { configTypes } from '../../core/entities/configTypes';
import { configs } from '../../core/entities/configs';
import { controllers } from '../../core/entities/controllers';
import { identities } from '../../core/entities/identities';
import { identityTypes } from '../../core/entities/identityTypes';
import { revocations } from '../../core/entities/revocations';
import { auditLog } from '../../core/ops/audit';
import { listRelated, listRoleAttributes, summary } from '../../core/entities/listings';
import { listRows, present, resourceOps, type ResourceDef } from '../../core/entities/resource';
import type { PermissionGroup } from '../../core/auth/permissions';
import { services } from '../../core/entities/services';
import { edgeRouters } from '../../core/entities/edgeRouters';
import { roleFilterSql } from '../../core/policy/roles';
import { queryList, queryString, type ApiName, type ApiRequest, type RouteDef } from '../registry';
import { listParams, resourceRoutes } from './resources';

const mgmt: ApiName[] = ['management'];

/** `/parent/:id/<name>` listing `child` rows selected by an SQL condition on the parent id. */
export function relatedRoute(parent: ResourceDef, name: string, child: ResourceDef, where: string, apis: ApiName[] = mgmt): RouteDef {
  return {
    apis,
    method: 'GET',
    path: `/${parent.entity}/:id/${name}`,
    auth: 'session',
    summary: `List ${name} of one of ${parent.entity}`,
    handler: (req) => listRelated(req.ctx, parent, req.params.id!, child, listParams(req), { where, params: [req.params.id!] }),
  };
}

export function roleAttributeRoute(path: string, entityType: string, permission: PermissionGroup): RouteDef {
  return {
    apis: mgmt,
    method: 'GET',
    path,
    auth: 'session',
    summary: `Role attributes in use by ${entityType} entities`,
    handler: (req) => listRoleAttributes(req.ctx, entityType, permission, listParams(req)),
  };
}

/** roleFilter/roleSemantic for lists of an entity kind with role attributes. */
export const roleFilter = (entityType: string) => (req: ApiRequest) =>
  roleFilterSql(entityType, queryList(req.query.roleFilter), queryString(req.query.roleSemantic));

export function managementRoutes(_core: Core): RouteDef[] {
  return [
    ...resourceRoutes(identities, { roleFilter: roleFilter('identity'), cacheable: true }),
    ...resourceRoutes(identityTypes, { only: ['list', 'get'], cacheable: true }),
    ...resourceRoutes(authPolicies, { cacheable: true }),
    ...resourceRoutes(authenticators),
    ...resourceRoutes(configTypes, { cacheable: true }),
    ...resourceRoutes(configs, { cacheable: true }),
    ...resourceRoutes(services, { roleFilter: roleFilter('service'), cacheable: true }),
    ...resourceRoutes(apiSessions, { only: ['list', 'get', 'delete'] }),
    ...resourceRoutes(edgeRouters, { roleFilter: roleFilter('edge-router'), cacheable: true }),
    ...resourceRoutes(revocations, { only: ['list', 'get', 'create'] }),
    // Weft extension (not in OpenZiti's spec): read-only, administrators and ops readers
    ...resourceRoutes(auditLog, { only: ['list', 'get'] }),
    relatedRoute(identities, 'authenticators', authenticators, 't.identity_id = ?'),
    relatedRoute(configTypes, 'configs', configs, 't.config_type_id = ?'),
    relatedRoute(configs, 'services', services, 't.id IN (SELECT service_id FROM service_configs WHERE config_id = ?)'),
    relatedRoute(services, 'configs', configs, 't.id IN (SELECT config_id FROM service_configs WHERE service_id = ?)'),
    roleAttributeRoute('/identity-role-attributes', 'identity', 'identity'),
    roleAttributeRoute('/service-role-attributes', 'service', 'service'),
    roleAttributeRoute('/edge-router-role-attributes', 'edge-router', 'router'),
    { apis: mgmt, method: 'GET', path: '/summary', auth: 'session', summary: 'Resource counts', handler: (req) => ({ data: summary(req.ctx) }) },
    {
      apis: ['client', 'management'],
      method: 'GET',
      path: '/controllers',
      auth: 'session',
      summary: 'The controllers of this network',
      handler: (req) => {
        const { rows, meta } = listRows(req.ctx, controllers, listParams(req));
        return { data: present(req.ctx, controllers, rows), meta };
      },
    },
    {
      // not in OpenZiti's specs, but every controller's self link points here
      apis: ['client', 'management'],
      method: 'GET',
      path: '/controllers/:id',
      auth: 'session',
      summary: 'One controller of this network',
      handler: (req) => ({ data: resourceOps(controllers).get(req.ctx, req.params.id!) }),
    },
  ];
}
