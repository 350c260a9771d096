import { requirePermission, type PermissionGroup } from '../permissions';
import type { Ctx } from '../context';
import { scalar } from '../query/fields';
import { pageQuery, type ListParams } from '../query/list';
import { type ListExtra, listRows, present, requireRow, type ResourceDef } from './resource';

/** Lists `def` rows related to one parent entity (association listings such as /identities/{id}/authenticators). */
export async function listRelated(
  ctx: Ctx,
  parent: ResourceDef,
  parentId: string,
  def: ResourceDef,
  params: ListParams,
  extra: () => Promise<ListExtra> | ListExtra,
) {
  requirePermission(ctx.caller, parent.permission, 'read');
  requirePermission(ctx.caller, def.permission, 'read');
  return ctx.core.store.read(async () => {
    await requireRow(ctx.core.store, parent, parentId);
    const { rows, meta } = await listRows(ctx, def, params, await extra());
    return { data: await present(ctx, def, rows), meta };
  });
}

/** Distinct role attributes in use by an entity kind, paged and filterable on `id` (the attribute). */
export async function listRoleAttributes(ctx: Ctx, entityType: string, permission: PermissionGroup, params: ListParams) {
  requirePermission(ctx.caller, permission, 'read');
  const fields = { id: scalar('string', 't.attr') };
  const store = ctx.core.store;
  const { compiled, limit, offset } = pageQuery(params, fields, { sql: store.sql });
  const from = `(SELECT DISTINCT attr FROM role_attributes WHERE entity_type = ?) t`;
  const order = compiled.sort.length ? compiled.sort.map((s) => store.sql.orderBy(s.sql, s.dir)).join(', ') : 't.attr ASC';
  const totalCount = (await store.getSql<{ n: number }>(`SELECT count(*) AS n FROM ${from} WHERE ${compiled.where}`, entityType, ...compiled.params))!
    .n;
  const rows = await store.allSql<{ attr: string }>(
    `SELECT t.attr FROM ${from} WHERE ${compiled.where} ORDER BY ${order} LIMIT ? OFFSET ?`,
    entityType,
    ...compiled.params,
    limit,
    offset,
  );
  return { data: rows.map((r) => r.attr), meta: { pagination: { limit, offset, totalCount }, filterableFields: ['id'] } };
}

/** A list every authenticated caller may read, whatever its permissions (e.g. the controllers SDKs ask for). */
export async function listOpen(ctx: Ctx, def: ResourceDef, params: ListParams) {
  return ctx.core.store.read(async () => {
    const { rows, meta } = await listRows(ctx, def, params);
    return { data: await present(ctx, def, rows), meta };
  });
}
