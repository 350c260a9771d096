import { defineResource } from './define';

/** The controllers of this network (Weft runs one: itself), refreshed at every start. */
export const controllers = defineResource({
  entity: 'controllers',
  table: 'controllers',
  permission: 'ops',
  writable: false,
  fields: {
    name: { codec: 'string', filter: true },
    ctrlAddress: { codec: 'string' },
    certPem: { codec: 'string' },
    fingerprint: { codec: 'string' },
    apiAddresses: { codec: 'json' },
    isOnline: { codec: 'bool', filter: true },
    isPreferredLeader: { codec: 'bool' },
    lastJoinedAt: { codec: 'datetime', filter: true },
  },
  defaultSort: 't.name ASC',
});
