import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { resourceOps, type ApiObject, type ResourceDef } from '../core/entities/resource';
import type { Entity, ListPage } from '../../shared/console';
import { listQuerySchema, toListParams } from './listQuery';
import { authedProcedure, router } from './trpc';

export type { ConsoleWriteOp as WriteOp } from '../core/registry';
import type { ConsoleWriteOp as WriteOp } from '../core/registry';
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
 * list/get/create/update/delete over a registry of resources: one generic mechanism for every page. Each call goes
 * through `resourceOps(def)` with the caller's core context, so authorization, validation and errors are the REST API's.
 */
export function resourceRouter<N extends string>(registry: Record<N, ConsoleResource>) {
  const names = Object.keys(registry) as [N, ...N[]];
  const resource = z.enum(names);
  const entry = (name: N) => registry[name];
  return router({
    list: authedProcedure.input(listQuerySchema.extend({ resource })).query(({ ctx, input }): ListPage => {
      const r = entry(input.resource);
      const page = resourceOps(r.def).list(ctx.zctx, toListParams(input));
      return { data: redact(page.data, r.redact), meta: page.meta };
    }),
    get: authedProcedure.input(z.object({ resource, id: idSchema })).query(({ ctx, input }): Entity => {
      const r = entry(input.resource);
      return redact([resourceOps(r.def).get(ctx.zctx, input.id)], r.redact)[0]!;
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
    delete: authedProcedure.input(z.object({ resource, id: idSchema })).mutation(({ ctx, input }) => {
      const r = entry(input.resource);
      requireOp(input.resource, r, 'delete');
      resourceOps(r.def).delete(ctx.zctx, input.id);
      return { id: input.id };
    }),
  });
}
