import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { listenOn } from '../listen';
import { clientApiUrl } from './legacyPaths';
import type { Socket } from 'node:net';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { withDeadline, type ApiLimits, type ClientRateLimiter, apiSessionsOf, isJwt, ANONYMOUS } from '../core/auth/index';
import type { Core } from '../core/context';
import { ApiError, echoValue, rateLimited, unauthorized, unavailable } from '../core/errors';
import { isStoreUnavailable, isVolatile, trackReuse } from '../core/ops/index';
import { patchFields } from '../core/registry';
import { auditTarget, pendingRestAudit, recordRestAudit, type RestAudit, type RestAuditTarget } from './audit';
import { envelope, errorEnvelope } from './envelope';
import { ReplyCache } from './replyCache';
import { API_BASES, peerCertificates, type ApiName, type ApiReply, type ApiRequest, type RouteDef } from './registry';

export const BODY_LIMIT = 1024 * 1024;
/** The request line plus headers, as OpenZiti (Go's http.Server default of 1 MB); long filters travel in the URL. */
export const HEADER_LIMIT = 1024 * 1024;
const TEXT_TYPES = ['text/plain', 'application/x-pem-file', 'application/pkcs10', 'application/x-x509-user-cert', 'application/pkix-cert'];

export interface ApiServerOptions {
  /** the API's HTTPS listener, bound before the core is built (bindApiListener) */
  server: HttpsServer;
  routes: RouteDef[];
  /** extra root paths served outside the API bases (OpenZiti's aliases), as [path, api to answer for] */
  rootAliases: Array<{ method: 'GET'; path: string; api: ApiName; target: string }>;
  /**
   * Routes outside the API bases at their own paths (OpenZiti's /oidc): they answer for their first API, take
   * form bodies (application/x-www-form-urlencoded) besides JSON, and are in neither API's OpenAPI document.
   */
  rootRoutes?: RouteDef[];
  /** told of each request as it arrives (its URL in the API's form), e.g. to time it for metrics */
  observe?: (req: IncomingMessage, res: ServerResponse) => void;
  /** rate limits and the request timeout (none when absent) */
  limits?: ApiLimits;
}

/**
 * The API's HTTPS listener, bound first so that the core is built knowing the API's public URL (its real port);
 * until createApiServer takes it over, requests are answered 503 in the error envelope. Client certificates are
 * requested but optional.
 */
export async function bindApiListener(
  tls: { key: string; cert: string },
  host: string,
  port: number,
): Promise<{ server: HttpsServer; port: number }> {
  const server = createHttpsServer({
    // No `ca`: Node would list those CAs in the certificate request, and Go clients (OpenZiti's SDKs and CLI) then
    // withhold certificates from other issuers, e.g. third-party CAs for OTTCA enrollment. Chains are checked in the core.
    key: tls.key,
    cert: tls.cert,
    requestCert: true,
    rejectUnauthorized: false,
    maxHeaderSize: HEADER_LIMIT,
  });
  server.on('request', (_req, res) => {
    const body = errorEnvelope({ code: 'SERVICE_UNAVAILABLE', message: 'Weft is starting', requestId: randomUUID() });
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify(body));
  });
  return { server, port: await listenOn(server, host, port) };
}

/** Both APIs on the listener bound by bindApiListener. Call `ready()`, not `listen()`; `close()` closes the listener too. */
export function createApiServer(core: Core, opts: ApiServerOptions): FastifyInstance {
  const cache = new ReplyCache(core.store, core.clock);
  let closing = false;
  const app = Fastify({
    // The listener's request handler is added here so that reads of cached replies are answered before Fastify (fastRead).
    serverFactory: (fastify, options) => {
      const server = opts.server;
      server.removeAllListeners('request');
      server.on('request', (req, res) => {
        req.url = clientApiUrl(req.url ?? '/');
        opts.observe?.(req, res);
        let answered: boolean | Promise<boolean> = false;
        try {
          answered = !closing && fastRead(core, cache, opts.limits?.perClient, req, res);
        } catch {
          // e.g. the store is unavailable: the usual path answers with the error envelope
        }
        if (typeof answered === 'boolean') {
          if (!answered) fastify(req, res);
          return;
        }
        void answered
          .catch(() => false) // as above
          .then((done) => {
            if (!done) fastify(req, res);
          });
      });
      // as Fastify sets up the servers it makes
      const o = options as unknown as { keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number };
      server.keepAliveTimeout = o.keepAliveTimeout;
      server.requestTimeout = o.requestTimeout;
      server.setTimeout(o.connectionTimeout);
      return server;
    },
    bodyLimit: BODY_LIMIT,
    clientErrorHandler: rawClientError,
    // ids in paths may be long (find-my-way's default is 100 characters); longer ones are simply not found
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 8192 },
    // URLs the router cannot decode or match answer in the envelope too
    frameworkErrors: (err, req, reply) => void sendError(core, req, reply, err),
    // the request id is made when an error reply needs one (sendError), not for every request
    genReqId: () => '',
    logger: false,
    return503OnClosing: true,
  });
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Fastify closes only listeners it opened itself: this one stops accepting, its idle connections end, and the
  // close completes once the requests in flight are answered (what Fastify does for its own)
  app.addHook('onClose', (_instance, done) => {
    opts.server.close(() => done());
    opts.server.closeIdleConnections();
  });
  const allowed: Array<{ regex: RegExp; methods: Set<string> }> = [];
  // audit log: the state of each recorded request (routes carry their target in their config)
  const audits = new WeakMap<FastifyRequest, RestAudit>();
  const auditOf = (req: FastifyRequest): RestAudit | undefined => {
    let audit = audits.get(req);
    if (!audit) {
      const config = req.routeOptions?.config as { audit?: { api: ApiName; target: RestAuditTarget } } | undefined;
      if (!config?.audit) return undefined;
      audits.set(req, (audit = { api: config.audit.api, target: config.audit.target }));
    }
    return audit;
  };

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (!text) return done(null, undefined);
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }));
    } catch (e) {
      done(new ApiError('COULD_NOT_PARSE_BODY', 400, `The body of the request could not be parsed: ${(e as Error).message}`), undefined);
    }
  });
  app.addContentTypeParser(TEXT_TYPES, { parseAs: 'string' }, (_req, body, done) => done(null, body));

  // every failure of a recorded route lands here, from its handler or before it (a body that does not parse)
  app.setErrorHandler((err: FastifyError | ApiError, req, reply) =>
    sendError(core, req, reply, err, async (e) => {
      const audit = auditOf(req);
      if (audit) await recordRestAudit(core, audit, { errorCode: e.code }, audit.request, req.ip);
    }),
  );
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!.replace(/\/+$/, '') || '/';
    const match = allowed.find((a) => a.regex.test(path));
    if (match) {
      void reply.header('allow', [...match.methods].join(', '));
      return sendError(core, req, reply, new ApiError('METHOD_NOT_ALLOWED', 405, `method ${req.method} is not allowed on ${path}`));
    }
    return sendError(core, req, reply, new ApiError('NOT_FOUND', 404, 'The resource requested was not found or is no longer available'));
  });

  const perClient = opts.limits?.perClient;
  if (perClient) {
    app.addHook('onRequest', async (req, reply) => {
      // fastRead may have taken this request's token already
      const wait = (req.raw as FastReq)[LIMIT_WAIT] ?? perClient.take(req.ip);
      if (wait > 0) return sendError(core, req, reply, rateLimited(wait));
    });
  }

  const register = (api: ApiName, route: RouteDef, fullPath: string, scope: FastifyInstance = app) => {
    const regex = new RegExp(`^${fullPath.replace(/:[A-Za-z]+/g, '[^/]+')}$`);
    let entry = allowed.find((a) => a.regex.source === regex.source);
    if (!entry) allowed.push((entry = { regex, methods: new Set() }));
    entry.methods.add(route.method);
    if (route.method === 'GET') entry.methods.add('HEAD');
    const target = auditTarget(api, route);
    scope.route({
      method: route.method,
      url: fullPath,
      config: { audit: target && { api, target } },
      handler: (req, reply) => handle(core, api, route, req, reply, cache, opts.limits, auditOf(req)),
    });
  };
  for (const route of opts.routes) for (const api of route.apis) register(api, route, API_BASES[api] + route.path);
  for (const alias of opts.rootAliases) {
    const route = opts.routes.find((r) => r.method === alias.method && r.path === alias.target && r.apis.includes(alias.api));
    if (route) register(alias.api, route, alias.path);
  }
  const rootRoutes = opts.rootRoutes ?? [];
  if (rootRoutes.length) {
    // an encapsulated scope: only these routes parse forms (elsewhere a form body stays 415, as in OpenZiti's APIs)
    void app.register((scope, _options, done) => {
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, parsed) =>
        parsed(null, formFields(body as string)),
      );
      for (const route of rootRoutes) register(route.apis[0]!, route, route.path, scope);
      done();
    });
  }
  return app;
}

/** A form body's fields (no prototype; a repeated field is the list of its values). */
export function formFields(text: string): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const [k, v] of new URLSearchParams(text)) {
    const had = out[k];
    out[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  return out;
}

/**
 * Requests Node rejects before Fastify sees them (headers over HEADER_LIMIT, malformed HTTP, timeouts) still get
 * the error envelope, written raw on the socket, which is then closed.
 */
function rawClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'REQUEST_HEADER_FIELDS_TOO_LARGE', `The request line and headers exceed the limit of ${HEADER_LIMIT} bytes`]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'The request was not received in time']
        : [400, 'INVALID_REQUEST', 'The request is not valid HTTP'];
  const body = JSON.stringify(errorEnvelope({ code, message, requestId: randomUUID() }));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

const JSON_TYPE = 'application/json; charset=utf-8';
const LIMIT_WAIT = Symbol('perClientLimitWait');
type FastReq = IncomingMessage & { [LIMIT_WAIT]?: number };

/**
 * Reads served straight from the reply cache, before Fastify sees the request: a GET whose URL has an entry, public
 * or of the request's API session (which must still be valid: `sessions.resolve` checks expiry and the identity as
 * for any request, and records the activity). Per-client rate limits apply here too. Anything else, and every
 * miss, goes on to Fastify. Returns whether the request was answered (a promise of it when the API session had to
 * be resolved).
 */
function fastRead(
  core: Core,
  cache: ReplyCache,
  perClient: ClientRateLimiter | undefined,
  req: FastReq,
  res: ServerResponse,
): boolean | Promise<boolean> {
  if (req.method !== 'GET') return false;
  const url = req.url ?? '';
  const body = cache.get(ReplyCache.key(undefined, url));
  if (!body && cache.hasSessionEntries(url)) {
    const t = token(req);
    if (!t) return false;
    return apiSessionsOf(core)
      .resolve(t)
      .then((resolved) => {
        const mine = resolved && cache.get(ReplyCache.key(resolved.session.id, url));
        return !!mine && answerFast(perClient, req, res, mine);
      });
  }
  return !!body && answerFast(perClient, req, res, body);
}

function answerFast(perClient: ClientRateLimiter | undefined, req: FastReq, res: ServerResponse, body: Buffer): boolean {
  if (perClient) {
    const wait = perClient.take(req.socket.remoteAddress ?? '');
    if (wait > 0) {
      req[LIMIT_WAIT] = wait; // Fastify answers it (429) without taking another token
      return false;
    }
  }
  res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': body.length });
  res.end(body);
  markFromCache(res);
  return true;
}

const FROM_CACHE = Symbol('fromReplyCache');
type CachedRes = ServerResponse & { [FROM_CACHE]?: boolean };
const markFromCache = (res: ServerResponse | undefined) => res && ((res as CachedRes)[FROM_CACHE] = true);

/** Whether a response was a reply served again from the reply cache (metrics). */
export function servedFromCache(res: ServerResponse): boolean {
  return !!(res as CachedRes)[FROM_CACHE];
}

/**
 * The request's API session token: `zt-session` (a legacy session's token), else `Authorization: Bearer` (a legacy
 * token, or an OIDC session's JWT access token). As in OpenZiti, a `zt-session` header is the one looked at when
 * present, and it never carries a JWT.
 */
function token(req: { headers: IncomingHttpHeaders }): string | undefined {
  const zt = req.headers['zt-session'];
  if (typeof zt === 'string' && zt) return isJwt(zt) ? undefined : zt;
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer\s+(.+)$/i.exec(auth) : null;
  return m?.[1];
}

/** Authentications share an adaptive concurrency limit (argon2 and JWKS fetches are the expensive requests). */
const isAuthentication = (route: RouteDef) => !!route.authentication || route.path === '/authenticate' || route.path.startsWith('/authenticate/');

const isPromise = (v: unknown): v is Promise<unknown> => typeof (v as Promise<unknown> | undefined)?.then === 'function';

/**
 * One request: authentication, then the route's handler. Synchronous handlers finish without a deadline timer;
 * those that return a promise (every one that reads the store) are given the request timeout. Replies of
 * `cacheable` routes are kept serialized and served again while the database is unchanged (replyCache.ts).
 */
async function handle(
  core: Core,
  api: ApiName,
  route: RouteDef,
  req: FastifyRequest,
  reply: FastifyReply,
  cache: ReplyCache,
  limits?: ApiLimits,
  audit?: RestAudit,
): Promise<void> {
  const request: ApiRequest = {
    ctx: core.ctx(ANONYMOUS),
    params: req.params as Record<string, string>,
    query: req.query as ApiRequest['query'],
    // OpenZiti's PATCH: a null field is left alone (Go clients send null for what they do not change)
    body: req.method === 'PATCH' ? patchFields(req.body) : req.body,
    headers: req.headers,
    ip: req.ip,
    get peerCertificates() {
      return peerCertificates(req);
    },
    api,
    raw: req,
  };
  if (audit) audit.request = request;
  if (route.auth !== 'none') {
    const t = token(req);
    const resolved = t ? await apiSessionsOf(core).resolve(t) : undefined;
    if (audit && resolved) audit.caller = resolved.caller;
    if (!resolved || (route.auth === 'session' && resolved.caller.partial)) throw unauthenticated(!!resolved);
    request.ctx = core.ctx(resolved.caller);
    request.session = resolved.session;
  }
  // a write's audit entry goes in with the write it names (the core's write gate), in its transaction
  if (audit?.target.kind === 'write') request.ctx = { ...request.ctx, onWrite: pendingRestAudit(audit, request).onWrite };
  let keep: { cache: ReplyCache; apiSessionId: string | undefined; url: string; generation: number } | undefined;
  if (route.cacheable && req.method === 'GET') {
    const apiSessionId = request.session?.id;
    const key = ReplyCache.key(apiSessionId, req.url);
    const hit = cache.get(key);
    if (hit !== undefined) {
      markFromCache(reply.raw);
      void reply.code(200).type(JSON_TYPE).send(hit);
      return;
    }
    if (cache.admit(key)) {
      keep = { cache, apiSessionId, url: req.url, generation: core.store.generation };
      request.ctx = trackReuse(request.ctx);
    }
  }
  const authLimit = isAuthentication(route) ? limits?.auth : undefined;
  const release = authLimit?.tryAcquire();
  if (authLimit && !release) throw rateLimited(1);
  let result: ApiReply | Promise<ApiReply>;
  try {
    result = route.handler(request);
  } catch (e) {
    release?.();
    throw e;
  }
  if (!isPromise(result)) {
    release?.();
    return send(core, reply, request, result, audit, keep);
  }
  if (release) result.finally(release).catch(() => undefined);
  const work = limits ? withDeadline(result, limits.requestTimeoutMs) : result;
  return work.then((out) => send(core, reply, request, out, audit, keep));
}

// Fastify: a handler that returns undefined (or a promise of it) has answered through `reply` itself.

async function send(
  core: Core,
  reply: FastifyReply,
  request: ApiRequest,
  out: ApiReply,
  audit?: RestAudit,
  keep?: { cache: ReplyCache; apiSessionId: string | undefined; url: string; generation: number },
): Promise<void> {
  // recorded before the answer leaves: a client that reads the log next finds the entry (failures: the error handler)
  if (audit) await recordRestAudit(core, audit, { status: out.status ?? 200, data: out.data }, request, request.ip);
  const status = out.status ?? 200;
  reply.code(status);
  if (out.raw) {
    for (const [k, v] of Object.entries(out.raw.headers ?? {})) void reply.header(k, v);
    void reply.type(out.raw.contentType).send(out.raw.body);
    return;
  }
  const json = JSON.stringify(envelope(out.data ?? {}, out.meta));
  if (keep && status === 200 && !isVolatile(request.ctx)) {
    const body = Buffer.from(json);
    keep.cache.set(keep.apiSessionId, keep.url, body, keep.generation);
    void reply.type(JSON_TYPE).send(body);
    return;
  }
  void reply.type(JSON_TYPE).send(json);
}

function unauthenticated(partial: boolean): ApiError {
  const e = unauthorized();
  const description = partial ? 'additional authentication is required' : 'no valid API session token was supplied';
  return new ApiError(e.code, e.status, e.message, undefined, {
    'www-authenticate': `zt-session realm="weft" error="invalid_token" error_description="${description}"`,
  });
}

/**
 * Every error leaves in the envelope with a requestId; internals are logged, never sent. `onError` (the audit log)
 * is done before the answer leaves.
 */
export function sendError(core: Core, req: FastifyRequest, reply: FastifyReply, err: unknown, onError?: (e: ApiError) => Promise<void>) {
  const requestId = randomUUID();
  let e: ApiError;
  if (err instanceof ApiError) e = err;
  else {
    const fe = err as FastifyError;
    if (fe.code === 'FST_ERR_BAD_URL' || fe.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      e = new ApiError('NOT_FOUND', 404, 'The resource requested was not found or is no longer available');
    } else if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || fe.statusCode === 413) {
      e = new ApiError('REQUEST_ENTITY_TOO_LARGE', 413, `The request body exceeds the limit of ${BODY_LIMIT} bytes`);
    } else if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      e = new ApiError('UNSUPPORTED_MEDIA_TYPE', 415, `Content-Type ${String(req.headers['content-type'])} is not supported`);
    } else if (fe.code?.startsWith('FST_ERR_CTP') || fe.statusCode === 400) {
      e = new ApiError('COULD_NOT_PARSE_BODY', 400, 'The body of the request could not be parsed');
    } else if (isStoreUnavailable(err)) {
      core.log.warn({ err, requestId, url: req.url }, 'store unavailable');
      e = unavailable('The data store is unavailable; try again later');
    } else {
      core.log.error({ err, requestId, url: req.url }, 'unhandled error');
      e = new ApiError('UNHANDLED', 500, 'An unexpected error occurred; it has been logged with this request id');
    }
  }
  const answer = () => {
    for (const [k, v] of Object.entries(e.headers ?? {})) void reply.header(k, v);
    // the value is echoed as sent, within bounds (a hostile body must not break the reply)
    const cause = e.fieldCause && { ...e.fieldCause, value: echoValue(e.fieldCause.value, 64 * 1024) };
    return reply
      .code(e.status)
      .type('application/json')
      .send(
        errorEnvelope({ code: e.code, message: e.message, requestId, cause, causeMessage: cause ? `${cause.field}: ${cause.reason}` : undefined }),
      );
  };
  return onError ? onError(e).then(answer) : answer();
}
