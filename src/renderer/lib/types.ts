import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../shared/router';

export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
/** The resource types the generic table and form reach (the server's registry). */
export type ResourceName = RouterInputs['resources']['list']['resource'];
export type { RoleKind } from '../../shared/roleKinds';
export type Me = NonNullable<RouterOutputs['session']['me']>;
export type { Entity, ListPage, SortDir } from '../../shared/console';
