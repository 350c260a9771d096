import { scalar } from '../query/fields';
import type { ResourceDef } from './resource';

/** The controllers of this network (Weft runs one: itself), refreshed at every start. */
export const controllers: ResourceDef = {
  entity: 'controllers',
  table: 'controllers',
  permission: 'ops',
  columns: {
    name: { column: 'name', codec: 'string' },
    ctrlAddress: { column: 'ctrl_address', codec: 'string' },
    certPem: { column: 'cert_pem', codec: 'string' },
    fingerprint: { column: 'fingerprint', codec: 'string' },
    apiAddresses: { column: 'api_addresses', codec: 'json' },
    isOnline: { column: 'is_online', codec: 'bool' },
    isPreferredLeader: { column: 'is_preferred_leader', codec: 'bool' },
    lastJoinedAt: { column: 'last_joined_at', codec: 'datetime' },
  },
  fields: { name: scalar('string', 't.name'), isOnline: scalar('boolean', 't.is_online'), lastJoinedAt: scalar('datetime', 't.last_joined_at') },
  defaultSort: 't.name ASC',
  schemas: {},
};
