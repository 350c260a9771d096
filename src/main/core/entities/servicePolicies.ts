import { z } from 'zod';
import { policyResource } from '../policy/policyResource';
import { SERVICE_POLICY } from '../policy/policySpecs';
import { scalar } from '../query/fields';

/** Service policies: which identities may Dial or Bind which services, subject to which posture checks. */
export const servicePolicies = policyResource({
  entity: 'service-policies',
  permission: 'service-policy',
  spec: SERVICE_POLICY,
  columns: { type: { column: 'type', codec: 'string' } },
  fields: { type: scalar('string', 't.type') },
  required: { type: z.enum(['Dial', 'Bind']) },
  links: (row) => ({
    identities: `service-policies/${row.id}/identities`,
    services: `service-policies/${row.id}/services`,
    'posture-checks': `service-policies/${row.id}/posture-checks`,
  }),
});
