import { authenticateCert } from '../../core/auth/index';
import type { Core } from '../../core/context';
import {
  reEnrollAuthenticator,
  requestExtend,
  extendCertificate,
  verifyExtendedCertificate,
  caJwt,
  verifyCa,
  enrollCa,
  enrollmentChallenge,
  enrollmentJwks,
  enrollOtt,
  enrollOttCa,
  enrollRouter,
  enrollToken,
  enrollUpdb,
  extendRouter,
  legacyEnroll,
  networkJwt,
  reEnrollRouter,
  refreshEnrollment,
  createSetupKey,
  enrollWithSetupKey,
  isSetupKey,
  redeemSetupKey,
} from '../../core/enrollment/index';
import {
  apiSessionCertificates,
  createSessionCertificate,
  deleteSessionCertificate,
  getSessionCertificate,
  listSessionCertificates,
  edgeRouters,
} from '../../core/registry';
import { queryString, type ApiName, type ApiRequest, type RouteDef } from '../registry';
import { created, listParams } from './resources';
import type { Authenticator } from './session';

const client: ApiName[] = ['client'];
const mgmt: ApiName[] = ['management'];
const both: ApiName[] = ['client', 'management'];

/** `POST /authenticate?method=cert`: the TLS client certificate of the connection. */
export const certMethod: Authenticator = (core, req) => authenticateCert(core, req.body, req.peerCertificates, { ipAddress: req.ip });

const json = (body: unknown) => ({ raw: { contentType: 'application/json', body: JSON.stringify(body) } });
const bodyField = (req: ApiRequest, name: string): unknown =>
  req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>)[name] : undefined;
const tokenOf = (req: ApiRequest) => queryString(req.query.token) ?? bodyField(req, 'token');
const acceptsJson = (req: ApiRequest) => /application\/json/i.test(String(req.headers.accept ?? ''));

/** Enrollment of identities and routers, CAs, enrollments, routers, certificate extension, ephemeral certificates. */
export function enrollmentRoutes(core: Core): RouteDef[] {
  const reEnrollRoute = (entity: string, kind: 'edge' | 'transit'): RouteDef => ({
    apis: mgmt,
    method: 'POST',
    path: `/${entity}/:id/re-enroll`,
    auth: 'session',
    summary: 'Re-enroll a router: its certificate stops working and a new enrollment JWT replaces any outstanding one',
    handler: async (req) => (await reEnrollRouter(req.ctx, kind, req.params.id!), {}),
  });
  return [
    // ---- enrollment (Client API, no session) ----
    {
      // Weft's own: a setup key traded for a new Device identity and its OTT enrollment JWT (core/enrollment/setupKeys.ts)
      apis: client,
      method: 'POST',
      path: '/weft/setup-keys/redeem',
      auth: 'none',
      summary: "Redeem a setup key ({key, name?}): a new Device identity with the key's role attributes and its enrollment JWT",
      handler: async (req) => ({ status: 201, data: await redeemSetupKey(core, req.body) }),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/weft/setup-keys',
      auth: 'session',
      summary: 'Make a setup key; the reply holds the key itself, shown this once',
      handler: async (req) => {
        const { id, key, enrollmentJwt } = await createSetupKey(req.ctx, req.body);
        return { status: 201, data: { id, key, enrollmentJwt, _links: { self: { href: `./weft/setup-keys/${id}` } } } };
      },
    },
    {
      apis: client,
      method: 'POST',
      path: '/enroll',
      auth: 'none',
      summary: 'Enroll by one-time token (?method=ott|ottca|updb|ca|erott|trott&token=); a CSR as PEM body or JSON',
      handler: async (req) => {
        const { method, result } = await legacyEnroll(core, {
          method: queryString(req.query.method),
          token: queryString(req.query.token),
          body: req.body,
          peerCertificates: req.peerCertificates,
        });
        // OpenZiti answers ott with the PEM certificate unless JSON is asked for
        if (method === 'ott' && !acceptsJson(req)) return { raw: { contentType: 'application/x-pem-file', body: (result as { cert: string }).cert } };
        return { data: result };
      },
    },
    {
      apis: client,
      method: 'POST',
      path: '/enroll/ott',
      auth: 'none',
      summary: 'Enroll by one-time token with a PEM CSR ({token, clientCsr})',
      handler: async (req) => {
        const token = tokenOf(req);
        const csr = bodyField(req, 'clientCsr');
        return { data: await (isSetupKey(token) ? enrollWithSetupKey(core, token, csr, 'clientCsr') : enrollOtt(core, token, csr)) };
      },
    },
    {
      apis: client,
      method: 'POST',
      path: '/enroll/ottca',
      auth: 'none',
      summary: 'Enroll by one-time token with a pre-exchanged client certificate of the enrollment CA (presented on the TLS connection)',
      handler: async (req) => ({ data: await enrollOttCa(core, tokenOf(req), req.peerCertificates) }),
    },
    {
      apis: client,
      method: 'POST',
      path: '/enroll/updb',
      auth: 'none',
      summary: 'Enroll by one-time token (?token=) setting the password',
      handler: async (req) => ({ data: await enrollUpdb(core, tokenOf(req), req.body) }),
    },
    {
      apis: client,
      method: 'POST',
      path: '/enroll/ca',
      auth: 'none',
      summary: 'CA auto enrollment: the presented client certificate of a verified CA creates an identity',
      handler: async (req) => ({ data: await enrollCa(core, req.peerCertificates, req.body) }),
    },
    {
      apis: client,
      method: 'POST',
      path: '/enroll/token',
      auth: 'none',
      summary: 'Enroll with a token header (Authorization: Bearer <JWT>, optional svc-token-issuer-id); with clientCsr for a certificate',
      handler: async (req) => ({ data: await enrollToken(core, req.headers, req.body) }),
    },
    {
      apis: client,
      method: 'POST',
      path: '/enroll/erott',
      auth: 'none',
      summary: 'Enroll an edge router by one-time token ({token, serverCertCsr, certCsr}); returns {ca, cert, serverCert}',
      handler: async (req) => ({ data: await enrollRouter(core, tokenOf(req), (req.body ?? {}) as object) }),
    },
    {
      apis: both,
      method: 'POST',
      path: '/enroll/extend/router',
      auth: 'none',
      summary: "Extend a router's certificates with its current client certificate ({certCsr, serverCertCsr})",
      handler: async (req) => ({ data: await extendRouter(core, req.peerCertificates, req.body) }),
    },
    {
      apis: client,
      method: 'POST',
      path: '/enroll/challenge',
      auth: 'none',
      summary: 'Sign a nonce with the enrollment key ({keyId, nonce})',
      handler: (req) => json(enrollmentChallenge(core, req.body)),
    },
    {
      apis: client,
      method: 'GET',
      path: '/enroll/jwks',
      auth: 'none',
      summary: 'The enrollment signing keys (JWKS)',
      handler: () => json(enrollmentJwks(core)),
    },
    {
      apis: both,
      method: 'GET',
      path: '/network-jwts',
      auth: 'none',
      summary: 'JWTs for bootstrapping trust in this network',
      handler: () => ({ data: [{ name: 'default', token: networkJwt(core) }] }),
    },

    // ---- certificate extension of the current identity ----
    {
      apis: both,
      method: 'POST',
      path: '/current-identity/authenticators/:id/extend',
      auth: 'session',
      summary: 'Extend own certificate with a CSR ({clientCertCsr}); the old certificate works until extend-verify',
      handler: async (req) => ({ data: await extendCertificate(req.ctx, req.params.id!, req.peerCertificates, req.body) }),
    },
    ...['/current-identity/authenticators/:id/extend-verify', '/authenticators/:id/extend-verify'].map((path): RouteDef => ({
      apis: both,
      method: 'POST',
      path,
      auth: 'session',
      summary: 'Confirm receipt of the extended certificate ({clientCert})',
      handler: async (req) => (await verifyExtendedCertificate(req.ctx, req.params.id!, req.body), {}),
    })),

    // ---- ephemeral certificates of the current API session ----
    {
      apis: client,
      method: 'GET',
      path: '/current-api-session/certificates',
      auth: 'session',
      summary: 'List ephemeral certificates of this API session',
      handler: (req) => listSessionCertificates(req.ctx, listParams(req)),
    },
    {
      apis: client,
      method: 'POST',
      path: '/current-api-session/certificates',
      auth: 'session',
      summary: 'Create an ephemeral certificate ({csr})',
      body: apiSessionCertificates.schemas.create,
      handler: async (req) => {
        const { id, certificate, cas: caPems } = await createSessionCertificate(req.ctx, req.body);
        return { status: 201, data: { ...created(id, apiSessionCertificates.entity).data, certificate, cas: caPems } };
      },
    },
    {
      apis: client,
      method: 'GET',
      path: '/current-api-session/certificates/:id',
      auth: 'session',
      summary: 'Get an ephemeral certificate',
      handler: async (req) => ({ data: await getSessionCertificate(req.ctx, req.params.id!) }),
    },
    {
      apis: client,
      method: 'DELETE',
      path: '/current-api-session/certificates/:id',
      auth: 'session',
      summary: 'Delete an ephemeral certificate',
      handler: async (req) => (await deleteSessionCertificate(req.ctx, req.params.id!), {}),
    },

    // ---- management: CAs, enrollments, authenticators, routers ----
    {
      apis: mgmt,
      method: 'GET',
      path: '/cas/:id/jwt',
      auth: 'session',
      summary: 'The CA auto-enrollment JWT (application/jwt)',
      handler: async (req) => ({ raw: { contentType: 'application/jwt', body: await caJwt(req.ctx, req.params.id!) } }),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/cas/:id/verify',
      auth: 'session',
      summary: 'Verify a CA with a PEM certificate (text/plain) it signed whose common name is the verificationToken',
      handler: async (req) => (await verifyCa(req.ctx, req.params.id!, req.body), {}),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/enrollments/:id/refresh',
      auth: 'session',
      summary: 'New expiry, token and JWT for an enrollment ({expiresAt})',
      handler: async (req) => (await refreshEnrollment(req.ctx, req.params.id!, req.body), { data: created(req.params.id!, 'enrollments').data }),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/authenticators/:id/re-enroll',
      auth: 'session',
      summary: 'Revert an authenticator to an enrollment ({expiresAt}): updb -> updb, cert -> ott, cert from a CA -> ottca',
      handler: async (req) => created(await reEnrollAuthenticator(req.ctx, req.params.id!, req.body), 'enrollments'),
    },
    {
      apis: mgmt,
      method: 'POST',
      path: '/authenticators/:id/request-extend',
      auth: 'session',
      summary: 'Flag a certificate authenticator for extension ({rollKeys}); 403 for other authenticators',
      handler: async (req) => (await requestExtend(req.ctx, req.params.id!, req.body), {}),
    },
    reEnrollRoute(edgeRouters.entity, 'edge'),
    reEnrollRoute('routers', 'transit'),
    reEnrollRoute('transit-routers', 'transit'),
  ];
}
