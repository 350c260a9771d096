import type { Core } from '../../core/context';
import { ApiError } from '../../core/errors';
import {
  type AuthenticateBody,
  OidcError,
  OidcRequestError,
  oidcAuthorize,
  oidcCallback,
  oidcDiscovery,
  oidcEndSession,
  oidcIssuer,
  oidcJwks,
  oidcLogin,
  oidcLoginState,
  oidcRevoke,
  oidcToken,
  oidcTotp,
  oidcTotpEnrollDelete,
  oidcTotpEnrollStart,
  oidcTotpEnrollVerify,
  oidcUserinfo,
  type OidcLoginMethod,
  type OidcLoginState,
  type TokenRequest,
} from '../../core/auth/index';
import { recordOidcAudit } from '../audit';
import { queryList, queryString, type ApiName, type ApiReply, type ApiRequest, type Method, type RouteDef } from '../registry';

/**
 * OpenZiti's OIDC provider at /oidc (controller/oidc_auth in OpenZiti): a thin adapter over core/auth/oidc.ts that
 * speaks the provider's own formats, not the Edge APIs' envelope — OAuth errors as `{error, error_description}`,
 * redirects, the login steps' headers (`auth-request-id`, `totp-required`) and OpenZiti's `{code, message}` errors,
 * and HTML pages for browsers (by the Accept header, as OpenZiti negotiates).
 */

const APIS: ApiName[] = ['client'];
const JSON_TYPE = 'application/json';
const HTML_TYPE = 'text/html; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const INVALID_AUTH_MESSAGE = 'The authentication request failed';

type Fields = Record<string, unknown>;

/** The request's body fields: a form's or a JSON object's (anything else: none). */
function fields(req: ApiRequest): Fields {
  const b = req.body;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Fields) : {};
}

/** A field's value as one string (a repeated form field: its last value). */
function one(v: unknown): string | undefined {
  if (Array.isArray(v)) return one(v[v.length - 1]);
  return typeof v === 'string' ? v : undefined;
}

/** A field of the body, else of the query. */
const param = (req: ApiRequest, name: string) => one(fields(req)[name]) ?? queryString(req.query[name]);

/** The authorization request's id: the body's `id`, else the query's `authRequestID`, else its `id` (OpenZiti's order). */
const authRequestId = (req: ApiRequest) => one(fields(req).id) || queryString(req.query.authRequestID) || queryString(req.query.id);

const json = (status: number, body: unknown, headers: Record<string, string> = {}): ApiReply => ({
  status,
  raw: { contentType: JSON_TYPE, body: JSON.stringify(body), headers },
});
const text = (status: number, body: string, headers: Record<string, string> = {}): ApiReply => ({
  status,
  raw: { contentType: TEXT_TYPE, body, headers },
});
const redirect = (location: string): ApiReply => ({ status: 302, raw: { contentType: TEXT_TYPE, body: '', headers: { location } } });
const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** OpenZiti's response negotiation: no Accept (or no usable entry) is JSON; the first entry by q naming JSON or HTML wins. */
function negotiate(accept: string | string[] | undefined): 'json' | 'html' | undefined {
  const header = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  const entries = header
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((e) => {
      const [type, ...params] = e.split(';').map((p) => p.trim());
      const q = params.find((p) => p.startsWith('q='));
      return { type: type!.toLowerCase(), q: q ? Number(q.slice(2)) || 0 : 1 };
    })
    .sort((a, b) => b.q - a.q);
  if (!entries.length) return 'json';
  const matches = (pattern: string, type: string) => {
    const [pm, ps] = pattern.split('/');
    const [tm, ts] = type.split('/');
    return ps !== undefined && (pattern === '*/*' || ((pm === tm || pm === '*') && (ps === ts || ps === '*')));
  };
  for (const e of entries) {
    if (matches(e.type, 'application/json')) return 'json';
    if (matches(e.type, 'text/html')) return 'html';
  }
  return undefined;
}

const notAcceptable = (req: ApiRequest) =>
  json(406, {
    code: 'NOT_ACCEPTABLE',
    message: `the request is not acceptable, the accept header did not have any supported options: ${String(req.headers.accept)} (supported: application/json, text/html)`,
  });

/** OpenZiti's `{code, message}` error (no envelope), with the ApiError's status. */
const apiError = (e: ApiError) => json(e.status, { code: e.code, message: e.message });

/** Errors the provider answers in its own format: failed steps (4xx). Anything else (503, 500) is the server's. */
const isClientError = (e: unknown): e is ApiError => e instanceof ApiError && e.status >= 400 && e.status < 500;

// ---- pages ------------------------------------------------------------------------------------------------------

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string, error?: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem}
input,button{display:block;width:100%;margin:.4rem 0;padding:.5rem;box-sizing:border-box}.error{color:#b00020}</style></head>
<body><h1>${escapeHtml(title)}</h1>${error ? `<p class="error">${escapeHtml(error)}</p>` : ''}${body}</body></html>`;
}

function loginPage(id: string, error?: string): string {
  return page(
    'Log in',
    `<form method="post" action="/oidc/login/username"><input type="hidden" name="id" value="${escapeHtml(id)}">
<label>Username<input name="username" autocomplete="username" required autofocus></label>
<label>Password<input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button></form>`,
    error,
  );
}

function totpPage(id: string, error?: string): string {
  return page(
    'Verification code',
    `<form method="post" action="/oidc/login/totp"><input type="hidden" name="id" value="${escapeHtml(id)}">
<label>The code of your authenticator app (or a recovery code)<input name="code" inputmode="numeric" autocomplete="one-time-code" required autofocus></label>
<button type="submit">Verify</button></form>`,
    error,
  );
}

const html = (status: number, body: string, headers: Record<string, string> = {}): ApiReply => ({
  status,
  raw: {
    contentType: HTML_TYPE,
    body,
    headers: { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'", ...headers },
  },
});

// ---- handlers ---------------------------------------------------------------------------------------------------

const issuerOf = (core: Core, req: ApiRequest) => oidcIssuer(core, one(req.headers.host));

/** Where a login goes once every factor passed: the authorize callback (absolute, as zitadel's AuthCallbackURL). */
const callback = (core: Core, req: ApiRequest, id: string) => redirect(`${issuerOf(core, req)}/authorize/callback?id=${encodeURIComponent(id)}`);

/** What a login step answers: the callback when done, else the outstanding factors (JSON or the TOTP page). */
function afterStep(core: Core, req: ApiRequest, state: OidcLoginState, id: string, as: 'json' | 'html'): ApiReply {
  if (state.done) return callback(core, req, id);
  const headers: Record<string, string> = state.totpRequired ? { 'totp-required': 'true' } : {};
  return as === 'html' ? html(200, totpPage(id), headers) : json(200, { authQueries: state.authQueries }, headers);
}

/** The credentials of a login post: a form (the Go SDK: envArch, sdkVersion, ...) or JSON (the C SDK: envInfo, sdkInfo). */
function loginBody(req: ApiRequest, method: OidcLoginMethod): AuthenticateBody {
  const f = fields(req);
  const lower = new Map(Object.keys(f).map((k) => [k.toLowerCase(), k]));
  const info = (prefix: string, keys: string[], nested: unknown) => {
    const out: Record<string, string> = {};
    const obj = nested && typeof nested === 'object' ? (nested as Record<string, unknown>) : {};
    for (const k of keys) {
      const v = one(obj[k]) ?? one(f[lower.get((prefix + k).toLowerCase()) ?? '']);
      if (v) out[k] = v;
    }
    return Object.keys(out).length ? out : undefined;
  };
  const configTypes = [
    ...queryList(req.query.configTypes),
    ...(Array.isArray(f.configTypes) ? f.configTypes : f.configTypes !== undefined ? [f.configTypes] : []),
  ].filter((c): c is string => typeof c === 'string' && c !== '');
  return {
    ...(method === 'password' ? { username: one(f.username), password: one(f.password) } : {}),
    configTypes,
    envInfo: info('env', ['arch', 'domain', 'hostname', 'os', 'osRelease', 'osVersion'], f.envInfo),
    sdkInfo: info('sdk', ['appId', 'appVersion', 'branch', 'revision', 'type', 'version'], f.sdkInfo),
  } as AuthenticateBody;
}

async function login(core: Core, req: ApiRequest, method: OidcLoginMethod): Promise<ApiReply> {
  const as = negotiate(req.headers.accept);
  if (!as) return notAcceptable(req);
  const id = authRequestId(req) ?? '';
  const route = `POST /oidc/login/${method === 'password' && req.raw.url.includes('/username') ? 'username' : method}`;
  try {
    const state = await oidcLogin(core, {
      method,
      authRequestId: id,
      body: loginBody(req, method),
      peerCertificates: req.peerCertificates,
      authorization: one(req.headers.authorization),
      ipAddress: req.ip,
    });
    await recordOidcAudit(core, req, { action: 'login', route, method, done: state });
    return afterStep(core, req, state, id, as);
  } catch (e) {
    if (!isClientError(e)) throw e;
    await recordOidcAudit(core, req, { action: 'login', route, method, errorCode: e.code });
    if (e.code === 'COULD_NOT_VALIDATE' || e.status === 429) return apiError(e);
    // a password login shows its page again; other methods are not for people (OpenZiti: text)
    if (method === 'password') return html(401, loginPage(id, INVALID_AUTH_MESSAGE), { 'auth-request-id': id });
    return text(401, INVALID_AUTH_MESSAGE);
  }
}

async function totp(core: Core, req: ApiRequest): Promise<ApiReply> {
  const as = negotiate(req.headers.accept);
  if (!as) return notAcceptable(req);
  const id = authRequestId(req) ?? '';
  let state: OidcLoginState;
  try {
    state = await oidcTotp(core, id, param(req, 'code'));
  } catch (e) {
    if (!isClientError(e)) throw e;
    await recordOidcAudit(core, req, { action: 'mfa', route: 'POST /oidc/login/totp', errorCode: e.code });
    if (as === 'html') return html(400, totpPage(id, 'an invalid TOTP code was supplied'));
    return json(400, { code: 'INVALID TOTP CODE', message: 'an invalid TOTP code was supplied' });
  }
  await recordOidcAudit(core, req, { action: 'mfa', route: 'POST /oidc/login/totp', done: state });
  return afterStep(core, req, state, id, as);
}

/** A TOTP enrollment step during a login: its result, or OpenZiti's `{code, message}` error. */
async function enrollStep(fn: () => Promise<ApiReply>): Promise<ApiReply> {
  try {
    return await fn();
  } catch (e) {
    if (!isClientError(e)) throw e;
    return apiError(e);
  }
}

/** The client credentials of an HTTP Basic Authorization header (each part URL-decoded, as zitadel does). */
function basicAuth(req: ApiRequest): TokenRequest['basic'] {
  const m = /^Basic\s+(\S+)$/i.exec(one(req.headers.authorization) ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  if (at < 0) return undefined;
  try {
    return { id: decodeURIComponent(decoded.slice(0, at)), secret: decodeURIComponent(decoded.slice(at + 1)) };
  } catch {
    return undefined;
  }
}

function tokenRequest(core: Core, req: ApiRequest): TokenRequest {
  const f = fields(req);
  const form: Record<string, string | undefined> = {};
  for (const k of Object.keys(f)) form[k] = one(f[k]);
  return { form, basic: basicAuth(req), issuer: issuerOf(core, req), ipAddress: req.ip };
}

const oauthError = (e: OidcError) => json(e.status, { error: e.error, ...(e.description ? { error_description: e.description } : {}) }, noStore);

async function oauth(fn: () => Promise<ApiReply>): Promise<ApiReply> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof OidcError) return oauthError(e);
    throw e;
  }
}

async function authorize(core: Core, req: ApiRequest): Promise<ApiReply> {
  const configTypes = [...queryList(req.query.configTypes)];
  const formTypes = fields(req).configTypes;
  if (Array.isArray(formTypes)) configTypes.push(...formTypes.filter((t): t is string => typeof t === 'string'));
  else if (typeof formTypes === 'string') configTypes.push(formTypes);
  const p = (name: string) => param(req, name);
  try {
    const { location } = await oidcAuthorize(
      core,
      {
        client_id: p('client_id'),
        redirect_uri: p('redirect_uri'),
        response_type: p('response_type'),
        scope: p('scope'),
        state: p('state'),
        nonce: p('nonce'),
        code_challenge: p('code_challenge'),
        code_challenge_method: p('code_challenge_method'),
        prompt: p('prompt'),
        method: p('method'),
        configTypes,
      },
      { ipAddress: req.ip, peerCertificates: req.peerCertificates },
    );
    return redirect(location);
  } catch (e) {
    if (e instanceof OidcRequestError) return text(400, e.message);
    throw e;
  }
}

const route = (method: Method, path: string, summary: string, handler: RouteDef['handler'], extra: Partial<RouteDef> = {}): RouteDef => ({
  apis: APIS,
  method,
  path,
  auth: 'none',
  summary,
  handler,
  ...extra,
});

/** The provider's routes, at their own paths under /oidc (and the root discovery document, as OpenZiti serves it). */
export function oidcRoutes(core: Core): RouteDef[] {
  const discovery = (req: ApiRequest) => json(200, oidcDiscovery(core, issuerOf(core, req)));
  const loginPage_ = (req: ApiRequest) => {
    const id = queryString(req.query.authRequestID) ?? '';
    return html(200, loginPage(id), { 'auth-request-id': id });
  };
  const postHere = (req: ApiRequest) => text(200, 'please POST to this URL', { 'auth-request-id': queryString(req.query.authRequestID) ?? '' });
  const methods: Array<[string, OidcLoginMethod]> = [
    ['username', 'password'],
    ['password', 'password'],
    ['cert', 'cert'],
    ['ext-jwt', 'ext-jwt'],
  ];
  return [
    route('GET', '/oidc/.well-known/openid-configuration', 'OIDC discovery document', discovery),
    route('GET', '/.well-known/openid-configuration', 'OIDC discovery document', discovery),
    route('GET', '/oidc/keys', 'The keys OIDC tokens are signed with (JWKS)', async () => json(200, await oidcJwks(core))),
    ...(['GET', 'POST'] as const).map((m) =>
      route(m, '/oidc/authorize', 'OIDC authorization request (code flow with PKCE)', (req) => authorize(core, req)),
    ),
    route('GET', '/oidc/authorize/callback', 'After the login: the authorization code, to the redirect URI', async (req) => {
      try {
        return redirect((await oidcCallback(core, queryString(req.query.id))).location);
      } catch (e) {
        if (e instanceof OidcRequestError) return text(400, e.message);
        throw e;
      }
    }),
    ...methods.map(([path]) =>
      route(
        'GET',
        `/oidc/login/${path}`,
        'The login step of an authorization request',
        path === 'username' || path === 'password' ? loginPage_ : postHere,
      ),
    ),
    ...methods.map(([path, method]) =>
      route('POST', `/oidc/login/${path}`, `Log in an authorization request (${method})`, (req) => login(core, req, method), {
        authentication: true,
      }),
    ),
    route('GET', '/oidc/login/auth-queries', 'The outstanding secondary factors of an authorization request', async (req) => {
      try {
        const state = await oidcLoginState(core, queryString(req.query.id));
        return json(200, { authQueries: state.done ? [] : state.authQueries }, state.totpRequired ? { 'totp-required': 'true' } : {});
      } catch (e) {
        if (!isClientError(e)) throw e;
        return text(401, INVALID_AUTH_MESSAGE);
      }
    }),
    route('POST', '/oidc/login/totp', 'The TOTP step of an authorization request', (req) => totp(core, req), { authentication: true }),
    route('POST', '/oidc/login/totp/enroll', 'Start a TOTP enrollment during a login', (req) =>
      enrollStep(async () => json(201, await oidcTotpEnrollStart(core, authRequestId(req)))),
    ),
    route('DELETE', '/oidc/login/totp/enroll', 'Remove a TOTP enrollment during a login', (req) =>
      enrollStep(async () => (await oidcTotpEnrollDelete(core, authRequestId(req), param(req, 'code')), json(200, {}))),
    ),
    route(
      'POST',
      '/oidc/login/totp/enroll/verify',
      'Verify a TOTP enrollment during a login',
      (req) =>
        enrollStep(async () => {
          const id = authRequestId(req) ?? '';
          const state = await oidcTotpEnrollVerify(core, id, param(req, 'code'));
          return state.done ? callback(core, req, id) : json(200, {});
        }),
      { authentication: true },
    ),
    route(
      'POST',
      '/oidc/oauth/token',
      'OAuth token endpoint (authorization_code, refresh_token, token exchange)',
      (req) => oauth(async () => json(200, await oidcToken(core, tokenRequest(core, req)), noStore)),
      { authentication: true },
    ),
    ...(['GET', 'POST'] as const).map((m) =>
      route(m, '/oidc/userinfo', 'OIDC userinfo of an access token', (req) =>
        oauth(async () => {
          const bearer = /^Bearer\s+(\S+)\s*$/i.exec(one(req.headers.authorization) ?? '')?.[1] ?? param(req, 'access_token');
          return json(200, await oidcUserinfo(core, bearer));
        }),
      ),
    ),
    route('POST', '/oidc/revoke', 'Revoke a token (RFC 7009): ends its API session', (req) =>
      oauth(async () => (await oidcRevoke(core, tokenRequest(core, req)), text(200, ''))),
    ),
    ...(['GET', 'POST'] as const).map((m) =>
      route(m, '/oidc/end_session', 'OIDC logout: ends the session of the id_token_hint', (req) =>
        oauth(async () => {
          const { location } = await oidcEndSession(core, {
            id_token_hint: param(req, 'id_token_hint'),
            post_logout_redirect_uri: param(req, 'post_logout_redirect_uri'),
            state: param(req, 'state'),
          });
          return redirect(location);
        }),
      ),
    ),
    route('GET', '/oidc/logged-out', 'After an OIDC logout', () => text(200, 'signed out successfully')),
  ];
}
