import { initTRPC, TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { ApiSession, Caller } from '../core/auth/index';
import type { Ctx, Core } from '../core/context';
import type { AddressListeners, FabricLive, LiveDataPlane } from '../core/dataPlane/index';
import type { MetricPoint } from '../core/ops/index';
import { ApiError, echoValue, unavailable } from '../core/errors';
import { isStoreUnavailable } from '../core/ops/index';
import type { ConsoleUrls, ZitiErrorData } from '../../shared/console';
import { pendingConsoleAudit, recordConsoleMutation, type AuditNote } from './audit';

/** The API session behind the console's cookie, resolved exactly as the REST API resolves `zt-session`. */
export interface ConsoleSession {
  session: ApiSession;
  caller: Caller;
  token: string;
}

export interface MetricHistorySource {
  points(): MetricPoint[];
}

/** Per-request context of a console procedure. */
export interface ConsoleContext {
  core: Core;
  urls: () => ConsoleUrls;
  /** the running router's live state (terminators, circuits), when Weft runs one */
  dataPlane: LiveDataPlane | undefined;
  /** what the routers of this node (built-in and stock) hold live: circuits with their paths, links */
  fabric?: FabricLive;
  /** the last hour of metric samples, when metrics are on */
  metricHistory?: MetricHistorySource;
  /** the listeners behind the advertised address, when Weft runs its own */
  networkAddress?: AddressListeners;
  /** OAuth providers of the public frontend, for share forms */
  shareProviders: string[] | undefined;
  session: ConsoleSession | undefined;
  clientIp: string;
  /** Sets the session cookie on the response (login). */
  setSessionCookie(token: string): void;
  /** Expires the session cookie (logout, dead session). */
  clearSessionCookie(): void;
}

const STATUS_CODES: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

/** An ApiError of the core as a TRPCError; the OpenZiti code, message and field cause travel in `cause`. */
export function toTrpcError(e: ApiError): TRPCError {
  return new TRPCError({ code: STATUS_CODES[e.status] ?? 'INTERNAL_SERVER_ERROR', message: e.message, cause: e });
}

/** The `data.ziti` part of an error: what forms need to show field errors. */
export function zitiData(error: TRPCError): ZitiErrorData | undefined {
  const cause = error.cause;
  if (cause instanceof ApiError) {
    // the console says it in plain words where the core has them (REST keeps OpenZiti's reason), and every field at fault
    const people = cause.forPeople;
    const fieldCause = cause.fieldCause && {
      ...cause.fieldCause,
      reason: people?.plain ?? cause.fieldCause.reason,
      value: safeValue(cause.fieldCause.value),
    };
    return {
      code: cause.code,
      message: cause.message,
      ...(fieldCause ? { cause: fieldCause } : {}),
      ...(people?.plain ? { plain: people.plain } : {}),
      ...(people?.causes ? { causes: people.causes.map((c) => ({ ...c, value: safeValue(c.value) })) } : {}),
    };
  }
  // input validation by the procedure's zod schema (standard-schema issues)
  const issues = (cause as { issues?: Array<{ message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }> } | undefined)?.issues;
  if (error.code === 'BAD_REQUEST' && Array.isArray(issues) && issues.length) {
    const issue = issues[0]!;
    const field = (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.') || '(root)';
    return { code: 'COULD_NOT_VALIDATE', message: 'The supplied request contains an invalid document', cause: { field, reason: issue.message } };
  }
  return undefined;
}

/** Field values echoed back are for display only: keep them short. */
const safeValue = (v: unknown): unknown => echoValue(v, 200);

const t = initTRPC.context<ConsoleContext>().create({
  isDev: false,
  // live streams (events.tail) ping while no event flows, so a dead connection is noticed and reopened
  sse: { ping: { enabled: true, intervalMs: 15_000 } },
  errorFormatter({ shape, error }) {
    const ziti = zitiData(error);
    const internal = error.code === 'INTERNAL_SERVER_ERROR' && !(error.cause instanceof ApiError);
    return {
      ...shape,
      message: internal ? 'Internal error (see the controller log)' : shape.message,
      data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, ziti },
    };
  },
});

/** Maps the core's ApiErrors (thrown by any procedure) to TRPCErrors with the matching code. */
const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof ApiError) throw toTrpcError(result.error.cause);
  // the store cannot serve right now (PostgreSQL away, SQLite busy): 503, as the REST API answers, not an internal error
  if (!result.ok && isStoreUnavailable(result.error.cause)) throw toTrpcError(unavailable());
  return result;
});

export const router = t.router;
export const mergeRouters = t.mergeRouters;
export const createCallerFactory = t.createCallerFactory;

/**
 * Every mutation (the console's writes, its logins and MFA codes) goes into the audit log with its outcome, as the
 * REST route it mirrors (console/audit.ts). Procedures may say more about themselves in `ctx.audit` (a login: who
 * signed in); queries get a note too, unused.
 */
const auditMutations = t.middleware(async ({ ctx, type, path, getRawInput, next }) => {
  const note: AuditNote = {};
  const input = type === 'mutation' ? await getRawInput().catch(() => undefined) : undefined;
  // a write's entry goes in with the write it names (the core's write gate), in its transaction
  const pending = type === 'mutation' ? pendingConsoleAudit(path, input, ctx.session?.caller, ctx.clientIp) : undefined;
  const result = await next({ ctx: { audit: note, pendingAudit: pending } });
  if (type === 'mutation') {
    await recordConsoleMutation(ctx.core, {
      path,
      input,
      note,
      pending,
      caller: ctx.session?.caller,
      sourceAddress: ctx.clientIp,
      ...(result.ok ? { data: result.data } : { error: result.error }),
    });
  }
  return result;
});

/** Anyone (the login procedures, `session.me`). */
export const publicProcedure = t.procedure.use(auditMutations).use(mapErrors);

const notSignedIn = () => new TRPCError({ code: 'UNAUTHORIZED', message: 'Not signed in, or the session has expired' });

/**
 * Any live API session, including one still waiting for MFA (like REST's `partial` routes): the core context of
 * the caller is `ctx.zctx`.
 */
export const partialProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.session) throw notSignedIn();
  // the console's roles may name entities by name (`@laptop-1`): the core resolves them to `@id`
  const zctx: Ctx = { ...ctx.core.ctx(ctx.session.caller), roleNames: true, ...(ctx.pendingAudit ? { onWrite: ctx.pendingAudit.onWrite } : {}) };
  return next({ ctx: { ...ctx, session: ctx.session, zctx } });
});

/** A complete API session (MFA done); the core then checks the caller's permissions in every operation. */
export const authedProcedure = partialProcedure.use(({ ctx, next }) => {
  if (ctx.session.caller.partial) {
    throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Multi-factor authentication is required to complete the sign-in' });
  }
  return next();
});
