import { scalar } from '../query/fields';
import { createEnrollment, enrollmentCreateSchema } from '../enrollment/records';
import type { ResourceDef } from './resource';

/** Outstanding identity enrollments (management view). Created by identity create, POST /enrollments and re-enroll. */
export const enrollments: ResourceDef = {
  entity: 'enrollments',
  table: 'enrollments',
  permission: 'enrollment',
  columns: {
    method: { column: 'method', codec: 'string', write: false },
    identityId: { column: 'identity_id', codec: 'string', write: false },
    caId: { column: 'ca_id', codec: 'string', write: false },
    username: { column: 'username', codec: 'string', write: false, whenNull: '' },
    token: { column: 'token', codec: 'string', write: false },
    jwt: { column: 'jwt', codec: 'string', write: false },
    expiresAt: { column: 'expires_at', codec: 'datetime', write: false },
  },
  refs: {
    identity: { column: 'identity_id', entity: 'identities', table: 'identities' },
    ca: { column: 'ca_id', entity: 'cas', table: 'cas' },
  },
  fields: {
    method: scalar('string', 't.method'),
    identityId: scalar('string', 't.identity_id'),
    identity: scalar('string', 't.identity_id'),
    caId: scalar('string', 't.ca_id'),
    username: scalar('string', 't.username'),
    token: scalar('string', 't.token'),
    expiresAt: scalar('datetime', 't.expires_at'),
  },
  defaultSort: 't.created_at ASC, t.id ASC',
  schemas: { create: enrollmentCreateSchema },
  links: (row) => ({
    identity: `identities/${row.identity_id}`,
    refresh: `enrollments/${row.id}/refresh`,
    ...(row.ca_id ? { ca: `cas/${row.ca_id}` } : {}),
  }),
  handlers: { create: (ctx, body) => createEnrollment(ctx, body) },
  decorate(items) {
    // OpenZiti's enrollment view names the identity's URL segment
    for (const item of items) if (item.identity) (item.identity as Record<string, unknown>).urlName = 'identities';
  },
};
