import type { Core } from '../../core/context';
import {
  listOpen,
  resourceOps,
  listAssociation,
  listKindRoleAttributes,
  registeredTypes,
  summary,
  type RegistryEntry,
  controllers,
} from '../../core/registry';
import { listCertificates } from '../../core/ops/index';
import { policyTestResults, ROLE_KIND_NAMES, runPolicyTests } from '../../core/policy/index';
import type { ApiName, RouteDef } from '../registry';
import { listParams, resourceRoutes } from './resources';

const mgmt: ApiName[] = ['management'];

/** The generic routes of one registered type at one of its paths: CRUD on each API, then its association listings. */
export function typeRoutes(path: string, entry: RegistryEntry): RouteDef[] {
  const def = path === entry.def.entity ? entry.def : { ...entry.def, entity: path };
  const rest = entry.rest ?? {};
  return [
    ...(rest.management === false ? [] : resourceRoutes(def, { cacheable: rest.cacheable, only: rest.management })),
    ...(rest.client ? resourceRoutes(def, { cacheable: rest.cacheable, apis: ['client'], only: rest.client }) : []),
    ...Object.keys(def.associations ?? {}).map((name): RouteDef => ({
      apis: mgmt,
      method: 'GET',
      path: `/${path}/:id/${name}`,
      auth: 'session',
      summary: `List ${name} of one of ${path}`,
      handler: (req) => listAssociation(req.ctx, def, name, req.params.id!, listParams(req), req.query),
    })),
  ];
}

/** Everything the registry declares (core/registry.ts), plus role attribute listings, /summary and /controllers. */
export function managementRoutes(_core: Core): RouteDef[] {
  return [
    ...registeredTypes().flatMap(({ paths, entry }) => paths.flatMap((path) => typeRoutes(path, entry))),
    ...ROLE_KIND_NAMES.map((kind): RouteDef => ({
      apis: mgmt,
      method: 'GET',
      path: `/${kind}-role-attributes`,
      auth: 'session',
      summary: `Role attributes in use by ${kind} entities`,
      handler: (req) => listKindRoleAttributes(req.ctx, kind, listParams(req)),
    })),
    {
      apis: mgmt,
      method: 'GET',
      path: '/summary',
      auth: 'session',
      summary: 'Resource counts',
      handler: async (req) => ({ data: await summary(req.ctx) }),
    },
    {
      apis: ['client', 'management'],
      method: 'GET',
      path: '/controllers',
      auth: 'session',
      summary: 'The controllers of this network',
      handler: (req) => listOpen(req.ctx, controllers, listParams(req)),
    },
    {
      // not in OpenZiti's specs, but every controller's self link points here
      apis: ['client', 'management'],
      method: 'GET',
      path: '/controllers/:id',
      auth: 'session',
      summary: 'One controller of this network',
      handler: async (req) => ({ data: await resourceOps(controllers).get(req.ctx, req.params.id!) }),
    },
    {
      // Weft's own (not in OpenZiti's specs): every certificate it issued or trusts, with expiry and renewal
      apis: mgmt,
      method: 'GET',
      path: '/weft/certificates',
      auth: 'session',
      summary: 'Every certificate Weft issued or trusts, soonest expiry first, with its renewal and warning state',
      handler: async (req) => ({ data: await listCertificates(req.ctx) }),
    },
    // Weft's own: the report of the saved policy tests (their CRUD is the registry's), and a run on demand
    {
      apis: mgmt,
      method: 'GET',
      path: '/weft/policy-test-results',
      auth: 'session',
      summary: 'The latest result of every policy test (after the runs the changes committed so far asked for)',
      handler: async (req) => ({ data: await policyTestResults(req.ctx) }),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/weft/policy-tests/run',
      auth: 'session',
      summary: 'Run every policy test now and return the results',
      handler: async (req) => ({ data: await runPolicyTests(req.ctx) }),
    },
  ];
}
