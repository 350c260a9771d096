import { z } from 'zod';
import { costSchema, nameSchema } from './common';
import type { FieldDef } from './define';

/**
 * The fields edge routers and transit routers have in common. PUT resets omitted optional fields and null means the
 * zero value (as OpenZiti); a PATCH leaves the booleans alone when given null.
 */
const flag = { codec: 'bool', schema: z.boolean(), nullable: true, zero: false, patchNull: 'leave', filter: true } as const satisfies FieldDef;

export const ROUTER_FIELDS = {
  name: { codec: 'string', schema: nameSchema, required: true, filter: true },
  cost: { codec: 'int', schema: costSchema, nullable: true, zero: 0, filter: true },
  noTraversal: flag,
  disabled: flag,
  ctrlChanListeners: { codec: 'json', schema: z.record(z.string(), z.array(z.string())), nullable: true, zero: {} },
  isOnline: { codec: 'bool', filter: true },
  isVerified: { codec: 'bool', filter: true },
  fingerprint: { codec: 'string', whenNull: '', filter: true },
  enrollmentToken: { codec: 'string' },
  enrollmentJwt: { codec: 'string' },
  enrollmentCreatedAt: { codec: 'datetime' },
  enrollmentExpiresAt: { codec: 'datetime' },
} as const satisfies Record<string, FieldDef>;

export { flag as ROUTER_FLAG };
