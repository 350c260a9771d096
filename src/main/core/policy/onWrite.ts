import type { Ctx } from '../core';
import { configs } from '../entities/configs';
import { deleteRoleAttributes, syncRoleAttributes } from '../entities/roleAttributes';
import type { WriteSubscriber } from '../entities/writeGate';
import { configWritten } from './entityHooks';
import { roleAttributesChanged } from './policyIndex';
import { decodeRow, json, rowShape } from '../store/rows';

const ROLE_ATTRIBUTES = rowShape({ role_attributes: json<string[]>('?') });

/**
 * The policy index's part of every write (the write gate, in the write's transaction): an entity of a role kind keeps
 * its role_attributes rows and its role class in step with the attributes it was written with, and leaves both when
 * it is deleted. Policies' own writes re-index through their declarations' hooks (policyResource.ts). A config
 * changed (configs are declared a floor below) changes the services using it for whoever sees them.
 */
export const policyIndexOnWrite: WriteSubscriber<Ctx> = async ({ ctx, def, op, id, before, after }) => {
  if (def.entity === configs.entity && (op === 'update' || op === 'patch')) await configWritten(ctx.core, id);
  const kind = def.roleKind;
  if (!kind) return;
  const store = ctx.core.store;
  if (op === 'delete') {
    await deleteRoleAttributes(store, kind, id);
    // (migration 003's delete triggers do the same for rows that go by cascade)
    await store.runSql('DELETE FROM role_class_members WHERE kind = ? AND entity_id = ?', kind, id);
    return;
  }
  if (op !== 'create' && after?.role_attributes === before?.role_attributes) return;
  await syncRoleAttributes(store, kind, id, (after && decodeRow(ROLE_ATTRIBUTES, after).role_attributes) ?? []);
  await roleAttributesChanged(ctx.core, kind, id);
};
