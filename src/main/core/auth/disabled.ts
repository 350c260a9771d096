import { json, rowShape, type Decoded } from '../store/rows';

/** The columns of an identity a login reads (identities are declared in policy/identities.ts, a floor above). */
export const LOGIN_IDENTITY = rowShape({
  id: 'string',
  name: 'string',
  is_admin: 'bool',
  is_default_admin: 'bool',
  permissions: json<string[]>(),
  disabled: 'bool',
  disabled_until: 'datetime?',
  auth_policy_id: 'string',
  external_id: 'string?',
  failed_login_attempts: 'int',
});
export type LoginIdentity = Decoded<typeof LOGIN_IDENTITY>;

/** An identity row's effective disabled state (lifecycle.ts disables and enables): a timed disable lapses by itself. */
export function isDisabled(row: { disabled: boolean; disabled_until: string | null }, now: Date): boolean {
  if (!row.disabled) return false;
  return !row.disabled_until || row.disabled_until > now.toISOString();
}
