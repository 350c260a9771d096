import type { Ctx } from '../context';
import { loadAuthPolicy } from '../entities/authPolicies';
import { validationError } from '../errors';
import { checkPasswordRules } from './passwords';

/**
 * Applies the password rules of the identity's auth policy to a password being set (authenticators, updb
 * enrollment). Throws 400 COULD_NOT_VALIDATE naming `field`.
 */
export async function checkPasswordForIdentity(ctx: Ctx, identityId: string, password: string, field = 'password'): Promise<void> {
  const identity = await ctx.core.store.getSql<{ auth_policy_id: string }>('SELECT auth_policy_id FROM identities WHERE id = ?', identityId);
  if (!identity) throw validationError('identityId', 'identity not found', identityId);
  checkPasswordRules((await loadAuthPolicy(ctx, identity.auth_policy_id)).primary.updb, password, field);
}
