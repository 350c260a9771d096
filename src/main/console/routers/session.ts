import { z } from 'zod';
import { authenticateMfa, apiSessionsOf, loginSigners } from '../../core/auth/index';
import { invalidAuth } from '../../core/errors';
import { passwordLogin } from '../auth';
import { partialProcedure, publicProcedure, router, type ConsoleContext } from '../trpc';

/** Who is signed in: null without a live session; `partial` while MFA is outstanding. */
async function me(ctx: ConsoleContext) {
  if (!ctx.session) return null;
  const { session, caller } = ctx.session;
  const view = await apiSessionsOf(ctx.core).view(ctx.core.ctx(caller), session);
  return {
    identity: { id: caller.identityId, name: caller.identityName, isAdmin: caller.isAdmin },
    partial: !!caller.partial,
    authQueries: (view.authQueries ?? []) as Array<{ typeId: string; isTotpEnrolled?: boolean }>,
    expiresAt: view.expiresAt as string,
  };
}

export const sessionRouter = router({
  me: publicProcedure.query(({ ctx }) => me(ctx)),

  /** The external JWT signers one can sign in with through their IdP (as the Client API shows them to anyone). */
  ssoSigners: publicProcedure.query(async ({ ctx }) => (await loginSigners(ctx.core)).map((s) => ({ id: s.id, name: s.name }))),

  /** Username and password, as `POST /authenticate?method=password` (auth policy, lockout, MFA all apply). */
  login: publicProcedure
    .input(z.object({ username: z.string().min(1, 'is required').max(100), password: z.string().min(1, 'is required').max(100) }))
    .mutation(async ({ ctx, input }) => {
      const token = await passwordLogin(ctx.core, input, ctx.clientIp);
      // a new login replaces the browser's previous session
      if (ctx.session) await apiSessionsOf(ctx.core).remove(ctx.session.session.id);
      const resolved = await apiSessionsOf(ctx.core).resolve(token);
      // ended already (the identity was disabled or locked meanwhile)
      if (!resolved) throw invalidAuth();
      ctx.setSessionCookie(token);
      ctx.audit.caller = resolved.caller;
      return me({ ...ctx, session: { session: resolved.session, caller: resolved.caller, token } });
    }),

  /** Ends the API session (as `DELETE /current-api-session`) and clears the cookie. */
  logout: publicProcedure.mutation(async ({ ctx }) => {
    if (ctx.session) await apiSessionsOf(ctx.core).remove(ctx.session.session.id);
    ctx.clearSessionCookie();
    return { ok: true };
  }),

  /** The TOTP (or recovery) code that completes a partial session, as `POST /authenticate/mfa`. */
  mfaCode: partialProcedure.input(z.object({ code: z.string().min(1, 'is required').max(100) })).mutation(async ({ ctx, input }) => {
    await authenticateMfa(ctx.zctx, input);
    return { ok: true };
  }),
});
