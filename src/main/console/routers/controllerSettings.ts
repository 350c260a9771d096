import { z } from 'zod';
import { effectiveSettings } from '../../core/registry';
import { authedProcedure, router } from '../trpc';

export interface EffectiveSettings {
  id: string;
  effective: { oidc: { redirectUris: string[]; postLogoutUris: string[] } };
  /** the controller's own values; null (or a missing list) inherits the global one */
  instance: { oidc: { redirectUris?: string[] | null; postLogoutUris?: string[] | null } | null };
}

/** Reads of controller settings beyond the generic resource: the effective view. */
export const controllerSettingsRouter = router({
  /** As `GET /controller-settings/{id}/effective` (id: 'global' or a controller id, with or without its own settings). */
  effective: authedProcedure
    .input(z.object({ id: z.string().min(1).max(200) }))
    .query(({ ctx, input }) => effectiveSettings(ctx.zctx, input.id) as unknown as EffectiveSettings),
});
