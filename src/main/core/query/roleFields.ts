import type { SetField } from './compile';
import { setFromTable } from './compile';

/** `roleAttributes` of an entity kind as a ZitiQL set field backed by the indexed role_attributes table. */
export function roleAttributesField(entityType: string): SetField {
  return setFromTable({
    table: 'role_attributes',
    ownerColumn: 'entity_id',
    valueColumn: 'attr',
    where: `entity_type = '${entityType}'`,
    rowId: 't.id',
    type: 'string',
  });
}
