import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { withDeadline, type ApiLimits } from '../core/auth/rateLimit';
import type { Core } from '../core/core';
import { ApiError, echoValue, rateLimited, unauthorized, unavailable } from '../core/errors';
import { isStoreUnavailable } from '../core/ops/availability';
import { patchFields } from '../core/validation';
import { auditTarget, recordRestAudit, type RestAudit, type RestAuditTarget } from './audit';
import { envelope, errorEnvelope } from './envelope';
import { API_BASES, peerCertificates, type ApiName, type ApiReply, type ApiRequest, type RouteDef } from './registry';

export const BODY_LIMIT = 1024 * 1024;
/** The request line plus headers, as OpenZiti (Go's http.Server default of 1 MB); long filters travel in the URL. */
export const HEADER_LIMIT = 1024 * 1024;
const TEXT_TYPES = ['text/plain', 'application/x-pem-file', 'application/pkcs10', 'application/x-x509-user-cert', 'application/pkix-cert'];

export interface ApiServerOptions {
  tls: { key: string; cert: string };
  routes: RouteDef[];
  /** extra root paths served outside the API bases (OpenZiti's aliases), as [path, api to answer for] */
  rootAliases: Array<{ method: 'GET'; path: string; api: ApiName; target: string }>;
  /** rate limits and the request timeout (none when absent) */
  limits?: ApiLimits;
}

/** One HTTPS listener for both APIs; client certificates are requested but optional. */
export function createApiServer(core: Core, opts: ApiServerOptions): FastifyInstance {
  const app = Fastify({
    https: {
      // No `ca`: Node would list those CAs in the certificate request, and Go clients (OpenZiti's SDKs and CLI) then
      // withhold certificates from other issuers, e.g. third-party CAs for OTTCA enrollment. Chains are checked in the core.
      key: opts.tls.key, cert: opts.tls.cert, requestCert: true, rejectUnauthorized: false,
      maxHeaderSize: HEADER_LIMIT,
    },
    bodyLimit: BODY_LIMIT,
    clientErrorHandler: rawClientError,
    // ids in paths may be long (find-my-way's default is 100 characters); longer ones are simply not found
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 8192 },
    // URLs the router cannot decode or match answer in the envelope too
    frameworkErrors: (err, req, reply) => sendError(core, req, reply, err),
    genReqId: () => randomUUID(),
    logger: false,
    return503OnClosing: true,
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
    sendError(core, req, reply, err, (e) => {
      const audit = auditOf(req);
      if (audit) recordRestAudit(core, audit, { errorCode: e.code }, audit.request, req.ip);
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
      const wait = perClient.take(req.ip);
      if (wait > 0) return sendError(core, req, reply, rateLimited(wait));
    });
  }

  const register = (api: ApiName, route: RouteDef, fullPath: string) => {
    const regex = new RegExp(`^${fullPath.replace(/:[A-Za-z]+/g, '[^/]+')}$`);
    let entry = allowed.find((a) => a.regex.source === regex.source);
    if (!entry) allowed.push((entry = { regex, methods: new Set() }));
    entry.methods.add(route.method);
    if (route.method === 'GET') entry.methods.add('HEAD');
    const target = auditTarget(api, route);
    app.route({
      method: route.method,
      url: fullPath,
      config: { audit: target && { api, target } },
      handler: (req, reply) => handle(core, api, route, req, reply, opts.limits, auditOf(req)),
    });
  };
  for (const route of opts.routes) for (const api of route.apis) register(api, route, API_BASES[api] + route.path);
  for (const alias of opts.rootAliases) {
    const route = opts.routes.find((r) => r.method === alias.method && r.path === alias.target && r.apis.includes(alias.api));
    if (route) register(alias.api, route, alias.path);
  }
  return app;
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

function token(req: FastifyRequest): string | undefined {
  const zt = req.headers['zt-session'];
  if (typeof zt === 'string' && zt) return zt;
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer\s+(.+)$/i.exec(auth) : null;
  return m?.[1];
}

/** Authentications share an adaptive concurrency limit (argon2 and JWKS fetches are the expensive requests). */
const isAuthentication = (route: RouteDef) => route.path === '/authenticate' || route.path.startsWith('/authenticate/');

async function handle(core: Core, api: ApiName, route: RouteDef, req: FastifyRequest, reply: FastifyReply, limits?: ApiLimits, audit?: RestAudit) {
  const request: ApiRequest = {
    ctx: core.system,
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
    const resolved = t ? core.sessions.resolve(t) : undefined;
    if (audit && resolved) audit.caller = resolved.caller;
    if (!resolved || (route.auth === 'session' && resolved.caller.partial)) throw unauthenticated(!!resolved);
    request.ctx = core.ctx(resolved.caller);
    request.session = resolved.session;
  }
  const authLimit = isAuthentication(route) ? limits?.auth : undefined;
  const release = authLimit?.tryAcquire();
  if (authLimit && !release) throw rateLimited(1);
  const work = (async () => route.handler(request))();
  if (release) work.finally(release).catch(() => undefined);
  const out: ApiReply = limits ? await withDeadline(work, limits.requestTimeoutMs) : await work;
  // recorded before the answer leaves: a client that reads the log next finds the entry (failures: the error handler)
  if (audit) recordRestAudit(core, audit, { status: out.status ?? 200, data: out.data }, request, req.ip);
  reply.code(out.status ?? 200);
  if (out.raw) {
    for (const [k, v] of Object.entries(out.raw.headers ?? {})) void reply.header(k, v);
    return reply.type(out.raw.contentType).send(out.raw.body);
  }
  return reply.type('application/json').send(envelope(out.data ?? {}, out.meta));
}

function unauthenticated(partial: boolean): ApiError {
  const e = unauthorized();
  const description = partial ? 'additional authentication is required' : 'no valid API session token was supplied';
  return new ApiError(e.code, e.status, e.message, undefined, {
    'www-authenticate': `zt-session realm="weft" error="invalid_token" error_description="${description}"`,
  });
}

/** Every error leaves in the envelope with a requestId; internals are logged, never sent. */
export function sendError(core: Core, req: FastifyRequest, reply: FastifyReply, err: unknown, onError?: (e: ApiError) => void) {
  const requestId = String(req.id);
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
  onError?.(e);
  for (const [k, v] of Object.entries(e.headers ?? {})) void reply.header(k, v);
  // the value is echoed as sent, within bounds (a hostile body must not break the reply)
  const cause = e.fieldCause && { ...e.fieldCause, value: echoValue(e.fieldCause.value, 64 * 1024) };
  return reply
    .code(e.status)
    .type('application/json')
    .send(errorEnvelope({ code: e.code, message: e.message, requestId, cause, causeMessage: cause ? `${cause.field}: ${cause.reason}` : undefined }));
}
