import { z } from 'zod';
import type { PermissionGroup } from '../permissions';
import { SYSTEM } from '../permissions';
import type { Ctx } from '../context';
import { nameSchema } from '../entities/common';
import { defineResource, type FieldDef } from '../entities/define';
import { namesById, type ApiObject, type ResourceDef } from '../entities/resource';
import { conflict } from '../errors';
import { resolveRoleFields } from './roleNames';
import { setFromJsonArray } from '../query/compile';
import type { Row } from '../store/db';
import { decodeRows, json, type Json } from '../store/rows';
import { sideMembers } from './access';
import { ROLE_KINDS } from '../kinds';
import { reindexPolicy, type PolicySide, type PolicyTypeSpec } from './policyIndex';
import { checkPolicyRoles } from '../query/roles';

const semantic = z.enum(['AllOf', 'AnyOf']);

export interface PolicyResourceOptions {
  entity: string;
  permission: PermissionGroup;
  spec: PolicyTypeSpec;
  /** fields beyond name, semantic and the role sides (e.g. a service policy's type) */
  fields?: Record<string, FieldDef>;
}

/**
 * The one declaration behind service policies, edge router policies and service edge router policies:
 * name, semantic, role sides (validated, sorted, shown with `*RolesDisplay`), and the policy index kept in step
 * inside every write. Rows with `is_system` set are neither updated nor deleted by callers other than the system.
 */
export function policyResource(o: PolicyResourceOptions): ResourceDef {
  const { spec } = o;
  const sides: Record<string, FieldDef> = Object.fromEntries(
    spec.sides.map((s) => [
      s.field,
      { codec: 'json', column: s.column, schema: z.array(z.string()), nullable: true, zero: [], filter: setFromJsonArray(`t.${s.column}`) },
    ]),
  );
  // each side's column as stored: a JSON array of roles
  const sidesShape: Record<string, Json<string[]>> = Object.fromEntries(spec.sides.map((s) => [s.column, json<string[]>()]));
  const guardSystem = (row: Row | undefined, ctx: Ctx, code: string, what: string) => {
    if (row?.is_system && ctx.caller !== SYSTEM) throw conflict(code, `system ${o.entity} can not be ${what}`);
  };
  return defineResource({
    entity: o.entity,
    table: spec.table,
    permission: o.permission,
    fields: {
      name: { codec: 'string', schema: nameSchema, required: true, filter: true },
      semantic: { codec: 'string', schema: semantic, required: true, filter: true },
      ...sides,
      ...o.fields,
    },
    defaultSort: 't.name ASC',
    // each side's members: /<policies>/:id/<entities>
    associations: Object.fromEntries(spec.sides.map((s) => sideMembers(s.kind))),
    async beforeWrite(op, input, existing, ctx) {
      guardSystem(existing, ctx, 'ENTITY_CAN_NOT_BE_UPDATED', 'updated');
      // the sides are declared from the spec, so they are not among the fields' static types
      const body = input as Record<string, string[] | undefined>;
      if (ctx.roleNames) await resolveSideNames(ctx, spec.sides, body);
      for (const side of spec.sides) {
        const given = body[side.field];
        if (given === undefined) {
          if (op === 'create') body[side.field] = [];
          continue;
        }
        const values = [...new Set(given)].sort();
        await checkPolicyRoles(ctx.core.store, side.field, values, ROLE_KINDS[side.kind]);
        body[side.field] = values;
      }
    },
    async afterWrite(_op, id, _input, existing, ctx, row) {
      // a rename or new tags changes nobody's access
      const relevant = ['semantic', 'type', ...spec.sides.map((s) => s.column)];
      if (existing && relevant.every((c) => existing[c] === row[c])) return;
      await reindexPolicy(ctx.core, spec, id, existing, row);
    },
    async beforeDelete(row, ctx) {
      guardSystem(row, ctx, 'ENTITY_CAN_NOT_BE_DELETED', 'deleted');
      await reindexPolicy(ctx.core, spec, row.id, row, undefined);
    },
    async decorate(items, rows, ctx) {
      await decorateRoleDisplays(ctx, spec.sides, items, decodeRows(sidesShape, rows));
    },
  });
}

/** Every side's `@name` roles as `@id`; the names at fault on all sides at once. */
async function resolveSideNames(ctx: Ctx, sides: PolicySide[], body: Record<string, string[] | undefined>): Promise<void> {
  const given = sides.filter((side) => body[side.field]);
  const resolved = await resolveRoleFields(
    ctx.core.store,
    given.map((side) => ({ field: side.field, kind: side.kind, roles: body[side.field]! })),
  );
  given.forEach((side, i) => (body[side.field] = resolved[i]));
}

/** `<side>Display`: `{role, name}` per role, `@id` shown as `@<name>` (unknown ids are left out), attributes as is. */
async function decorateRoleDisplays(ctx: Ctx, sides: PolicySide[], items: ApiObject[], rows: Array<Record<string, string[]>>): Promise<void> {
  const names = new Map<PolicySide, Map<string, string>>();
  for (const side of sides) {
    const ids = rows.flatMap((r) => r[side.column].filter((x) => x.startsWith('@')).map((x) => x.slice(1)));
    names.set(side, await namesById(ctx.core.store, ROLE_KINDS[side.kind].table, [...new Set(ids)]));
  }
  items.forEach((item, i) => {
    for (const side of sides) {
      const known = names.get(side)!;
      item[`${side.field}Display`] = rows[i]![side.column].flatMap((role) => {
        if (!role.startsWith('@')) return [{ role, name: role }];
        const name = known.get(role.slice(1));
        return name === undefined ? [] : [{ role, name: `@${name}` }];
      });
    }
  });
}
