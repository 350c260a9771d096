import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import {
  bodyJsonSchema,
  exportList,
  type JsonSchemaObject,
  filterFields,
  resourceOps,
  type ApiObject,
  type ResourceDef,
  type ConsoleWriteOp as WriteOp,
} from '../core/registry';
import type { Entity, ListPage } from '../../shared/console';
import { listQuerySchema, toListParams } from './listQuery';
import { authedProcedure, router } from './trpc';

export type { ConsoleWriteOp as WriteOp } from '../core/registry';
/** Entity kinds whose lists take roleFilter/roleSemantic (role attributes in role_attributes). */
export type { RoleKind } from '../../shared/roleKinds';
import type { RoleKind } from '../../shared/roleKinds';

/** A resource type the console lists and edits through the core's generic operations (`resourceOps`). */
export interface ConsoleResource {
  def: ResourceDef;
  roleKind?: RoleKind;
  /** the writes the console offers; default: those the declaration supports, plus delete */
  ops?: WriteOp[];
  /** fields never sent to the browser (e.g. the tokens of other API sessions) */
  redact?: string[];
  /** the create form's initial body */
  initial?: Record<string, unknown>;
}

export function allowedOps(r: ConsoleResource): WriteOp[] {
  if (r.ops) return r.ops;
  const s = r.def.schemas;
  return [
    ...(s.create || r.def.handlers?.create ? (['create'] as const) : []),
    ...(s.update ? (['update'] as const) : []),
    ...(s.patch ? (['patch'] as const) : []),
    'delete',
  ];
}

export function requireOp(name: string, r: ConsoleResource, op: WriteOp): void {
  if (!allowedOps(r).includes(op)) throw new TRPCError({ code: 'METHOD_NOT_SUPPORTED', message: `${name}: ${op} is not supported` });
}

function redact(items: ApiObject[], fields: string[] | undefined): Entity[] {
  if (fields?.length) for (const item of items) for (const f of fields) delete item[f];
  return items as Entity[];
}

const idSchema = z.string().min(1).max(200);

/**
 * What the console needs to know about a type to build its forms and tables, from the core's declaration: the JSON
 * Schemas of its create and update bodies (null when the console does not offer the operation), the fields a list
 * may sort and filter by, its role kind and the writes offered.
 */
export interface ResourceDescription {
  create: JsonSchemaObject | null;
  update: JsonSchemaObject | null;
  sortable: string[];
  filterable: string[];
  roleKind: RoleKind | null;
  ops: WriteOp[];
  /** the create form's initial body (the registry's console option), when the core gives one */
  initial: Record<string, unknown> | null;
}

const bodySchema = (schema: z.ZodType | undefined): JsonSchemaObject | null => (schema ? bodyJsonSchema(schema) : null);

export function describeResource(r: ConsoleResource): ResourceDescription {
  const ops = allowedOps(r);
  const fields = Object.entries(filterFields(r.def));
  return {
    create: ops.includes('create') ? bodySchema(r.def.schemas.create) : null,
    update: ops.includes('update') ? bodySchema(r.def.schemas.update) : null,
    sortable: fields.filter(([, f]) => f.kind === 'scalar' && f.sortable !== false).map(([name]) => name),
    filterable: fields.map(([name]) => name),
    roleKind: r.roleKind ?? null,
    ops,
    initial: r.initial ?? null,
  };
}

/**
 * list/get/create/update/delete over a registry of resources: one generic mechanism for every page. Each call goes
 * through `resourceOps(def)` with the caller's core context, so authorization, validation and errors are the REST API's.
 */
export function resourceRouter<N extends string>(registry: Record<N, ConsoleResource>) {
  const names = Object.keys(registry) as [N, ...N[]];
  const resource = z.enum(names);
  const entry = (name: N) => registry[name];
  // a type's description never changes while the process runs
  const descriptions = new Map<N, ResourceDescription>();
  return router({
    /** The console's resource types, for the pages the renderer generates from `describe` (types it has no page of). */
    names: authedProcedure.query((): N[] => [...names]),
    describe: authedProcedure.input(z.object({ resource })).query(({ input }): ResourceDescription => {
      let d = descriptions.get(input.resource);
      if (!d) descriptions.set(input.resource, (d = describeResource(entry(input.resource))));
      return d;
    }),
    list: authedProcedure.input(listQuerySchema.extend({ resource })).query(async ({ ctx, input }): Promise<ListPage> => {
      const r = entry(input.resource);
      const page = await resourceOps(r.def).list(ctx.zctx, toListParams(input));
      return { data: redact(page.data, r.redact), meta: page.meta };
    }),
    /** The whole filtered result of a list (every page, in the list's order) as a CSV or JSON file. */
    export: authedProcedure
      .input(listQuerySchema.omit({ limit: true, offset: true }).extend({ resource, format: z.enum(['csv', 'json']) }))
      .query(async ({ ctx, input }) => {
        const r = entry(input.resource);
        const { filter, sort, roleFilter, roleSemantic } = toListParams({ ...input, limit: 1, offset: 0 });
        return exportList(ctx.zctx, r.def, { filter, sort, roleFilter, roleSemantic }, input.format, r.redact);
      }),
    get: authedProcedure.input(z.object({ resource, id: idSchema })).query(async ({ ctx, input }): Promise<Entity> => {
      const r = entry(input.resource);
      return redact([await resourceOps(r.def).get(ctx.zctx, input.id)], r.redact)[0]!;
    }),
    create: authedProcedure.input(z.object({ resource, body: z.unknown() })).mutation(async ({ ctx, input }) => {
      const r = entry(input.resource);
      requireOp(input.resource, r, 'create');
      return { id: await resourceOps(r.def).create(ctx.zctx, input.body ?? {}) };
    }),
    update: authedProcedure
      .input(z.object({ resource, id: idSchema, body: z.unknown(), op: z.enum(['update', 'patch']).default('patch') }))
      .mutation(async ({ ctx, input }) => {
        const r = entry(input.resource);
        requireOp(input.resource, r, input.op);
        await resourceOps(r.def).update(ctx.zctx, input.id, input.body ?? {}, input.op);
        return { id: input.id };
      }),
    delete: authedProcedure.input(z.object({ resource, id: idSchema })).mutation(async ({ ctx, input }) => {
      const r = entry(input.resource);
      requireOp(input.resource, r, 'delete');
      await resourceOps(r.def).delete(ctx.zctx, input.id);
      return { id: input.id };
    }),
  });
}
