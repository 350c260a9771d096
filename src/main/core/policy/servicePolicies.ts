import { z } from 'zod';
import { policyResource } from './policyResource';
import { SERVICE_POLICY } from './policySpecs';

/** Service policies: which identities may Dial or Bind which services, subject to which posture checks. */
export const servicePolicies = policyResource({
  entity: 'service-policies',
  permission: 'service-policy',
  spec: SERVICE_POLICY,
  fields: { type: { codec: 'string', schema: z.enum(['Dial', 'Bind']), required: true, filter: true } },
});
