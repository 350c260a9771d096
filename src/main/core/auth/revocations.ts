import { z } from 'zod';
import { requirePermission } from '../permissions';
import { notFound, validationError } from '../errors';
import { parseInput } from '../validation';
import { nullableTags } from '../entities/common';
import { defineResource } from '../entities/define';
import { applyCreate } from '../entities/resource';
import { apiSessionsOf } from './apiSessions';
import { oidcLifetimes } from './oidcTokens';

export const REVOCATION_TYPES = ['JTI', 'IDENTITY', 'API_SESSION'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const createSchema = z.object({
  id: z.string().trim().min(1, 'must not be empty'),
  type: z.enum(REVOCATION_TYPES),
  tags: nullableTags.optional(),
});

/**
 * Revocations, as OpenZiti's Management API (list, get, create; administrators). Creating one replaces an existing
 * revocation of the same id and takes effect at once: an IDENTITY revocation ends the identity's API sessions
 * (all issued before it), an API_SESSION revocation ends that session (legacy or OIDC), a JTI revocation refuses the
 * OIDC access or refresh token with that id. A revocation is kept as long as a revoked credential could have lived
 * (the API session timeout; for a JTI, at least an OIDC refresh token's lifetime).
 */
export const revocations = defineResource({
  entity: 'revocations',
  table: 'revocations',
  permission: 'ops',
  fields: {
    // the revoked thing's id is the revocation's id
    id: { codec: 'string', column: false, schema: createSchema.shape.id, required: true, createOnly: true },
    type: { codec: 'string', schema: createSchema.shape.type, required: true, createOnly: true, filter: true },
    expiresAt: { codec: 'datetime', filter: true },
  },
  defaultSort: 't.created_at ASC, t.id ASC',
  // create only
  schemas: { update: undefined, patch: undefined },
  handlers: {
    async create(ctx, body): Promise<string> {
      requirePermission(ctx.caller, 'ops', 'create');
      const input = parseInput(createSchema, body);
      const store = ctx.core.store;
      if (input.type === 'IDENTITY' && !(await store.getSql('SELECT 1 FROM identities WHERE id = ?', input.id))) throw notFound('identity');
      const isSession = input.type === 'API_SESSION' && !!(await store.getSql('SELECT 1 FROM api_sessions WHERE id = ?', input.id));
      // OpenZiti's JWT and API session ids are UUIDs; Weft's API session ids are its own
      if (input.type !== 'IDENTITY' && !isSession && !UUID.test(input.id)) {
        throw validationError('id', input.type === 'JTI' ? 'must be a valid UUID' : 'must be a valid UUID or the id of an API session', input.id);
      }
      const now = ctx.core.clock.now();
      const keep =
        input.type === 'JTI' ? Math.max(ctx.core.config.sessionTimeoutMs, oidcLifetimes(ctx.core).refresh) : ctx.core.config.sessionTimeoutMs;
      return store.tx(async () => {
        await store.runSql('DELETE FROM revocations WHERE id = ?', input.id);
        const id = await applyCreate(ctx, revocations, input, {
          columns: { expires_at: new Date(now.getTime() + keep).toISOString(), issued_before: now.toISOString() },
        });
        if (input.type === 'IDENTITY') await apiSessionsOf(ctx.core).removeForIdentity(input.id);
        if (isSession) await apiSessionsOf(ctx.core).remove(input.id);
        return id;
      });
    },
  },
});
