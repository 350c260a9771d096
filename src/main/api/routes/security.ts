import {
  authenticateExtJwt,
  disableBody,
  disableIdentity,
  enableIdentity,
  authenticateMfa,
  createTotpToken,
  disableMfa,
  initiateMfa,
  mfaCodeBody,
  mfaQrCode,
  mfaStatus,
  regenerateRecoveryCodes,
  removeIdentityMfa,
  verifyMfa,
  viewRecoveryCodes,
} from '../../core/auth/index';
import { createSnapshot, integrityResults, startIntegrityCheck, getTrace, traceSpecSchema, updateTrace } from '../../core/ops/index';
import type { Core } from '../../core/context';
import { controllerSettings, effectiveSettings, listPublicExternalJwtSigners, resourceOps } from '../../core/registry';
import type { ApiName, ApiRequest, RouteDef } from '../registry';
import { listParams } from './resources';
import type { Authenticator } from './session';

const both: ApiName[] = ['client', 'management'];
const mgmt: ApiName[] = ['management'];

function header(req: ApiRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
}

/** The MFA code of requests that take it in the `mfa-validation-code` header (or a `{code}` body). */
function validationCode(req: ApiRequest): string | undefined {
  const body = req.body as { code?: unknown } | undefined;
  return header(req, 'mfa-validation-code') ?? (typeof body?.code === 'string' ? body.code : undefined);
}

/** POST /authenticate?method=ext-jwt */
export const extJwtMethod: Authenticator = (core, req) =>
  authenticateExtJwt(core, {
    authorization: header(req, 'authorization'),
    ztSession: header(req, 'zt-session'),
    body: req.body,
    client: { ipAddress: req.ip },
  });

/** MFA, external JWT signers, identity lifecycle and tracing, controller settings, database operations. */
export function securityRoutes(core: Core): RouteDef[] {
  const settings = resourceOps(controllerSettings);
  const mfaSelf = { _links: { self: { href: './current-identity/mfa' } } };
  return [
    // ---- MFA of the current identity; enrollment is reachable by partial sessions (a policy may require TOTP)
    {
      apis: both,
      method: 'POST',
      path: '/authenticate/mfa',
      auth: 'partial',
      body: mfaCodeBody,
      summary: 'Complete MFA authentication with a TOTP or recovery code',
      handler: async (req) => (await authenticateMfa(req.ctx, req.body), {}),
    },
    {
      apis: both,
      method: 'POST',
      path: '/current-identity/mfa',
      auth: 'partial',
      summary: 'Initiate MFA enrollment (TOTP)',
      handler: async (req) => ({ status: 201, data: { id: await initiateMfa(req.ctx), ...mfaSelf } }),
    },
    {
      apis: both,
      method: 'GET',
      path: '/current-identity/mfa',
      auth: 'partial',
      summary: 'MFA enrollment status (provisioning URL and recovery codes while pending)',
      handler: async (req) => ({ data: await mfaStatus(req.ctx) }),
    },
    {
      apis: both,
      method: 'DELETE',
      path: '/current-identity/mfa',
      auth: 'session',
      summary: 'Disable MFA (code in header mfa-validation-code; none needed for an unfinished enrollment)',
      handler: async (req) => (await disableMfa(req.ctx, validationCode(req)), {}),
    },
    {
      apis: both,
      method: 'GET',
      path: '/current-identity/mfa/qr-code',
      auth: 'partial',
      summary: 'The provisioning QR code (PNG) of a pending enrollment',
      handler: async (req) => ({ raw: { contentType: 'image/png', body: await mfaQrCode(req.ctx) } }),
    },
    {
      apis: both,
      method: 'POST',
      path: '/current-identity/mfa/verify',
      auth: 'partial',
      body: mfaCodeBody,
      summary: 'Complete MFA enrollment with a TOTP code',
      handler: async (req) => (await verifyMfa(req.ctx, req.body), {}),
    },
    {
      apis: both,
      method: 'GET',
      path: '/current-identity/mfa/recovery-codes',
      auth: 'session',
      summary: 'View the recovery codes (TOTP code in header mfa-validation-code)',
      handler: async (req) => ({ data: await viewRecoveryCodes(req.ctx, validationCode(req)) }),
    },
    {
      apis: both,
      method: 'POST',
      path: '/current-identity/mfa/recovery-codes',
      auth: 'session',
      body: mfaCodeBody,
      summary: 'Replace the recovery codes',
      handler: async (req) => (await regenerateRecoveryCodes(req.ctx, req.body), {}),
    },
    {
      apis: both,
      method: 'POST',
      path: '/current-api-session/totp-token',
      auth: 'session',
      body: mfaCodeBody,
      summary: 'A signed token proving a TOTP check now (for posture responses)',
      handler: async (req) => ({ data: await createTotpToken(req.ctx, req.body) }),
    },

    // ---- identity lifecycle
    {
      apis: mgmt,
      method: 'DELETE',
      path: '/identities/:id/mfa',
      auth: 'session',
      summary: 'Remove MFA from an identity',
      handler: async (req) => (await removeIdentityMfa(req.ctx, req.params.id!), {}),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/identities/:id/disable',
      auth: 'session',
      body: disableBody,
      summary: 'Disable an identity for durationMinutes (0 = until enabled); ends its API sessions',
      handler: async (req) => (await disableIdentity(req.ctx, req.params.id!, req.body), {}),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/identities/:id/enable',
      auth: 'session',
      summary: 'Enable an identity (clears any disable or lockout)',
      handler: async (req) => (await enableIdentity(req.ctx, req.params.id!), {}),
    },
    {
      apis: mgmt,
      method: 'PUT',
      path: '/identities/:id/trace',
      auth: 'session',
      body: traceSpecSchema,
      summary: 'Enable or disable data flow tracing for an identity',
      handler: async (req) => {
        const t = await updateTrace(req.ctx, req.params.id!, req.body);
        return { data: { enabled: t.enabled, traceId: t.traceId, until: t.until } };
      },
    },
    {
      apis: mgmt,
      method: 'GET',
      path: '/identities/:id/trace',
      auth: 'session',
      summary: 'The data flow tracing state of an identity',
      handler: async (req) => ({ data: await getTrace(req.ctx, req.params.id!) }),
    },

    // ---- external JWT signers
    {
      apis: ['client'],
      method: 'GET',
      path: '/external-jwt-signers',
      auth: 'none',
      summary: 'The enabled external JWT signers (public view)',
      handler: (req) => listPublicExternalJwtSigners(core, listParams(req)),
    },

    // ---- controller settings (OpenZiti's spec also puts update/patch/delete under .../effective)
    {
      apis: mgmt,
      method: 'GET',
      path: '/controller-settings/:id/effective',
      auth: 'session',
      summary: "A controller's effective settings: global, overridden by its own",
      handler: async (req) => ({ data: await effectiveSettings(req.ctx, req.params.id!) }),
    },
    ...(['PUT', 'PATCH'] as const).map((method): RouteDef => ({
      apis: mgmt,
      method,
      path: '/controller-settings/:id/effective',
      auth: 'session',
      summary: `${method === 'PUT' ? 'Update' : 'Patch'} a controller setting`,
      body: controllerSettings.schemas[method === 'PUT' ? 'update' : 'patch'],
      handler: async (req) => (await settings.update(req.ctx, req.params.id!, req.body, method === 'PUT' ? 'update' : 'patch'), {}),
    })),
    {
      apis: mgmt,
      method: 'DELETE',
      path: '/controller-settings/:id/effective',
      auth: 'session',
      summary: 'Delete a controller setting',
      handler: async (req) => (await settings.delete(req.ctx, req.params.id!), {}),
    },

    // ---- database operations
    {
      apis: mgmt,
      method: 'POST',
      path: '/database/check-data-integrity',
      auth: 'session',
      summary: 'Start a data integrity check (one run at a time)',
      handler: async (req) => (await startIntegrityCheck(req.ctx, false), { status: 202, data: {} }),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/database/fix-data-integrity',
      auth: 'session',
      summary: 'Start a data integrity check that repairs what it finds',
      handler: async (req) => (await startIntegrityCheck(req.ctx, true), { status: 202, data: {} }),
    },
    {
      apis: mgmt,
      method: 'GET',
      path: '/database/data-integrity-results',
      auth: 'session',
      summary: 'The results of the last data integrity run',
      handler: async (req) => ({ data: await integrityResults(req.ctx) }),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/database/snapshot',
      auth: 'session',
      summary: 'Write a consistent copy of the database into the data directory',
      handler: async (req) => (await createSnapshot(req.ctx), {}),
    },
  ];
}
