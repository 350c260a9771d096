import type { Core, Ctx } from '../core';
import type { ApiObject } from '../entities/resource';
import type { Row } from '../store/db';

/** An identity's MFA enrollment row (a leaf: API sessions read it without the MFA operations). */
export async function loadMfa(core: Core, identityId: string): Promise<Row | undefined> {
  return core.store.getSql<Row>('SELECT * FROM mfas WHERE identity_id = ?', identityId);
}

export async function isTotpEnrolled(core: Core, identityId: string): Promise<boolean> {
  return !!(await core.store.getSql('SELECT 1 FROM mfas WHERE identity_id = ? AND is_verified = 1', identityId));
}

/** Identity view: `isMfaEnabled` for a page of identities in one query. */
export async function decorateMfaEnabled(ctx: Ctx, items: ApiObject[], rows: Row[]): Promise<void> {
  const enabled = new Set(
    (
      await ctx.core.store.allSql<{ identity_id: string }>(
        `SELECT identity_id FROM mfas WHERE is_verified = 1 AND identity_id IN ${ctx.core.store.sql.jsonValues()}`,
        JSON.stringify(rows.map((r) => r.id)),
      )
    ).map((r) => r.identity_id),
  );
  items.forEach((item, i) => (item.isMfaEnabled = enabled.has(rows[i]!.id as string)));
}
