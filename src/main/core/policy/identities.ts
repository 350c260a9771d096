import { z } from 'zod';
import { PERMISSIONS } from '../permissions';
import type { Ctx } from '../context';
import { conflict, validationError } from '../errors';
import type { Row } from '../store/db';
import { allRows, decodeRow, rowShape } from '../store/rows';
import { isDisabled, decorateMfaEnabled } from '../auth/index';
import { DEFAULT_AUTH_POLICY_ID } from '../entities/authPolicies';
import { costSchema, nameSchema, precedenceSchema, tagsSchema } from '../entities/common';
import { defineResource } from '../entities/define';
import { namesById, ref, related, type ApiObject } from '../entities/resource';
import { policiesNaming, reach, reachedFrom } from './access';
import { configTypesOf, withServiceView } from './serviceView';

export const IDENTITY_TYPES = ['User', 'Device', 'Service', 'Router', 'Default'] as const;

const permissionsSchema = z.array(z.enum(PERMISSIONS as [string, ...string[]]));
export const enrollmentRequestSchema = z.object({
  ott: z.boolean().optional(),
  ottca: z.string().optional(),
  updb: z.string().optional(),
});

export const identities = defineResource({
  entity: 'identities',
  table: 'identities',
  permission: 'identity',
  roleKind: 'identity',
  fields: {
    name: { codec: 'string', schema: nameSchema, required: true, filter: true },
    // written as `type`, shown as `typeId` and the `type` ref
    type: { codec: 'string', column: 'type_id', schema: z.enum(IDENTITY_TYPES), required: true, shown: false, filter: true },
    typeId: { codec: 'string', filter: true },
    isAdmin: { codec: 'bool', schema: z.boolean(), required: true, filter: true },
    isDefaultAdmin: { codec: 'bool', filter: true },
    // null (or omitted in a PUT) is the default auth policy: see beforeWrite
    authPolicyId: { codec: 'string', schema: z.string(), nullable: true, zero: null, filter: true },
    externalId: { codec: 'string', schema: z.string(), nullable: true, zero: null, filter: true },
    appData: { codec: 'json', schema: tagsSchema, nullable: true, zero: {} },
    defaultHostingCost: { codec: 'int', schema: costSchema, zero: 0, filter: true },
    defaultHostingPrecedence: { codec: 'string', schema: precedenceSchema, zero: 'default', filter: true },
    serviceHostingCosts: { codec: 'json', schema: z.record(z.string(), costSchema), nullable: true, zero: {} },
    serviceHostingPrecedences: { codec: 'json', schema: z.record(z.string(), precedenceSchema), nullable: true, zero: {} },
    permissions: { codec: 'json', schema: permissionsSchema, nullable: true, zero: [] },
    disabled: { codec: 'bool', filter: true },
    disabledAt: { codec: 'datetime' },
    disabledUntil: { codec: 'datetime' },
    envInfo: { codec: 'json' },
    sdkInfo: { codec: 'json' },
    interfaces: { codec: 'json' },
    // enrollments requested with the identity (created in its transaction: enrollment/onWrite.ts)
    enrollment: { codec: 'json', column: false, schema: enrollmentRequestSchema, createOnly: true },
  },
  refs: {
    type: { column: 'type_id', entity: 'identity-types', table: 'identity_types' },
    authPolicy: { column: 'auth_policy_id', entity: 'auth-policies', table: 'auth_policies' },
  },
  defaultSort: 't.name ASC',
  associations: {
    authenticators: related('authenticators', 't.identity_id = ?'),
    enrollments: related('enrollments', 't.identity_id = ?'),
    'edge-router-policies': policiesNaming('identity', 'edge-router-policies'),
    'edge-routers': reachedFrom('identity', 'edge-routers', reach.routersOfIdentity),
    'service-policies': policiesNaming('identity', 'service-policies'),
    // as that identity sees them (permissions, configs, posture queries)
    services: reachedFrom('identity', 'services', reach.servicesOfIdentity, {
      policyType: true,
      view: (ctx, id, query) => withServiceView(ctx, { identityId: id, configTypes: configTypesOf(query) }),
    }),
  },
  links: (row) => ({
    'auth-policies': `auth-policies/${row.auth_policy_id}`,
    'posture-data': `identities/${row.id}/posture-data`,
    'failed-service-requests': `identities/${row.id}/failed-service-requests`,
    type: `identity-types/${row.type_id}`,
  }),
  async beforeWrite(op, input, existing, ctx) {
    if (input.authPolicyId === null || (op !== 'patch' && input.authPolicyId === undefined)) input.authPolicyId = DEFAULT_AUTH_POLICY_ID;
    if (input.authPolicyId !== undefined && !(await ctx.core.store.getSql('SELECT 1 FROM auth_policies WHERE id = ?', input.authPolicyId))) {
      throw validationError('authPolicyId', 'auth policy not found', input.authPolicyId);
    }
    if (existing?.is_default_admin) {
      if (input.isAdmin === false) throw validationError('isAdmin', 'the default admin must remain an admin', false);
      if (input.type !== undefined && input.type !== existing.type_id)
        throw validationError('type', 'the default admin type cannot be changed', input.type);
    }
  },
  beforeDelete(row) {
    if (row.is_default_admin) throw conflict('ENTITY_CAN_NOT_BE_DELETED', 'the default admin identity cannot be deleted');
  },
  async decorate(items, rows, ctx) {
    await decorateIdentities(ctx, items, rows);
  },
});

const SEEN = rowShape({ identity_id: 'string', last_seen: 'datetime', live: 'int' });
const DISABLED_STATE = rowShape({ id: 'string', disabled: 'bool', disabled_until: 'datetime?' });
const AUTHENTICATOR_VIEW = rowShape({ id: 'string', identity_id: 'string', method: 'string', username: 'string?', fingerprint: 'string?' });
const ENROLLMENT = rowShape({
  id: 'string',
  method: 'string',
  identity_id: 'string',
  ca_id: 'string?',
  username: 'string?',
  token: 'string',
  jwt: 'string',
  expires_at: 'datetime',
});

async function decorateIdentities(ctx: Ctx, items: ApiObject[], rows: Row[]): Promise<void> {
  const store = ctx.core.store;
  const ids = JSON.stringify(rows.map((r) => r.id));
  // the view's fields in their order; what is read for them is read together (one round trip on PostgreSQL)
  for (const item of items) {
    item.authenticators = {};
    item.hasApiSession = false;
    item.lastSeenAt = null;
    item.disabled = false;
    item.enrollment = {};
    item.isMfaEnabled = false;
  }
  const authsRead = allRows(
    store,
    AUTHENTICATOR_VIEW,
    `SELECT id, identity_id, method, username, fingerprint FROM authenticators WHERE identity_id IN ${store.sql.jsonValues()}`,
    ids,
  );
  // online: an API session; last seen: the latest activity of its live sessions and of those that ended (kept in
  // identity_last_seen by a trigger when a session row goes: migration 019)
  const seenRead = allRows(
    store,
    SEEN,
    `SELECT seen.identity_id AS identity_id, max(seen.at) AS last_seen, max(seen.live) AS live FROM (
           SELECT identity_id, last_activity_at AS at, 1 AS live FROM api_sessions WHERE identity_id IN ${store.sql.jsonValues()}
           UNION ALL
           SELECT identity_id, last_seen_at AS at, 0 AS live FROM identity_last_seen WHERE identity_id IN ${store.sql.jsonValues()}
         ) seen GROUP BY seen.identity_id`,
    ids,
    ids,
  );
  const [auths, seenRows] = await Promise.all([
    authsRead,
    seenRead,
    decorateIdentityEnrollments(ctx, items, rows),
    decorateMfaEnabled(ctx, items, rows),
  ]);
  const seen = new Map(seenRows.map((r) => [r.identity_id, r]));
  const now = ctx.core.clock.now();
  items.forEach((item, i) => {
    const row = decodeRow(DISABLED_STATE, rows[i]!);
    const authenticators: Record<string, unknown> = {};
    for (const a of auths.filter((x) => x.identity_id === row.id)) {
      if (a.method === 'updb') authenticators.updb = { id: a.id, username: a.username };
      if (a.method === 'cert') authenticators.cert = { id: a.id, fingerprint: a.fingerprint };
    }
    item.authenticators = authenticators;
    item.hasApiSession = seen.get(row.id)?.live === 1;
    item.lastSeenAt = seen.get(row.id)?.last_seen ?? null;
    item.disabled = isDisabled(row, now);
    if (!item.disabled) {
      item.disabledAt = null;
      item.disabledUntil = null;
    }
    item.hasEdgeRouterConnection = false;
    item.edgeRouterConnectionStatus = 'offline';
  });
}

/** Fills the identity view's `enrollment` ({ott, ottca, updb}) for a page of identities: one query per page. */
export async function decorateIdentityEnrollments(ctx: Ctx, items: ApiObject[], rows: Row[]): Promise<void> {
  if (!rows.length) return;
  const store = ctx.core.store;
  const enrollments = await allRows(
    store,
    ENROLLMENT,
    `SELECT * FROM enrollments WHERE identity_id IN ${store.sql.jsonValues()}`,
    JSON.stringify(rows.map((r) => r.id)),
  );
  const caNames = await namesById(store, 'cas', [...new Set(enrollments.flatMap((e) => (e.ca_id ? [e.ca_id] : [])))]);
  const byIdentity = new Map<string, Record<string, unknown>>();
  for (const e of enrollments) {
    const view: Record<string, unknown> = { id: e.id, token: e.token, jwt: e.jwt, expiresAt: e.expires_at };
    if (e.method === 'ottca') Object.assign(view, { caId: e.ca_id, ca: e.ca_id ? ref('cas', e.ca_id, caNames.get(e.ca_id)) : null });
    if (e.method === 'updb') view.username = e.username;
    const entry = byIdentity.get(e.identity_id) ?? {};
    entry[e.method] = view;
    byIdentity.set(e.identity_id, entry);
  }
  items.forEach((item, i) => {
    item.enrollment = byIdentity.get(String(rows[i]!.id)) ?? {};
  });
}
