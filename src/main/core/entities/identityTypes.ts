import { defineResource } from './define';

/** Read-only: the fixed identity types, whose ids equal their names as in OpenZiti. */
export const identityTypes = defineResource({
  entity: 'identity-types',
  table: 'identity_types',
  permission: 'identity',
  writable: false,
  fields: { name: { codec: 'string', filter: true } },
  defaultSort: 't.name ASC',
});
