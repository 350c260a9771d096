import { createHash, randomBytes, randomUUID, X509Certificate } from 'node:crypto';
import type { Core } from '../core';
import { ApiError, invalidAuth } from '../errors';
import type { ApiObject } from '../entities/resource';
import { isDisabled, LOGIN_IDENTITY, type LoginIdentity } from './disabled';
import { markUsedOnce } from './usedOnce';
import { fingerprintSha1 } from '../pki/index';
import { getRow, json, rowShape, type Decoded } from '../store/rows';
import { API_SESSION, apiSessionsOf, callerOf, extJwtAuthQueries, type ApiSession, type AuthQuery } from './apiSessions';
import { authenticatePassword, type AuthenticateBody, type LoginOptions } from './authenticate';
import { authenticateCert } from './certAuth';
import { authenticateExtJwt, bearerOf, completeExtJwtFactor } from './extJwt';
import { authenticateMfa, disableMfa, initiateMfa, mfaStatus, verifyMfa } from './mfa';
import { isTotpEnrolled } from './mfaRecords';
import {
  claimHash,
  controllerKeysOf,
  OIDC_CLIENT_IDS,
  oidcLifetimes,
  TOKEN_TYPE_ACCESS,
  TOKEN_TYPE_REFRESH,
  verifyControllerJwt,
  verifyOidcToken,
  type OidcTokenClaims,
} from './oidcTokens';

/**
 * OpenZiti's OIDC authentication (controller/oidc_auth in OpenZiti, a zitadel/oidc provider with two native clients,
 * `openziti` and `native`): the authorization code flow with PKCE, whose login steps are OpenZiti's own endpoints
 * (/oidc/login/username|password|cert|ext-jwt, then /oidc/login/totp for the TOTP factor), and the token endpoint
 * (authorization_code, refresh_token, token exchange). Every login goes through the legacy login pipeline
 * (authenticate.ts: auth policies, disabled identities, lockouts, secondary factors), which makes an `oidc` API
 * session: partial until the factors pass, then named by the JWT access tokens issued for it (apiSessions.ts
 * resolves them). Logging out, revoking or disabling the identity deletes the session, and with it every token.
 *
 * Everything stateful is in the database (any node of a PostgreSQL network can serve any step): authorization
 * requests with their codes (`oidc_auth_requests`: the request's handle and its code as SHA-256 digests, the code
 * single-use and short-lived) and used refresh tokens (`used_once`: each refresh token is good for one refresh).
 */

/** OpenZiti drops abandoned authorization requests after 10 minutes. */
const AUTH_REQUEST_TTL_MS = 10 * 60_000;
/** An authorization code is exchanged at once by every client; it lives at most this long (and never past its request). */
const CODE_TTL_MS = 5 * 60_000;
/** Scopes OpenZiti's provider keeps (others are dropped, as zitadel does for scopes a client may not ask for). */
const KNOWN_SCOPES = ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'];
const GRANT_CODE = 'authorization_code';
const GRANT_REFRESH = 'refresh_token';
const GRANT_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const TOKEN_TYPES = {
  access: 'urn:ietf:params:oauth:token-type:access_token',
  refresh: 'urn:ietf:params:oauth:token-type:refresh_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
} as const;

export type OidcLoginMethod = 'password' | 'cert' | 'ext-jwt';

/** An OAuth error (RFC 6749 5.2: `error`, `error_description`), answered as JSON with `status`. */
export class OidcError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

/** An authorization request error that cannot go back to the client (no valid redirect URI): answered 400 as text. */
export class OidcRequestError extends Error {}

const digest = (value: string) => createHash('sha256').update(value).digest('hex');
/** An authorization request's row. */
const AUTH_REQUEST = rowShape({
  id: 'string',
  client_id: 'string',
  redirect_uri: 'string',
  state: 'string?',
  nonce: 'string?',
  scopes: json<string[]>(),
  code_challenge: 'string',
  code_challenge_method: 'string',
  requested_method: 'string?',
  config_types: json<string[]>(),
  remote_address: 'string',
  cert_fingerprints: json<string[]>(),
  api_session_id: 'string?',
  amr: json<string[]>(),
  auth_time: 'datetime?',
  code_digest: 'string?',
  code_expires_at: 'datetime?',
  code_used_at: 'datetime?',
  expires_at: 'datetime',
  created_at: 'datetime',
});
type AuthRequest = Decoded<typeof AUTH_REQUEST>;
/** The identity columns a token's claims come from. */
const OIDC_IDENTITY = rowShape({
  ...LOGIN_IDENTITY,
  sdk_info: json<Record<string, string> | null>('?'),
  env_info: json<Record<string, string> | null>('?'),
});
type OidcIdentity = Decoded<typeof OIDC_IDENTITY>;
const AUTHENTICATOR_FLAGS = rowShape({ method: 'string', is_issued_by_network: 'bool', is_extend_requested: 'bool', is_key_roll_requested: 'bool' });
const SESSION_ID = rowShape({ id: 'string' });
const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

// ---- issuer and discovery -------------------------------------------------------------------------------------

/** The parsed server certificate per core, kept while the core presents that certificate (it changes with new names). */
const serverCerts = new WeakMap<Core, { pem: string; cert: X509Certificate }>();

/**
 * The issuer a request's Host header names, as OpenZiti has one per address of the API (`https://<host:port>/oidc`,
 * any DNS or IP name of the API's server certificate with the API's port): clients derive the issuer from the URL they
 * use and check it against the discovery document. Any other Host gets the advertised URL's issuer.
 */
export function oidcIssuer(core: Core, host: string | undefined): string {
  const advertised = new URL(core.config.apiPublicUrl);
  const fallback = `${advertised.origin}/oidc`;
  const m = host ? /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(host) : null;
  if (!m) return fallback;
  const name = m[1]!.replace(/^\[|\]$/g, '');
  if ((m[2] ?? '443') !== (advertised.port || '443')) return fallback;
  let parsed = serverCerts.get(core);
  if (parsed?.pem !== core.pki.server.certPem) {
    parsed = { pem: core.pki.server.certPem, cert: new X509Certificate(core.pki.server.certPem) };
    serverCerts.set(core, parsed);
  }
  const cert = parsed.cert;
  const covered = /^[\d.]+$/.test(name) || name.includes(':') ? cert.checkIP(name) !== undefined : cert.checkHost(name) !== undefined;
  return covered ? `https://${host!}/oidc` : fallback;
}

/** /oidc/.well-known/openid-configuration: what this provider does (a subset of zitadel's document in OpenZiti). */
export function oidcDiscovery(core: Core, issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    revocation_endpoint: `${issuer}/revoke`,
    end_session_endpoint: `${issuer}/end_session`,
    jwks_uri: `${issuer}/keys`,
    scopes_supported: ['openid', 'offline_access'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [GRANT_CODE, GRANT_REFRESH, GRANT_EXCHANGE],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [core.jwt.alg],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    claims_supported: ['sub', 'aud', 'exp', 'iat', 'iss', 'auth_time', 'nonce', 'amr', 'azp', 'client_id', 'at_hash', 'name', 'sid', 'z_ia', 'z_eid'],
    code_challenge_methods_supported: ['S256'],
    request_parameter_supported: false,
    ui_locales_supported: ['en'],
  };
}

/** /oidc/keys: the keys tokens are signed with (this node's, and the other nodes' of a PostgreSQL network). */
export async function oidcJwks(core: Core): Promise<{ keys: Array<Record<string, unknown>> }> {
  return { keys: await controllerKeysOf(core).jwks() };
}

// ---- authorization requests -------------------------------------------------------------------------------------

/**
 * Redirect URIs of OpenZiti's native clients (its defaults): `openziti://auth/callback`, or `/auth/callback` on a
 * loopback address, any port, http or https (RFC 8252 7.3).
 */
function allowedRedirect(uri: string, path: string): boolean {
  if (uri === `openziti:/${path}`) return true;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1';
  return (u.protocol === 'http:' || u.protocol === 'https:') && loopback && u.pathname === path && !u.search && !u.hash && !u.username;
}

/** `uri` with these query parameters added (in this order: `code` last, where the C SDK reads it to the end). */
function withParams(uri: string, params: Array<[string, string | undefined]>): string {
  const u = new URL(uri);
  for (const [k, v] of params) if (v !== undefined && v !== '') u.searchParams.append(k, v);
  return u.toString();
}

export interface AuthorizeParams {
  client_id?: string;
  redirect_uri?: string;
  response_type?: string;
  scope?: string;
  state?: string;
  nonce?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  prompt?: string;
  /** OpenZiti's own: the login method the client will use (password, cert, ext-jwt) */
  method?: string;
  /** OpenZiti's own: config types for the session (names or ids) */
  configTypes?: string[];
}

/**
 * /oidc/authorize: validates the request as zitadel does for OpenZiti's native clients, stores it, and returns where
 * the client logs in (`/oidc/login/<method>?authRequestID=<id>`, by its `method` parameter, else certificate when it
 * presented one, else username). Errors go back to the client's redirect URI (`location`), or, when that is not
 * usable, are thrown as OidcRequestError. PKCE with S256 is required.
 */
export async function oidcAuthorize(
  core: Core,
  p: AuthorizeParams,
  client: { ipAddress: string; peerCertificates: Buffer[] },
): Promise<{ location: string }> {
  if (!p.client_id) throw new OidcRequestError('auth request is missing client_id');
  if (!p.redirect_uri) throw new OidcRequestError('auth request is missing redirect_uri');
  if (!OIDC_CLIENT_IDS.includes(p.client_id)) throw new OidcRequestError('unable to retrieve client by id');
  if (!allowedRedirect(p.redirect_uri, '/auth/callback')) {
    throw new OidcRequestError('The requested redirect_uri is missing in the client configuration.');
  }
  const fail = (error: string, description: string) => ({
    location: withParams(p.redirect_uri!, [
      ['error', error],
      ['error_description', description],
      ['state', p.state],
    ]),
  });
  const prompts = (p.prompt ?? '').split(' ').filter(Boolean);
  if (prompts.includes('none') && prompts.length > 1)
    return fail('invalid_request', 'The prompt parameter `none` must only be used as a single value');
  const scopes = (p.scope ?? '').split(' ').filter(Boolean);
  if (!scopes.length) return fail('invalid_request', 'The scope of your request is missing. Please ensure some scopes are requested.');
  if (!p.response_type) return fail('invalid_request', 'The response type is missing in your request.');
  if (p.response_type !== 'code') return fail('unauthorized_client', 'The requested response type is missing in the client configuration.');
  if (!p.code_challenge) return fail('invalid_request', 'code_challenge is required (PKCE)');
  if (p.code_challenge_method !== 'S256') return fail('invalid_request', 'transform algorithm not supported: code_challenge_method must be S256');
  if (prompts.length === 1 && prompts[0] === 'none') return fail('login_required', 'The user must log in');
  const id = randomUUID();
  const now = core.clock.now();
  await core.store.runSql(
    `INSERT INTO oidc_auth_requests (id, client_id, redirect_uri, state, nonce, scopes, code_challenge, code_challenge_method,
       requested_method, config_types, remote_address, cert_fingerprints, expires_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    digest(id),
    p.client_id,
    p.redirect_uri,
    p.state ?? null,
    p.nonce ?? null,
    JSON.stringify(scopes.filter((s) => KNOWN_SCOPES.includes(s))),
    p.code_challenge,
    p.code_challenge_method,
    p.method ?? null,
    JSON.stringify((p.configTypes ?? []).filter((c) => typeof c === 'string' && c.length <= 255).slice(0, 100)),
    client.ipAddress,
    JSON.stringify(client.peerCertificates.slice(0, 1).map((c) => fingerprintSha1(c))),
    new Date(now.getTime() + AUTH_REQUEST_TTL_MS).toISOString(),
    now.toISOString(),
  );
  const page =
    p.method === 'password'
      ? 'username'
      : p.method === 'ext-jwt'
        ? 'ext-jwt'
        : p.method === 'cert' || client.peerCertificates.length
          ? 'cert'
          : 'username';
  return { location: `/oidc/login/${page}?authRequestID=${encodeURIComponent(id)}` };
}

async function loadRequest(core: Core, id: string | undefined): Promise<AuthRequest | undefined> {
  if (!id || id.length > 100) return undefined;
  return getRow(
    core.store,
    AUTH_REQUEST,
    'SELECT * FROM oidc_auth_requests WHERE id = ? AND expires_at > ?',
    digest(id),
    core.clock.now().toISOString(),
  );
}

// ---- the login steps --------------------------------------------------------------------------------------------

export interface OidcLoginState {
  /** every factor passed: the client goes on to the authorize callback for its code */
  done: boolean;
  /** the outstanding secondary factors (OpenZiti's auth queries: TOTP, EXT-JWT) */
  authQueries: AuthQuery[];
  /** TOTP is outstanding (OpenZiti's `totp-required` header) */
  totpRequired: boolean;
  identityId: string;
  identityName: string;
  apiSessionId: string;
}

export interface OidcLoginInput {
  method: OidcLoginMethod;
  authRequestId: string | undefined;
  /** username and password (password logins), config types, envInfo and sdkInfo */
  body: AuthenticateBody;
  peerCertificates: Buffer[];
  /** the Authorization header (ext-jwt: the external JWT as a bearer token) */
  authorization: string | undefined;
  ipAddress: string;
}

/** The session of a request whose primary login passed, with its identity; 401 INVALID_AUTH otherwise. */
async function requestSession(core: Core, req: AuthRequest | undefined): Promise<{ req: AuthRequest; session: ApiSession; identity: LoginIdentity }> {
  if (!req?.api_session_id) throw invalidAuth();
  const session = await getRow(core.store, API_SESSION, 'SELECT * FROM api_sessions WHERE id = ?', req.api_session_id);
  const identity = session && (await getRow(core.store, LOGIN_IDENTITY, 'SELECT * FROM identities WHERE id = ?', session.identity_id));
  if (!session || !identity || isDisabled(identity, core.clock.now())) throw invalidAuth();
  return { req, session, identity };
}

async function loginState(core: Core, session: ApiSession, identity: LoginIdentity): Promise<OidcLoginState> {
  const authQueries: AuthQuery[] = [];
  const totpRequired = session.is_mfa_required && !session.is_mfa_complete;
  if (totpRequired) {
    authQueries.push({
      typeId: 'TOTP',
      provider: core.config.brand,
      format: 'numeric',
      httpMethod: 'POST',
      httpUrl: './oidc/login/totp',
      minLength: 6,
      maxLength: 8,
      isTotpEnrolled: await isTotpEnrolled(core, identity.id),
    });
  }
  if (session.is_ext_jwt_required && !session.is_ext_jwt_complete) authQueries.push(...(await extJwtAuthQueries(core, session)));
  return {
    done: !apiSessionsOf(core).isPartial(session),
    authQueries,
    totpRequired,
    identityId: identity.id,
    identityName: identity.name,
    apiSessionId: session.id,
  };
}

/**
 * POST /oidc/login/<method>: the primary login of an authorization request, through the legacy pipeline (auth
 * policy, disabled identity, lockout, secondary factors). Once it passed, a second post presents what the secondary
 * factors need (an external JWT as bearer token; the C SDK posts it again to the same path). 401 INVALID_AUTH on
 * any failure.
 */
export async function oidcLogin(core: Core, input: OidcLoginInput): Promise<OidcLoginState> {
  const req = await loadRequest(core, input.authRequestId);
  if (!req) throw invalidAuth();
  if (req.api_session_id) {
    const { session, identity } = await requestSession(core, req);
    const bearer = bearerOf(input.authorization);
    if (bearer && session.is_ext_jwt_required && !session.is_ext_jwt_complete) {
      return loginState(core, await completeExtJwtFactor(core, session, bearer), identity);
    }
    return loginState(core, session, identity);
  }
  const client = { ipAddress: input.ipAddress };
  const opts: LoginOptions = { oidc: { expiresAt: new Date(req.expires_at) } };
  let view: ApiObject;
  if (input.method === 'password') view = await authenticatePassword(core, input.body, client, opts);
  else if (input.method === 'cert') view = await authenticateCert(core, input.body, input.peerCertificates, client, opts);
  else view = await authenticateExtJwt(core, { authorization: input.authorization, ztSession: undefined, body: input.body, client }, opts);
  const sessionId = String(view.id);
  const fingerprints = input.method === 'cert' && input.peerCertificates[0] ? [fingerprintSha1(input.peerCertificates[0])] : req.cert_fingerprints;
  const now = core.clock.now().toISOString();
  const taken = await core.store.runSql(
    'UPDATE oidc_auth_requests SET api_session_id = ?, amr = ?, auth_time = ?, cert_fingerprints = ? WHERE id = ? AND api_session_id IS NULL AND expires_at > ?',
    sessionId,
    JSON.stringify([input.method]),
    now,
    JSON.stringify(fingerprints),
    req.id,
    now,
  );
  if (!taken.changes) {
    // another login of the same request came first, or it expired meanwhile
    await apiSessionsOf(core).remove(sessionId);
    throw invalidAuth();
  }
  const { session, identity } = await requestSession(core, { ...req, api_session_id: sessionId });
  return loginState(core, session, identity);
}

/** The state of an authorization request's login (GET /oidc/login/auth-queries); 401 when it has none. */
export async function oidcLoginState(core: Core, authRequestId: string | undefined): Promise<OidcLoginState> {
  const { session, identity } = await requestSession(core, await loadRequest(core, authRequestId));
  return loginState(core, session, identity);
}

/** The partial session of a request as a caller (the MFA operations of mfa.ts act on it). */
async function partialCaller(core: Core, authRequestId: string | undefined) {
  const { session, identity } = await requestSession(core, await loadRequest(core, authRequestId));
  return { session, identity, ctx: core.ctx(callerOf(identity, session, apiSessionsOf(core).isPartial(session))) };
}

/**
 * POST /oidc/login/totp: a TOTP (or recovery) code completes the TOTP factor of the request's session, with the
 * rules of POST /authenticate/mfa (each code once; wrong codes counted, five end the session and the request).
 */
export async function oidcTotp(core: Core, authRequestId: string | undefined, code: string | undefined): Promise<OidcLoginState> {
  const { session, ctx } = await partialCaller(core, authRequestId);
  if (!session.is_mfa_required) throw new ApiError('INVALID_MFA_TOKEN', 401, 'TOTP supplied but not enabled or required on identity');
  if (!session.is_mfa_complete) await authenticateMfa(ctx, { code: code ?? '' });
  return oidcLoginState(core, authRequestId);
}

/** POST /oidc/login/totp/enroll: starts a TOTP enrollment for the request's identity (an auth policy may require one). */
export async function oidcTotpEnrollStart(core: Core, authRequestId: string | undefined): Promise<ApiObject> {
  const { ctx } = await partialCaller(core, authRequestId);
  await initiateMfa(ctx);
  return mfaStatus(ctx);
}

/** POST /oidc/login/totp/enroll/verify: completes the enrollment; the code also passes the session's TOTP factor. */
export async function oidcTotpEnrollVerify(core: Core, authRequestId: string | undefined, code: string | undefined): Promise<OidcLoginState> {
  const { ctx } = await partialCaller(core, authRequestId);
  await verifyMfa(ctx, { code: code ?? '' });
  return oidcLoginState(core, authRequestId);
}

/** DELETE /oidc/login/totp/enroll: removes the identity's enrollment (a completed one needs a code). */
export async function oidcTotpEnrollDelete(core: Core, authRequestId: string | undefined, code: string | undefined): Promise<void> {
  const { ctx } = await partialCaller(core, authRequestId);
  await disableMfa(ctx, code);
}

/**
 * /oidc/authorize/callback: once every factor passed, a new single-use code for the request (any earlier one is
 * replaced) and the client's redirect URI with `state` and `code`. A request still waiting for a factor goes back
 * with `interaction_required`. An unknown or used request is an OidcRequestError.
 */
export async function oidcCallback(core: Core, authRequestId: string | undefined): Promise<{ location: string }> {
  const req = await loadRequest(core, authRequestId);
  if (!req || req.code_used_at) throw new OidcRequestError('request not found');
  const session = req.api_session_id
    ? await getRow(core.store, API_SESSION, 'SELECT * FROM api_sessions WHERE id = ?', req.api_session_id)
    : undefined;
  if (!session || apiSessionsOf(core).isPartial(session)) {
    return {
      location: withParams(req.redirect_uri, [
        ['error', 'interaction_required'],
        ['error_description', 'Unfortunately, the user may be not logged in and/or additional interaction is required.'],
        ['state', req.state ?? undefined],
      ]),
    };
  }
  const code = randomBytes(32).toString('base64url');
  const now = core.clock.now();
  const expires = new Date(Math.min(now.getTime() + CODE_TTL_MS, Date.parse(req.expires_at)));
  const set = await core.store.runSql(
    'UPDATE oidc_auth_requests SET code_digest = ?, code_expires_at = ? WHERE id = ? AND code_used_at IS NULL',
    digest(code),
    expires.toISOString(),
    req.id,
  );
  if (!set.changes) throw new OidcRequestError('request not found');
  return {
    location: withParams(req.redirect_uri, [
      ['state', req.state ?? undefined],
      ['code', code],
    ]),
  };
}

// ---- tokens ---------------------------------------------------------------------------------------------------

export interface TokenRequest {
  /** the form's fields (repeated ones: the last) */
  form: Record<string, string | undefined>;
  /** HTTP Basic client credentials, if sent */
  basic?: { id: string; secret: string };
  issuer: string;
  ipAddress: string;
}

const invalidGrant = (description = '') => new OidcError('invalid_grant', description);
const invalidRequest = (description: string) => new OidcError('invalid_request', description);

function clientOf(t: TokenRequest, checkSecret: boolean): string {
  const id = t.basic?.id ?? t.form.client_id ?? '';
  const secret = t.basic?.secret ?? t.form.client_secret ?? '';
  if (!OIDC_CLIENT_IDS.includes(id) || (checkSecret && secret !== ''))
    throw new OidcError('invalid_client', 'invalid client_id / client_secret', 401);
  return id;
}

/** What a token is issued from: the session, its identity and the grant's claims. */
interface Grant {
  session: ApiSession;
  identity: OidcIdentity;
  clientId: string;
  scopes: string[];
  amr: string[];
  authTime: number;
  nonce?: string;
  configTypes: string[];
  fingerprints: string[];
  remoteAddress: string;
  issuer: string;
}

async function zitiClaims(core: Core, g: Grant): Promise<Omit<OidcTokenClaims, 'iss' | 'sub' | 'aud' | 'exp' | 'iat' | 'nbf' | 'jti' | 'z_t'>> {
  const auth = g.session.authenticator_id
    ? await getRow(
        core.store,
        AUTHENTICATOR_FLAGS,
        'SELECT method, is_issued_by_network, is_extend_requested, is_key_roll_requested FROM authenticators WHERE id = ?',
        g.session.authenticator_id,
      )
    : undefined;
  const cert = auth?.method === 'cert';
  return {
    auth_time: g.authTime,
    amr: g.amr,
    client_id: g.clientId,
    scopes: g.scopes,
    z_asid: g.session.id,
    ...(g.identity.external_id ? { z_eid: g.identity.external_id } : {}),
    ...(g.identity.is_admin ? { z_ia: true } : {}),
    z_ct: g.configTypes,
    z_aid: g.clientId,
    z_cfs: g.fingerprints,
    z_sdk: g.identity.sdk_info,
    z_env: g.identity.env_info,
    z_ra: g.remoteAddress,
    z_ice: cert && !!auth?.is_issued_by_network,
    ...(g.session.authenticator_id ? { z_authid: g.session.authenticator_id } : {}),
    z_cer: cert && !!auth?.is_extend_requested,
    z_ckrr: cert && !!auth?.is_key_roll_requested,
    z_iccc: g.session.improper_client_cert_chain,
  };
}

/** Signs the tokens of a grant: access, refresh (`withRefresh`) and ID token, by what the response asks for. */
async function issue(core: Core, g: Grant, want: { access: boolean; refresh: boolean; id: boolean }) {
  const now = core.clock.now();
  const lifetimes = oidcLifetimes(core);
  const iat = epoch(now);
  const common = { iss: g.issuer, sub: g.identity.id, aud: [g.clientId], iat, nbf: iat };
  const ziti = await zitiClaims(core, g);
  const accessExp = new Date(now.getTime() + lifetimes.access);
  const access = want.access
    ? core.jwt.sign({ ...common, exp: epoch(accessExp), jti: randomUUID(), scope: g.scopes.join(' '), ...ziti, z_t: TOKEN_TYPE_ACCESS })
    : undefined;
  const refreshExp = new Date(now.getTime() + lifetimes.refresh);
  const refresh = want.refresh
    ? core.jwt.sign({ ...common, exp: epoch(refreshExp), jti: randomUUID(), azp: g.clientId, ...ziti, z_t: TOKEN_TYPE_REFRESH })
    : undefined;
  const id = want.id
    ? core.jwt.sign({
        ...common,
        exp: epoch(new Date(now.getTime() + lifetimes.id)),
        auth_time: g.authTime,
        ...(g.nonce ? { nonce: g.nonce } : {}),
        amr: g.amr,
        azp: g.clientId,
        client_id: g.clientId,
        ...(access ? { at_hash: claimHash(core, access) } : {}),
        sid: g.session.id,
        name: g.identity.name,
        ...(g.identity.external_id ? { z_eid: g.identity.external_id } : {}),
        z_ia: !!g.identity.is_admin,
      })
    : undefined;
  return { access, refresh, id, accessExp, refreshExp, expiresIn: Math.round(lifetimes.access / 1000) };
}

/** The session a token names, alive, with its identity enabled; invalid_grant otherwise. */
async function liveSession(core: Core, claims: OidcTokenClaims): Promise<{ session: ApiSession; identity: OidcIdentity }> {
  const session = await getRow(
    core.store,
    API_SESSION,
    "SELECT * FROM api_sessions WHERE id = ? AND identity_id = ? AND kind = 'oidc'",
    claims.z_asid,
    claims.sub,
  );
  const identity = session && (await getRow(core.store, OIDC_IDENTITY, 'SELECT * FROM identities WHERE id = ?', session.identity_id));
  const now = core.clock.now();
  if (!session || !identity || isDisabled(identity, now) || apiSessionsOf(core).expiresAt(session) <= now)
    throw invalidGrant('the API session has ended');
  return { session, identity };
}

function grantFromClaims(claims: OidcTokenClaims, live: { session: ApiSession; identity: OidcIdentity }, issuer: string): Grant {
  return {
    ...live,
    clientId: claims.client_id,
    scopes: claims.scopes ?? [],
    amr: claims.amr ?? [],
    authTime: claims.auth_time,
    configTypes: claims.z_ct ?? [],
    fingerprints: claims.z_cfs ?? [],
    remoteAddress: claims.z_ra ?? '',
    issuer,
  };
}

/** Moves an OIDC session's end to its newest refresh token's (or access token's) expiry; invalid_grant if it ended. */
async function extendSession(core: Core, sessionId: string, until: Date): Promise<void> {
  const done = await core.store.runSql(
    "UPDATE api_sessions SET expires_at = ?, updated_at = ? WHERE id = ? AND kind = 'oidc'",
    until.toISOString(),
    core.clock.now().toISOString(),
    sessionId,
  );
  if (!done.changes) throw invalidGrant('the API session has ended');
}

/**
 * POST /oidc/oauth/token: the authorization_code grant (single-use code, PKCE, the request's client and redirect
 * URI), the refresh_token grant (each refresh token once: a new one comes with each refresh) and token exchange (as
 * the Go SDK refreshes: a refresh token for new tokens, or for an ID token). Errors are OidcErrors with OAuth's codes.
 */
export async function oidcToken(core: Core, t: TokenRequest): Promise<Record<string, unknown>> {
  const grantType = t.form.grant_type;
  if (!grantType) throw invalidRequest('grant_type missing');
  if (grantType === GRANT_CODE) return codeGrant(core, t);
  if (grantType === GRANT_REFRESH) return refreshGrant(core, t);
  if (grantType === GRANT_EXCHANGE) return exchangeGrant(core, t);
  throw new OidcError('unsupported_grant_type', `${grantType} not supported`);
}

async function codeGrant(core: Core, t: TokenRequest): Promise<Record<string, unknown>> {
  const code = t.form.code;
  if (!code) throw invalidRequest('code missing');
  const store = core.store;
  const now = core.clock.now();
  // the code is used by this attempt whatever comes of it; a second use of a used code ends what the first made
  const req = await store.tx(async () => {
    const row = await getRow(store, AUTH_REQUEST, 'SELECT * FROM oidc_auth_requests WHERE code_digest = ?', digest(code));
    if (!row) return undefined;
    const took = await store.runSql(
      'UPDATE oidc_auth_requests SET code_used_at = ? WHERE id = ? AND code_used_at IS NULL',
      now.toISOString(),
      row.id,
    );
    if (took.changes) return row;
    if (row.api_session_id) await apiSessionsOf(core).remove(row.api_session_id);
    core.log.warn({ apiSessionId: row.api_session_id }, 'OIDC authorization code used again: its API session was ended');
    return undefined;
  });
  if (!req) throw invalidGrant('invalid code');
  const sessionId = req.api_session_id;
  try {
    if (Date.parse(req.code_expires_at ?? '') <= now.getTime()) throw invalidGrant('invalid code');
    if (!t.form.code_verifier) throw invalidRequest('code_verifier required');
    if (createHash('sha256').update(t.form.code_verifier).digest('base64url') !== req.code_challenge) throw invalidGrant('invalid code_verifier');
    const clientId = clientOf(t, false);
    if (clientId !== req.client_id) throw invalidGrant();
    if (t.form.redirect_uri !== req.redirect_uri) throw invalidGrant('redirect_uri does not correspond');
    const session = sessionId ? await getRow(store, API_SESSION, 'SELECT * FROM api_sessions WHERE id = ?', sessionId) : undefined;
    const identity = session && (await getRow(store, OIDC_IDENTITY, 'SELECT * FROM identities WHERE id = ?', session.identity_id));
    if (!session || !identity || isDisabled(identity, now) || apiSessionsOf(core).isPartial(session)) throw invalidGrant('the login is not complete');
    const scopes = req.scopes;
    const configTypes = [...new Set([...session.config_types, ...req.config_types])];
    const amr = [...req.amr, ...(session.is_mfa_required && session.is_mfa_complete ? ['totp'] : [])];
    const g: Grant = {
      session,
      identity,
      clientId,
      scopes,
      amr,
      authTime: epoch(new Date(req.auth_time ?? now.toISOString())),
      nonce: req.nonce ?? undefined,
      configTypes,
      fingerprints: req.cert_fingerprints,
      remoteAddress: req.remote_address,
      issuer: t.issuer,
    };
    const withRefresh = scopes.includes('offline_access');
    const tokens = await issue(core, g, { access: true, refresh: withRefresh, id: true });
    const done = await store.runSql(
      "UPDATE api_sessions SET expires_at = ?, config_types = ?, updated_at = ? WHERE id = ? AND kind = 'oidc'",
      (withRefresh ? tokens.refreshExp : tokens.accessExp).toISOString(),
      JSON.stringify(configTypes),
      now.toISOString(),
      session.id,
    );
    if (!done.changes) throw invalidGrant('the login is not complete');
    return tokenResponse(tokens, scopes);
  } catch (e) {
    // a code that fails leaves no session behind: the client logs in again
    if (sessionId) await apiSessionsOf(core).remove(sessionId);
    throw e;
  }
}

function tokenResponse(tokens: Awaited<ReturnType<typeof issue>>, scopes: string[]): Record<string, unknown> {
  return {
    access_token: tokens.access,
    token_type: 'Bearer',
    ...(tokens.refresh ? { refresh_token: tokens.refresh } : {}),
    expires_in: tokens.expiresIn,
    ...(tokens.id ? { id_token: tokens.id } : {}),
    ...(scopes.length ? { scope: scopes.join(' ') } : {}),
  };
}

/** Marks a refresh token used; false when it was (by this node or another). */
function useRefreshToken(core: Core, claims: OidcTokenClaims): Promise<boolean> {
  return markUsedOnce(core, `oidc-refresh:${claims.jti}`, new Date(claims.exp * 1000), core.clock.now());
}

async function refreshUsed(core: Core, claims: OidcTokenClaims): Promise<boolean> {
  return !!(await core.store.getSql('SELECT 1 AS x FROM used_once WHERE key = ?', `oidc-refresh:${claims.jti}`));
}

async function refreshGrant(core: Core, t: TokenRequest): Promise<Record<string, unknown>> {
  const token = t.form.refresh_token;
  if (!token) throw invalidRequest('refresh_token missing');
  const clientId = clientOf(t, false);
  const claims = await verifyOidcToken(core, token, TOKEN_TYPE_REFRESH);
  if (!claims) throw invalidGrant('invalid refresh token');
  if (claims.client_id !== clientId) throw invalidGrant();
  const requested = (t.form.scope ?? '').split(' ').filter(Boolean);
  if (requested.some((s) => !(claims.scopes ?? []).includes(s))) throw new OidcError('invalid_scope', 'the scope requested was not granted');
  const live = await liveSession(core, claims);
  const g = grantFromClaims(claims, live, t.issuer);
  if (requested.length) g.scopes = requested;
  return core.store.tx(async () => {
    if (!(await useRefreshToken(core, claims))) throw invalidGrant('invalid refresh token');
    const tokens = await issue(core, g, { access: true, refresh: true, id: true });
    await extendSession(core, live.session.id, tokens.refreshExp);
    return tokenResponse(tokens, g.scopes);
  });
}

async function exchangeGrant(core: Core, t: TokenRequest): Promise<Record<string, unknown>> {
  const subject = t.form.subject_token;
  const subjectType = t.form.subject_token_type;
  if (!subject) throw invalidRequest('subject_token missing');
  if (!subjectType) throw invalidRequest('subject_token_type missing');
  clientOf(t, true);
  const requested = t.form.requested_token_type || TOKEN_TYPES.refresh;
  if (!Object.values(TOKEN_TYPES).includes(requested as never)) throw invalidRequest('requested_token_type is not supported');
  for (const aud of (t.form.audience ?? '').split(' ').filter(Boolean)) {
    if (!OIDC_CLIENT_IDS.includes(aud)) throw invalidRequest(`invalid audience requested [${aud}]`);
  }
  for (const scope of (t.form.scope ?? '').split(' ').filter(Boolean)) {
    if (scope !== 'openid' && scope !== 'offline_access') throw invalidRequest(`invalid scope requested [${scope}]`);
  }
  let claims: OidcTokenClaims | undefined;
  if (subjectType === TOKEN_TYPES.refresh) claims = await verifyOidcToken(core, subject, TOKEN_TYPE_REFRESH);
  else if (subjectType === TOKEN_TYPES.access) {
    if (requested === TOKEN_TYPES.refresh) throw invalidRequest('exchanging access_token for refresh_token is not supported');
    claims = await verifyOidcToken(core, subject, TOKEN_TYPE_ACCESS);
  } else if (subjectType === TOKEN_TYPES.id) throw invalidRequest('exchanging id_token for any token type is not supported');
  else throw invalidRequest('subject_token_type is not supported');
  if (!claims) throw invalidRequest('subject_token is invalid');
  const live = await liveSession(core, claims);
  const g = grantFromClaims(claims, live, t.issuer);
  if (requested === TOKEN_TYPES.id) {
    // an ID token proves who logged in and reaches nothing: the Go SDK asks for one with the refresh token it has
    // just exchanged
    const tokens = await issue(core, g, { access: false, refresh: false, id: true });
    return { access_token: tokens.id, issued_token_type: TOKEN_TYPES.id, token_type: 'N_A', expires_in: 0 };
  }
  const refresh = requested === TOKEN_TYPES.refresh;
  return core.store.tx(async () => {
    if (subjectType === TOKEN_TYPES.refresh) {
      const fresh = refresh ? await useRefreshToken(core, claims) : !(await refreshUsed(core, claims));
      if (!fresh) throw invalidRequest('subject_token is invalid');
    }
    const tokens = await issue(core, g, { access: true, refresh, id: false });
    if (refresh) await extendSession(core, live.session.id, tokens.refreshExp);
    return {
      access_token: tokens.access,
      issued_token_type: requested,
      token_type: 'Bearer',
      expires_in: tokens.expiresIn,
      ...(tokens.refresh ? { refresh_token: tokens.refresh } : {}),
      ...(g.scopes.length ? { scope: g.scopes.join(' ') } : {}),
    };
  });
}

// ---- userinfo, revocation, logout -----------------------------------------------------------------------------

const USERINFO = rowShape({ id: 'string', name: 'string', is_admin: 'bool', external_id: 'string?' });

/** /oidc/userinfo: who the access token's session belongs to. */
export async function oidcUserinfo(core: Core, token: string | undefined): Promise<Record<string, unknown>> {
  const resolved = token ? await apiSessionsOf(core).resolve(token) : undefined;
  if (!resolved || resolved.session.kind !== 'oidc') throw new OidcError('invalid_token', 'access token invalid', 401);
  const identity = await getRow(
    core.store,
    USERINFO,
    'SELECT id, name, is_admin, external_id FROM identities WHERE id = ?',
    resolved.session.identity_id,
  );
  if (!identity) throw new OidcError('invalid_token', 'access token invalid', 401);
  return { sub: identity.id, name: identity.name, ...(identity.external_id ? { z_eid: identity.external_id } : {}), z_ia: identity.is_admin };
}

/**
 * /oidc/revoke (RFC 7009): revoking an access or refresh token ends its API session, and with it every token issued
 * for it. An unknown or invalid token is no error.
 */
export async function oidcRevoke(core: Core, t: TokenRequest): Promise<void> {
  clientOf(t, true);
  const token = t.form.token;
  if (!token) throw invalidRequest('token missing');
  const claims = (await verifyOidcToken(core, token, TOKEN_TYPE_REFRESH)) ?? (await verifyOidcToken(core, token, TOKEN_TYPE_ACCESS));
  if (claims) {
    const row = await getRow(
      core.store,
      SESSION_ID,
      "SELECT id FROM api_sessions WHERE id = ? AND identity_id = ? AND kind = 'oidc'",
      claims.z_asid,
      claims.sub,
    );
    if (row) await apiSessionsOf(core).remove(row.id);
  }
}

/**
 * /oidc/end_session: ends the session of the `id_token_hint` (an ID token of ours, expired or not), then sends the
 * client to its `post_logout_redirect_uri` (with `state`) or to /oidc/logged-out.
 */
export async function oidcEndSession(
  core: Core,
  p: { id_token_hint?: string; post_logout_redirect_uri?: string; state?: string },
): Promise<{ location: string }> {
  if (p.post_logout_redirect_uri && !allowedRedirect(p.post_logout_redirect_uri, '/auth/logout')) {
    throw new OidcError('invalid_request', 'post_logout_redirect_uri invalid');
  }
  if (p.id_token_hint) {
    const claims = await verifyControllerJwt(core, p.id_token_hint, { ignoreExpiry: true });
    if (!claims || typeof claims.sid !== 'string' || typeof claims.sub !== 'string') throw new OidcError('invalid_request', 'id_token_hint invalid');
    const row = await getRow(
      core.store,
      SESSION_ID,
      "SELECT id FROM api_sessions WHERE id = ? AND identity_id = ? AND kind = 'oidc'",
      claims.sid,
      claims.sub,
    );
    if (row) await apiSessionsOf(core).remove(row.id);
  }
  if (!p.post_logout_redirect_uri) return { location: '/oidc/logged-out' };
  return { location: withParams(p.post_logout_redirect_uri, [['state', p.state]]) };
}

/** Periodic: authorization requests past their time go (their never-finished sessions end by their own expiry). */
export async function sweepOidc(core: Core): Promise<void> {
  await core.store.runSql('DELETE FROM oidc_auth_requests WHERE expires_at < ?', core.clock.now().toISOString());
}
