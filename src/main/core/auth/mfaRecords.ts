import type { Core, Ctx } from '../core';
import type { ApiObject } from '../entities/resource';
import type { Row } from '../store/db';
import { allRows, decodeRows, getRow, json, rowShape, type Decoded } from '../store/rows';

/** An identity's MFA enrollment (table mfas): the TOTP secret sealed, the recovery codes as digests (see mfa.ts). */
export const MFA = rowShape({
  id: 'string',
  identity_id: 'string',
  secret: 'string',
  is_verified: 'bool',
  recovery_codes: json<string[]>(),
  recovery_codes_pending: 'string?',
  last_time_step: 'int?',
  created_at: 'datetime',
  updated_at: 'datetime',
  tags: json<Record<string, unknown>>(),
});
export type Mfa = Decoded<typeof MFA>;

const ID = rowShape({ id: 'string' });
const IDENTITY_ID = rowShape({ identity_id: 'string' });

/** An identity's MFA enrollment row (a leaf: API sessions read it without the MFA operations). */
export async function loadMfa(core: Core, identityId: string): Promise<Mfa | undefined> {
  return getRow(core.store, MFA, 'SELECT * FROM mfas WHERE identity_id = ?', identityId);
}

export async function isTotpEnrolled(core: Core, identityId: string): Promise<boolean> {
  return !!(await core.store.getSql('SELECT 1 FROM mfas WHERE identity_id = ? AND is_verified = 1', identityId));
}

/** Identity view: `isMfaEnabled` for a page of identities in one query. */
export async function decorateMfaEnabled(ctx: Ctx, items: ApiObject[], rows: readonly Row[]): Promise<void> {
  const ids = decodeRows(ID, rows).map((r) => r.id);
  const enabled = new Set(
    (
      await allRows(
        ctx.core.store,
        IDENTITY_ID,
        `SELECT identity_id FROM mfas WHERE is_verified = 1 AND identity_id IN ${ctx.core.store.sql.jsonValues()}`,
        JSON.stringify(ids),
      )
    ).map((r) => r.identity_id),
  );
  items.forEach((item, i) => (item.isMfaEnabled = enabled.has(ids[i]!)));
}
