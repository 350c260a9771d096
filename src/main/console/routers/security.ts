import { z } from 'zod';
import { disableMfa, initiateMfa, mfaStatus, recoveryCodesLeft, regenerateRecoveryCodes, verifyMfa, viewRecoveryCodes } from '../../core/auth/index';
import { createSnapshot, integrityResults, startIntegrityCheck } from '../../core/ops/index';
import type { Ctx } from '../../core/context';
import { ApiError } from '../../core/errors';
import { authedProcedure, partialProcedure, router } from '../trpc';

const code = z.object({ code: z.string().min(1, 'is required').max(100) });

/** The caller's MFA enrollment, or null when there is none. */
async function statusOrNull(ctx: Ctx) {
  try {
    const status = (await mfaStatus(ctx)) as {
      id: string;
      isVerified: boolean;
      provisioningUrl?: string;
      recoveryCodes?: string[];
      /** unused recovery codes (a completed enrollment) */
      recoveryCodesLeft?: number;
    };
    if (status.isVerified) status.recoveryCodesLeft = await recoveryCodesLeft(ctx);
    return status;
  } catch (e) {
    if (e instanceof ApiError && e.code === 'NOT_FOUND') return null;
    throw e;
  }
}

/** MFA of the signed-in identity (reachable while partial, as in REST: a policy may demand enrollment first). */
const mfaRouter = router({
  status: partialProcedure.query(({ ctx }) => statusOrNull(ctx.zctx)),
  /** As `POST /current-identity/mfa`; answers with the provisioning URL and recovery codes. */
  enroll: partialProcedure.mutation(async ({ ctx }) => {
    await initiateMfa(ctx.zctx);
    return (await statusOrNull(ctx.zctx))!;
  }),
  /** As `POST /current-identity/mfa/verify`: completes the enrollment (and this session's MFA). */
  verify: partialProcedure.input(code).mutation(async ({ ctx, input }) => {
    await verifyMfa(ctx.zctx, input);
    return { ok: true };
  }),
  /**
   * As `GET /current-identity/mfa/recovery-codes` (a mutation: the TOTP code is spent): the codes of a regeneration
   * through the REST API not shown yet, once; otherwise none (only their digests are stored).
   */
  recoveryCodes: authedProcedure.input(code).mutation(async ({ ctx, input }) => ({
    recoveryCodes: (await viewRecoveryCodes(ctx.zctx, input.code)).recoveryCodes as string[],
  })),
  /** As `POST /current-identity/mfa/recovery-codes`; the new codes are in the answer (and only there). */
  regenerateRecoveryCodes: authedProcedure.input(code).mutation(async ({ ctx, input }) => ({
    recoveryCodes: await regenerateRecoveryCodes(ctx.zctx, input, { shownNow: true }),
  })),
  /** As `DELETE /current-identity/mfa` (a code is needed once the enrollment is complete). */
  disable: authedProcedure.input(z.object({ code: z.string().max(100).optional() })).mutation(async ({ ctx, input }) => {
    await disableMfa(ctx.zctx, input.code);
    return { ok: true };
  }),
});

/** Data integrity check/fix and database snapshots (as `/database/*`, with the same ops permissions). */
const databaseRouter = router({
  // the run's state as it starts (inProgress), so the page polls from here on
  startIntegrityCheck: authedProcedure.input(z.object({ fix: z.boolean() })).mutation(({ ctx, input }) => startIntegrityCheck(ctx.zctx, input.fix)),
  integrityResults: authedProcedure.query(({ ctx }) => integrityResults(ctx.zctx)),
  snapshot: authedProcedure.mutation(async ({ ctx }) => ({ file: await createSnapshot(ctx.zctx) })),
});

export const securityRouter = router({ mfa: mfaRouter, database: databaseRouter });
