import { scalar } from '../query/fields';
import type { ResourceDef } from './resource';

/** Read-only: the fixed identity types, whose ids equal their names as in OpenZiti. */
export const identityTypes: ResourceDef = {
  entity: 'identity-types',
  table: 'identity_types',
  permission: 'identity',
  columns: { name: { column: 'name', codec: 'string' } },
  fields: { name: scalar('string', 't.name') },
  defaultSort: 't.name ASC',
  schemas: {},
};
