import { z } from 'zod';
import { PERMISSIONS } from '../auth/permissions';
import type { Ctx } from '../context';
import { conflict, validationError } from '../errors';
import { scalar } from '../query/fields';
import { roleAttributesField } from '../query/roleFields';
import type { Row } from '../store/db';
import { decorateMfaEnabled } from '../auth/mfa';
import { createIdentityEnrollments, decorateIdentityEnrollments } from '../enrollment/records';
import { identityWritten } from '../policy/entityHooks';
import { DEFAULT_AUTH_POLICY_ID } from './authPolicies';
import { attributesSchema, costSchema, nameSchema, nullableTags, patchOf, precedenceSchema, tagsSchema } from './common';
import type { ApiObject, ResourceDef } from './resource';

export const IDENTITY_TYPES = ['User', 'Device', 'Service', 'Router', 'Default'] as const;

const permissionsSchema = z.array(z.enum(PERMISSIONS as [string, ...string[]])).nullable();
const optional = {
  appData: nullableTags.optional(),
  authPolicyId: z.string().nullable().optional(),
  defaultHostingCost: costSchema.optional(),
  defaultHostingPrecedence: precedenceSchema.optional(),
  externalId: z.string().nullable().optional(),
  permissions: permissionsSchema.optional(),
  roleAttributes: attributesSchema.optional(),
  serviceHostingCosts: z.record(z.string(), costSchema).nullable().optional(),
  serviceHostingPrecedences: z.record(z.string(), precedenceSchema).nullable().optional(),
  tags: nullableTags.optional(),
};
const required = { name: nameSchema, type: z.enum(IDENTITY_TYPES), isAdmin: z.boolean() };
export const enrollmentRequestSchema = z.object({
  ott: z.boolean().optional(),
  ottca: z.string().optional(),
  updb: z.string().optional(),
});

/** PUT resets every optional field to its zero value, as OpenZiti does. */
const putDefaults = {
  appData: nullableTags.default({}),
  authPolicyId: z.string().nullable().default(null),
  defaultHostingCost: costSchema.default(0),
  defaultHostingPrecedence: precedenceSchema.default('default'),
  externalId: z.string().nullable().default(null),
  permissions: permissionsSchema.default([]),
  roleAttributes: attributesSchema.default([]),
  serviceHostingCosts: z.record(z.string(), costSchema).nullable().default({}),
  serviceHostingPrecedences: z.record(z.string(), precedenceSchema).nullable().default({}),
  tags: nullableTags.default({}),
};

/** Effective disabled state: a timed disable lapses by itself. */
export function isDisabled(row: Row, now: Date): boolean {
  if (!row.disabled) return false;
  return !row.disabled_until || (row.disabled_until as string) > now.toISOString();
}

export const identities: ResourceDef = {
  entity: 'identities',
  table: 'identities',
  permission: 'identity',
  roleAttributesType: 'identity',
  columns: {
    name: { column: 'name', codec: 'string' },
    typeId: { column: 'type_id', codec: 'string', write: false },
    isAdmin: { column: 'is_admin', codec: 'bool' },
    isDefaultAdmin: { column: 'is_default_admin', codec: 'bool', write: false },
    authPolicyId: { column: 'auth_policy_id', codec: 'string' },
    externalId: { column: 'external_id', codec: 'string' },
    appData: { column: 'app_data', codec: 'json' },
    defaultHostingCost: { column: 'default_hosting_cost', codec: 'int' },
    defaultHostingPrecedence: { column: 'default_hosting_precedence', codec: 'string' },
    serviceHostingCosts: { column: 'service_hosting_costs', codec: 'json' },
    serviceHostingPrecedences: { column: 'service_hosting_precedences', codec: 'json' },
    permissions: { column: 'permissions', codec: 'json' },
    roleAttributes: { column: 'role_attributes', codec: 'json' },
    disabled: { column: 'disabled', codec: 'bool', write: false },
    disabledAt: { column: 'disabled_at', codec: 'datetime', write: false },
    disabledUntil: { column: 'disabled_until', codec: 'datetime', write: false },
    envInfo: { column: 'env_info', codec: 'json', write: false },
    sdkInfo: { column: 'sdk_info', codec: 'json', write: false },
    interfaces: { column: 'interfaces', codec: 'json', write: false },
  },
  refs: {
    type: { column: 'type_id', entity: 'identity-types', table: 'identity_types' },
    authPolicy: { column: 'auth_policy_id', entity: 'auth-policies', table: 'auth_policies' },
  },
  fields: {
    name: scalar('string', 't.name'),
    type: scalar('string', 't.type_id'),
    typeId: scalar('string', 't.type_id'),
    isAdmin: scalar('boolean', 't.is_admin'),
    isDefaultAdmin: scalar('boolean', 't.is_default_admin'),
    authPolicyId: scalar('string', 't.auth_policy_id'),
    externalId: scalar('string', 't.external_id'),
    disabled: scalar('boolean', 't.disabled'),
    defaultHostingCost: scalar('number', 't.default_hosting_cost'),
    defaultHostingPrecedence: scalar('string', 't.default_hosting_precedence'),
    roleAttributes: roleAttributesField('identity'),
  },
  defaultSort: 't.name ASC',
  schemas: {
    create: z.object({ ...required, ...optional, enrollment: enrollmentRequestSchema.optional() }),
    update: z.object({ ...required, ...putDefaults }),
    patch: patchOf({
      ...required,
      appData: tagsSchema,
      authPolicyId: z.string(),
      defaultHostingCost: costSchema,
      defaultHostingPrecedence: precedenceSchema,
      externalId: z.string(),
      permissions: z.array(z.enum(PERMISSIONS as [string, ...string[]])),
      roleAttributes: z.array(z.string()),
      serviceHostingCosts: z.record(z.string(), costSchema),
      serviceHostingPrecedences: z.record(z.string(), precedenceSchema),
      tags: tagsSchema,
    }),
  },
  links: (row) => ({
    'auth-policies': `auth-policies/${row.auth_policy_id}`,
    authenticators: `identities/${row.id}/authenticators`,
    enrollments: `identities/${row.id}/enrollments`,
    'edge-router-policies': `identities/${row.id}/edge-router-policies`,
    'edge-routers': `identities/${row.id}/edge-routers`,
    'service-policies': `identities/${row.id}/service-policies`,
    services: `identities/${row.id}/services`,
    'posture-data': `identities/${row.id}/posture-data`,
    'failed-service-requests': `identities/${row.id}/failed-service-requests`,
    type: `identity-types/${row.type_id}`,
  }),
  beforeWrite(op, input, existing, ctx) {
    const extra: Record<string, unknown> = {};
    if (op === 'patch') {
      // PATCH: null means "reset" for nullable fields and "leave" for required ones
      for (const k of ['name', 'type', 'isAdmin', 'defaultHostingCost', 'defaultHostingPrecedence'] as const) if (input[k] === null) delete input[k];
      for (const k of ['appData', 'serviceHostingCosts', 'serviceHostingPrecedences', 'tags'] as const) if (input[k] === null) input[k] = {};
      for (const k of ['permissions', 'roleAttributes'] as const) if (input[k] === null) input[k] = [];
    } else {
      for (const k of ['appData', 'serviceHostingCosts', 'serviceHostingPrecedences'] as const) if (input[k] === null) input[k] = {};
      for (const k of ['permissions', 'roleAttributes'] as const) if (input[k] === null) input[k] = [];
    }
    if (input.type !== undefined) extra.type_id = input.type;
    if (input.authPolicyId === null || (op !== 'patch' && input.authPolicyId === undefined)) input.authPolicyId = DEFAULT_AUTH_POLICY_ID;
    if (input.authPolicyId !== undefined && !ctx.core.store.getSql('SELECT 1 FROM auth_policies WHERE id = ?', input.authPolicyId)) {
      throw validationError('authPolicyId', 'auth policy not found', input.authPolicyId);
    }
    if (existing?.is_default_admin) {
      if (input.isAdmin === false) throw validationError('isAdmin', 'the default admin must remain an admin', false);
      if (input.type !== undefined && input.type !== existing.type_id)
        throw validationError('type', 'the default admin type cannot be changed', input.type);
    }
    return extra;
  },
  afterWrite(op, id, input, _existing, ctx) {
    // enrollments requested with the identity are created in its transaction
    if (op === 'create') createIdentityEnrollments(ctx, id, input.enrollment);
    identityWritten(ctx.core, id, op, input);
  },
  beforeDelete(row) {
    if (row.is_default_admin) throw conflict('ENTITY_CAN_NOT_BE_DELETED', 'the default admin identity cannot be deleted');
  },
  decorate(items, rows, ctx) {
    decorateIdentities(ctx, items, rows);
  },
};

function decorateIdentities(ctx: Ctx, items: ApiObject[], rows: Row[]): void {
  const store = ctx.core.store;
  const ids = JSON.stringify(rows.map((r) => r.id));
  const auths = store.allSql<Row>(
    'SELECT id, identity_id, method, username, fingerprint FROM authenticators WHERE identity_id IN (SELECT value FROM json_each(?))',
    ids,
  );
  const sessions = new Set(
    store
      .allSql<{ identity_id: string }>('SELECT DISTINCT identity_id FROM api_sessions WHERE identity_id IN (SELECT value FROM json_each(?))', ids)
      .map((r) => r.identity_id),
  );
  const now = ctx.core.clock.now();
  items.forEach((item, i) => {
    const row = rows[i]!;
    const authenticators: Record<string, unknown> = {};
    for (const a of auths.filter((x) => x.identity_id === row.id)) {
      if (a.method === 'updb') authenticators.updb = { id: a.id, username: a.username };
      if (a.method === 'cert') authenticators.cert = { id: a.id, fingerprint: a.fingerprint };
    }
    item.authenticators = authenticators;
    item.hasApiSession = sessions.has(row.id as string);
    item.disabled = isDisabled(row, now);
    if (!item.disabled) {
      item.disabledAt = null;
      item.disabledUntil = null;
    }
    item.enrollment = {};
    item.isMfaEnabled = false;
    item.hasEdgeRouterConnection = false;
    item.edgeRouterConnectionStatus = 'offline';
  });
  decorateIdentityEnrollments(ctx, items, rows);
  decorateMfaEnabled(ctx, items, rows);
}
