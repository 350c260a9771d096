import { z } from 'zod';
import { requirePermission } from '../permissions';
import type { Ctx } from '../context';
import { conflict, notFound, validationError } from '../errors';
import { getRow } from '../store/rows';
import { nullableTags } from './common';
import { defineResource } from './define';
import type { ApiObject } from './resource';

export const GLOBAL_SETTINGS_ID = 'global';

const uris = z.array(z.string().trim().min(1, 'must not be empty')).nullable().optional();
const oidcSchema = z.object({ redirectUris: uris, postLogoutUris: uris }).strict();
export interface OidcSettings {
  redirectUris?: string[] | null;
  postLogoutUris?: string[] | null;
}

/**
 * Controller settings: the 'global' row and per-controller overrides (id = controller id). In an override a
 * missing or null value inherits the global one; the effective view merges them.
 */
export const controllerSettings = defineResource({
  entity: 'controller-settings',
  table: 'controller_settings',
  permission: 'ops',
  fields: {
    // shown as the `controller` ref
    controllerId: { codec: 'string', schema: z.string().min(1), required: true, createOnly: true, shown: false, filter: true },
    // an override without its own oidc settings leaves the field out (the spec's oidc is an object, never null)
    oidc: { codec: 'json', schema: oidcSchema, nullable: true, zero: null, whenNull: undefined },
  },
  tags: { putOmitted: 'leave' },
  refs: { controller: { column: 'controller_id', entity: 'controllers', table: 'controllers' } },
  defaultSort: "CASE t.id WHEN 'global' THEN 0 ELSE 1 END, t.id ASC",
  schemas: {
    // the settings of a controller have its id
    create: z
      .object({ controllerId: z.string().min(1), oidc: oidcSchema.nullable().optional(), tags: nullableTags.optional() })
      .transform((v) => ({ ...v, id: v.controllerId })),
  },
  async beforeWrite(op, input, existing, ctx) {
    const isGlobal = existing?.id === GLOBAL_SETTINGS_ID;
    if (op === 'create') {
      if (input.controllerId === GLOBAL_SETTINGS_ID) throw validationError('controllerId', 'the global settings exist already', input.controllerId);
      if (!(await ctx.core.store.getSql('SELECT 1 FROM controllers WHERE id = ?', input.controllerId))) {
        throw validationError('controllerId', 'controller not found', input.controllerId);
      }
      if (await ctx.core.store.getSql('SELECT 1 FROM controller_settings WHERE id = ?', input.controllerId)) {
        throw validationError('controllerId', 'settings for this controller exist already', input.controllerId);
      }
    }
    if (op === 'patch' && input.oidc != null) {
      // PATCH merges inside oidc: absent fields stay
      const cur: OidcSettings = existing?.oidc ? JSON.parse(existing.oidc) : {};
      input.oidc = { ...cur, ...Object.fromEntries(Object.entries(input.oidc).filter(([, v]) => v !== undefined)) };
    }
    if (isGlobal && input.oidc !== undefined) {
      // the global settings are the fallback: they hold values, never "inherit"
      const o = input.oidc ?? {};
      input.oidc = { redirectUris: o.redirectUris ?? [], postLogoutUris: o.postLogoutUris ?? [] };
    }
  },
  beforeDelete(row) {
    if (row.id === GLOBAL_SETTINGS_ID) throw conflict('ENTITY_CAN_NOT_BE_DELETED', 'the global controller settings cannot be deleted');
  },
});

/** GET /controller-settings/{id}/effective: global settings overridden by the controller's own (`instance`). */
export async function effectiveSettings(ctx: Ctx, id: string): Promise<ApiObject> {
  requirePermission(ctx.caller, 'ops', 'read');
  const store = ctx.core.store;
  const read = (id: string) => getRow(store, controllerSettings.shape, 'SELECT * FROM controller_settings WHERE id = ?', id);
  const global = (await read(GLOBAL_SETTINGS_ID))!;
  const instance = id === GLOBAL_SETTINGS_ID ? global : await read(id);
  if (!instance && !(await store.getSql('SELECT 1 FROM controllers WHERE id = ?', id))) throw notFound('controller setting');
  const g: OidcSettings = global.oidc ?? {};
  const i = instance?.oidc;
  const base = instance ?? global;
  return {
    _links: { self: { href: `./controller-settings/${id}/effective` } },
    id,
    createdAt: base.created_at,
    updatedAt: base.updated_at,
    tags: instance?.tags ?? {},
    effective: {
      oidc: {
        redirectUris: i?.redirectUris ?? g.redirectUris ?? [],
        postLogoutUris: i?.postLogoutUris ?? g.postLogoutUris ?? [],
      },
    },
    // an inherited list is left out, not null (OpenZiti's clients reject null lists)
    instance: i ? { oidc: Object.fromEntries(Object.entries(i).filter(([, v]) => v != null)) } : {},
  };
}
