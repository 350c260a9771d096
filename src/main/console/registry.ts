import { apiSessions } from '../core/auth/apiSessions';
import { authPolicies } from '../core/entities/authPolicies';
import { authenticators } from '../core/entities/authenticators';
import { cas } from '../core/entities/cas';
import { configTypes } from '../core/entities/configTypes';
import { configs } from '../core/entities/configs';
import { controllerSettings } from '../core/entities/controllerSettings';
import { controllers } from '../core/entities/controllers';
import { edgeRouterPolicies } from '../core/entities/edgeRouterPolicies';
import { edgeRouters } from '../core/entities/edgeRouters';
import { enrollments } from '../core/entities/enrollments';
import { externalJwtSigners } from '../core/entities/externalJwtSigners';
import { identities } from '../core/entities/identities';
import { identityTypes } from '../core/entities/identityTypes';
import { postureCheckTypes, postureChecks } from '../core/entities/postureChecks';
import { routers } from '../core/entities/routers';
import { serviceEdgeRouterPolicies } from '../core/entities/serviceEdgeRouterPolicies';
import { servicePolicies } from '../core/entities/servicePolicies';
import { services } from '../core/entities/services';
import { sessions } from '../core/entities/sessions';
import { terminators } from '../core/entities/terminators';
import { auditLog } from '../core/ops/audit';
import type { ConsoleResource } from './resources';

/**
 * Every resource type the console's generic table and form reach (`resources.*` procedures). A new page over a
 * core resource needs one line here and a page spec in the renderer.
 */
export const CONSOLE_RESOURCES = {
  // foundation
  identities: { def: identities, roleKind: 'identity' },
  'identity-types': { def: identityTypes, ops: [] },
  'auth-policies': { def: authPolicies },
  authenticators: { def: authenticators, ops: ['delete'] },
  'config-types': { def: configTypes },
  configs: { def: configs },
  services: { def: services, roleKind: 'service' },
  'edge-routers': { def: edgeRouters, roleKind: 'edge-router' },
  'api-sessions': { def: apiSessions, ops: ['delete'], redact: ['token'] },
  controllers: { def: controllers, ops: [] },
  // enrollment
  cas: { def: cas },
  enrollments: { def: enrollments, ops: ['create', 'delete'] },
  routers: { def: routers },
  // policy
  'service-policies': { def: servicePolicies },
  'edge-router-policies': { def: edgeRouterPolicies },
  'service-edge-router-policies': { def: serviceEdgeRouterPolicies },
  'posture-checks': { def: postureChecks, roleKind: 'posture-check' },
  'posture-check-types': { def: postureCheckTypes, ops: [] },
  terminators: { def: terminators },
  // the session token is a credential for dialing: never sent to the browser
  sessions: { def: sessions, ops: ['delete'], redact: ['token'] },
  // security
  'external-jwt-signers': { def: externalJwtSigners },
  'controller-settings': { def: controllerSettings },
  // operations: read-only
  'audit-log': { def: auditLog, ops: [] },
} satisfies Record<string, ConsoleResource>;

export type ConsoleResourceName = keyof typeof CONSOLE_RESOURCES;
