import { scalar } from '../query/fields';
import { createEnrollment, enrollmentCreateSchema } from '../enrollment/records';
import { defineResource } from './define';

/** Outstanding identity enrollments (management view). Created by identity create, POST /enrollments and re-enroll. */
export const enrollments = defineResource({
  entity: 'enrollments',
  table: 'enrollments',
  permission: 'enrollment',
  fields: {
    method: { codec: 'string', filter: true },
    identityId: { codec: 'string', filter: true },
    caId: { codec: 'string', filter: true },
    username: { codec: 'string', whenNull: '', filter: true },
    token: { codec: 'string', filter: true },
    jwt: { codec: 'string' },
    expiresAt: { codec: 'datetime', filter: true },
  },
  filters: { identity: scalar('string', 't.identity_id') },
  refs: {
    identity: { column: 'identity_id', entity: 'identities', table: 'identities' },
    ca: { column: 'ca_id', entity: 'cas', table: 'cas' },
  },
  defaultSort: 't.created_at ASC, t.id ASC',
  // written by the core only: the create body is the handler's
  writable: false,
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
});
