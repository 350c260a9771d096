import type { TRPCError } from '@trpc/server';
import type { Caller } from '../core/auth/index';
import type { Core } from '../core/context';
import { ApiError } from '../core/errors';
import { coversWrite, PendingAudit, recordAudit, routeAction, type AuditEntry } from '../core/ops/index';
import { LOGIN_LINK_PATH } from '../../shared/console';

/**
 * The console's writes in the audit log (core/ops/audit.ts), with source `console`: every tRPC mutation, successful
 * or not, described as the REST route it mirrors (so one filter finds a change whichever way it was made).
 */

/** What a procedure tells the audit log about itself while it runs (a login: who signed in). */
export interface AuditNote {
  caller?: Caller;
}

type Input = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const field = (o: unknown, k: string): string | undefined => (o && typeof o === 'object' ? str((o as Input)[k]) : undefined);

interface Target {
  /** the REST route (method and template) the procedure does the same as */
  route?: string;
  action?: string;
  entityType?: string;
  entityId?: string;
}

/** Procedure path → the REST route it mirrors and where its entity id is. */
const ROUTES: Record<string, (input: Input, data: unknown) => Target> = {
  'resources.create': (i, d) => ({ route: `POST /${str(i.resource)}`, entityId: field(d, 'id') }),
  'resources.update': (i) => ({ route: `${i.op === 'update' ? 'PUT' : 'PATCH'} /${str(i.resource)}/:id`, entityId: str(i.id) }),
  'resources.delete': (i) => ({ route: `DELETE /${str(i.resource)}/:id`, entityId: str(i.id) }),
  'identities.disable': (i) => ({ route: 'POST /identities/:id/disable', entityId: str(i.id) }),
  'identities.enable': (i) => ({ route: 'POST /identities/:id/enable', entityId: str(i.id) }),
  'identities.resetMfa': (i) => ({ route: 'DELETE /identities/:id/mfa', entityId: str(i.id) }),
  'identities.createEnrollment': (_i, d) => ({ route: 'POST /enrollments', entityId: field(d, 'id') }),
  'identities.refreshEnrollment': (i) => ({ route: 'POST /enrollments/:id/refresh', entityId: str(i.id) }),
  'enrollment.verifyCa': (i) => ({ route: 'POST /cas/:id/verify', entityId: str(i.id) }),
  'enrollment.reEnrollRouter': (i) => ({
    route: `POST /${i.kind === 'transit' ? 'transit-routers' : 'edge-routers'}/:id/re-enroll`,
    entityId: str(i.id),
  }),
  'identityTracing.update': (i) => ({ route: 'PUT /identities/:id/trace', entityId: str(i.identityId) }),
  'serviceConfigOverrides.associate': (i) => ({ route: 'POST /identities/:id/service-configs', entityId: str(i.identityId) }),
  'serviceConfigOverrides.remove': (i) => ({ route: 'DELETE /identities/:id/service-configs', entityId: str(i.identityId) }),
  'security.mfa.enroll': () => ({ route: 'POST /current-identity/mfa' }),
  'security.mfa.verify': () => ({ route: 'POST /current-identity/mfa/verify' }),
  'security.mfa.recoveryCodes': () => ({ route: 'GET /current-identity/mfa/recovery-codes' }),
  'security.mfa.regenerateRecoveryCodes': () => ({ route: 'POST /current-identity/mfa/recovery-codes' }),
  'security.mfa.disable': () => ({ route: 'DELETE /current-identity/mfa' }),
  'security.database.startIntegrityCheck': (i) => ({ route: `POST /database/${i.fix === true ? 'fix' : 'check'}-data-integrity` }),
  'security.database.snapshot': () => ({ route: 'POST /database/snapshot' }),
  'ascode.import': () => ({ route: 'POST /ascode/import' }),
  'policyTests.create': (_i, d) => ({ route: 'POST /weft/policy-tests', entityId: field(d, 'id') }),
  'policyTests.delete': (i) => ({ route: 'DELETE /weft/policy-tests/:id', entityId: str(i.id) }),
  'policyTests.run': () => ({ route: 'POST /weft/policy-tests/run', action: 'read' }),
  'setupKeys.create': (_i, d) => ({ route: 'POST /weft/setup-keys', entityId: field(d, 'id') }),
  'setupKeys.revoke': (i) => ({ route: 'PATCH /weft/setup-keys/:id', entityId: str(i.id) }),
  'shares.create': (_i, d) => ({ route: 'POST /shares', entityId: field(d, 'serviceId') }),
  'shares.remove': (i) => ({ route: 'DELETE /shares/:id', entityId: str(i.configId) }),
  'session.login': () => ({ action: 'login', entityType: 'api-sessions' }),
  'session.mfaCode': () => ({ action: 'mfa', entityType: 'api-sessions' }),
  'session.logout': () => ({ action: 'logout', entityType: 'api-sessions' }),
};

/** The OpenZiti error code of a failed procedure (the core's ApiError), else the tRPC code. */
function errorCode(error: TRPCError): string {
  return error.cause instanceof ApiError ? error.cause.code : error.code;
}

export interface ConsoleMutation {
  path: string;
  input: unknown;
  /** the entry the write gate may have written already (pendingConsoleAudit) */
  pending?: PendingAudit;
  /** the procedure's answer, or its error */
  data?: unknown;
  error?: TRPCError;
  /** the console session's caller before the call */
  caller?: Caller;
  note: AuditNote;
  sourceAddress: string;
}

/** What a procedure's entry says: its target and how it reads as a REST route. */
function describe(path: string, input: Input, data: unknown) {
  const target = ROUTES[path]?.(input, data) ?? {};
  const route = target.route ? routeAction(target.route.split(' ')[0]!, target.route.slice(target.route.indexOf(' ') + 1)) : undefined;
  return { target, route };
}

/**
 * A mutation mirroring a REST write: its entry, written by the core's write gate with the write it names, in that
 * write's transaction (recordConsoleMutation settles it once the procedure has succeeded).
 */
export function pendingConsoleAudit(path: string, rawInput: unknown, caller: Caller | undefined, sourceAddress: string): PendingAudit | undefined {
  const input = (rawInput && typeof rawInput === 'object' ? rawInput : {}) as Input;
  const { target, route } = describe(path, input, undefined);
  if (!route || target.action) return undefined;
  const entry: AuditEntry = {
    source: 'console',
    action: route.action,
    entityType: route.entityType,
    entityId: target.entityId,
    route: target.route,
    caller,
    sourceAddress,
    outcome: 'success',
  };
  return new PendingAudit(entry, coversWrite(route.entityType, target.entityId));
}

/** Records one console mutation. Procedures not in the table above are recorded by their path. */
export async function recordConsoleMutation(core: Core, m: ConsoleMutation): Promise<void> {
  const input = (m.input && typeof m.input === 'object' ? m.input : {}) as Input;
  const { target, route: described } = describe(m.path, input, m.data);
  const entry: AuditEntry = {
    source: 'console',
    action: target.action ?? described?.action ?? m.path.slice(m.path.lastIndexOf('.') + 1),
    entityType: target.entityType ?? described?.entityType ?? m.path.slice(0, Math.max(0, m.path.lastIndexOf('.'))),
    entityId: target.entityId,
    route: target.route ?? m.path,
    // a login names who signed in (if anyone), not the session the browser had before
    caller: m.path === 'session.login' ? m.note.caller : (m.note.caller ?? m.caller),
    sourceAddress: m.sourceAddress,
    outcome: m.error ? 'failure' : 'success',
    errorCode: m.error && errorCode(m.error),
  };
  if (m.path === 'session.login') {
    entry.principal = str(input.username);
    entry.authMethod = 'password';
  }
  if (entry.entityType === 'api-sessions') entry.entityId = entry.caller?.apiSessionId;
  if (m.pending && !m.error) await m.pending.settle(core, entry);
  else await recordAudit(core, entry);
}

/** The one-time login link (not a tRPC call): a login of the default admin; also the sign-in through an IdP (`via`). */
export async function recordLinkLogin(
  core: Core,
  outcome: { caller?: Caller; errorCode?: string },
  sourceAddress: string,
  /** a login by another route than the one-time link (an IdP's callback) */
  via: { route: string; authMethod: string } = { route: `GET ${LOGIN_LINK_PATH}`, authMethod: 'link' },
): Promise<void> {
  await recordAudit(core, {
    source: 'console',
    action: 'login',
    entityType: 'api-sessions',
    entityId: outcome.caller?.apiSessionId,
    route: via.route,
    caller: outcome.caller,
    authMethod: via.authMethod,
    sourceAddress,
    outcome: outcome.errorCode ? 'failure' : 'success',
    errorCode: outcome.errorCode,
  });
}
