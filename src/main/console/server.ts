import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOn } from '../listen';
import type { AddressListeners, FabricLive, LiveDataPlane } from '../core/dataPlane/index';
import type { MetricHistorySource } from './trpc';
import type { Core } from '../core/context';
import { defaultAdminLogin, apiSessionsOf } from '../core/auth/index';
import { ApiError } from '../core/errors';
import { isIP } from 'node:net';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { incomingMessageToRequest } from '@trpc/server/adapters/node-http';
import { LOGIN_LINK_FAILED_PARAM, LOGIN_LINK_PATH, SSO_CALLBACK_PATH, SSO_START_PATH, type ConsoleUrls } from '../../shared/console';
import { allowedHosts, csrfProblem, expiredCookie, LoginLinks, readCookie, resolveConsoleSession, sessionCookie, sessionCookieName } from './auth';
import { recordLinkLogin } from './audit';
import type { ConsoleSso } from './sso';
import { appRouter } from './router';
import { serveStatic } from './static';
import type { ConsoleContext } from './trpc';

/** Without `console.address` the console takes this one, or any free port when it is in use. */
export const DEFAULT_CONSOLE_ADDRESS = '127.0.0.1:1281';
const MAX_BODY = 1024 * 1024;

/** The renderer only loads its own scripts and styles and talks to its own origin. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=()',
};

export interface ConsoleServerOptions {
  core: Core;
  /** host:port; undefined = DEFAULT_CONSOLE_ADDRESS with a fallback to a free port */
  address: string | undefined;
  /** the built renderer (index.html and assets/) */
  rendererDir: string;
  loginLinkTtlMs: number;
  /** the controller's URLs (known once the API listens) */
  apiUrls: () => Omit<ConsoleUrls, 'console'>;
  /** OAuth providers the public frontend offers to shares (undefined: no frontend or no oauth section) */
  shareProviders?: string[];
  /** the built-in router's live state, when it runs */
  dataPlane?: LiveDataPlane;
  /** the circuits and links of every router of this node (built-in and stock) */
  fabric?: FabricLive;
  /** the last hour of metric samples, when metrics are on */
  metricHistory?: MetricHistorySource;
  /** the listeners behind the advertised address (the lab's fix for a loopback-only address) */
  networkAddress?: AddressListeners;
}

export interface ConsoleServer {
  url: string;
  /** A fresh one-time login link for the default admin. */
  createLoginLink(): string;
  close(): Promise<void>;
}

function splitAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(address.slice(i + 1)) };
}

/** The paths of the router's subscriptions (`events.tail`): the only procedures an EventSource may open. */
const SUBSCRIPTION_PATHS: ReadonlySet<string> = new Set(
  // (`_def.procedures` is flat at run time: "events.tail", not nested as its type says)
  Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>)
    .filter(([, p]) => p._def.type === 'subscription')
    .map(([path]) => path),
);

/**
 * Whether a tRPC request is a browser's EventSource opening a subscription: a GET of one subscription's path (no
 * batch) asking for `text/event-stream`. EventSource can send no header of its own, so such a request cannot carry
 * the console's CSRF header; it is let through with the session cookie alone, on these grounds:
 * - it can only open a subscription: a read-only stream (tRPC runs nothing else on that path, and a GET never runs a
 *   mutation); queries, mutations and batches still need the header;
 * - the cookie is SameSite=Strict, so no other site's request carries it;
 * - the Origin and Sec-Fetch-Site checks still apply (a browser sends them on a cross-origin EventSource), and the
 *   console answers with no CORS headers, so no other origin could read the stream anyway;
 * - the Host check (before this) keeps DNS-rebinding pages out.
 */
function isEventStreamOpen(req: IncomingMessage, pathname: string): boolean {
  if (req.method !== 'GET') return false;
  const accepts = (req.headers.accept ?? '').split(',').some((t) => t.split(';')[0]!.trim().toLowerCase() === 'text/event-stream');
  if (!accepts) return false;
  let path: string;
  try {
    path = decodeURIComponent(pathname.slice('/trpc/'.length));
  } catch {
    return false;
  }
  return SUBSCRIPTION_PATHS.has(path);
}

/**
 * Writes a streamed body (a subscription's events) as it comes, chunk by chunk, waiting while the client is behind
 * (`drain`); cancels the stream when the client goes away (tRPC then stops the subscription).
 */
async function pipeBody(res: ServerResponse, body: ReadableStream<Uint8Array>): Promise<void> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.once('drain', go);
          res.once('close', go);
        });
      }
    }
  } finally {
    res.off('close', cancel);
    res.end();
  }
}

function plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...extra });
  res.end(text);
}

/** The console's own loopback HTTP server: the built renderer, `/trpc` and the one-time login link. */
export async function startConsoleServer(opts: ConsoleServerOptions): Promise<ConsoleServer> {
  const { core } = opts;
  const { host } = splitAddress(opts.address ?? DEFAULT_CONSOLE_ADDRESS);
  const links = new LoginLinks(core.clock, opts.loginLinkTtlMs);
  let hosts = new Set<string>();
  let cookieName = '';
  let url = '';
  let sso: ConsoleSso | undefined;
  const urls = (): ConsoleUrls => ({ ...opts.apiUrls(), console: url });

  async function handleTrpc(req: IncomingMessage, res: ServerResponse, requestHost: string, pathname: string): Promise<void> {
    // an EventSource cannot send the CSRF header: the Origin and Sec-Fetch-Site checks alone (isEventStreamOpen)
    const problem = csrfProblem(req.headers, requestHost, { marker: !isEventStreamOpen(req, pathname) });
    if (problem) {
      core.log.warn({ problem }, 'console: refused a tRPC request');
      plain(res, 403, `Forbidden: ${problem}`);
      return;
    }
    const token = readCookie(req.headers.cookie, cookieName);
    const session = await resolveConsoleSession(core, token);
    // the last cookie decision of the request wins; a dead session's cookie is cleared
    let cookie: string | undefined = token && !session ? expiredCookie(cookieName) : undefined;
    const ctx: ConsoleContext = {
      core,
      urls,
      shareProviders: opts.shareProviders,
      dataPlane: opts.dataPlane,
      fabric: opts.fabric,
      metricHistory: opts.metricHistory,
      networkAddress: opts.networkAddress,
      session,
      clientIp: req.socket.remoteAddress ?? '127.0.0.1',
      setSessionCookie: (t) => (cookie = sessionCookie(cookieName, t)),
      clearSessionCookie: () => (cookie = expiredCookie(cookieName)),
    };
    const response = await fetchRequestHandler({
      endpoint: '/trpc',
      req: incomingMessageToRequest(req, res, { maxBodySize: MAX_BODY }),
      router: appRouter,
      createContext: () => ctx,
      onError: ({ error, path }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR' && !(error.cause instanceof ApiError)) {
          core.log.error({ err: error.cause ?? error, path }, 'console procedure failed');
        }
      },
    });
    const headers: Record<string, string | string[]> = { ...SECURITY_HEADERS, 'cache-control': 'no-store' };
    response.headers.forEach((value, key) => {
      if (key !== 'set-cookie') headers[key] = value;
    });
    if (cookie) headers['set-cookie'] = cookie;
    // a subscription's events go out as they come (buffering its body would wait for the stream to end)
    if (response.body && req.method !== 'HEAD' && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      res.writeHead(response.status, headers);
      res.flushHeaders();
      await pipeBody(res, response.body);
      return;
    }
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  async function handleLoginLink(req: IncomingMessage, res: ServerResponse, requestUrl: URL): Promise<void> {
    const redirect = (location: string, setCookie?: string) => {
      res.writeHead(303, { ...SECURITY_HEADERS, location, 'cache-control': 'no-store', ...(setCookie ? { 'set-cookie': setCookie } : {}) });
      res.end();
    };
    if (req.method !== 'GET') {
      plain(res, 405, 'Method not allowed', { allow: 'GET' });
      return;
    }
    if (!links.consume(requestUrl.searchParams.get('token'))) {
      await recordLinkLogin(core, { errorCode: 'INVALID_AUTH' }, req.socket.remoteAddress ?? '127.0.0.1');
      redirect(`/?${LOGIN_LINK_FAILED_PARAM}=link-invalid`);
      return;
    }
    let token: string;
    const ip = req.socket.remoteAddress ?? '127.0.0.1';
    try {
      token = await defaultAdminLogin(core, ip);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      core.log.warn({ code: e.code }, 'console: one-time link login refused');
      await recordLinkLogin(core, { errorCode: e.code }, ip);
      redirect(`/?${LOGIN_LINK_FAILED_PARAM}=link-refused`);
      return;
    }
    await recordLinkLogin(core, { caller: (await resolveConsoleSession(core, token))?.caller }, ip);
    const previous = await resolveConsoleSession(core, readCookie(req.headers.cookie, cookieName));
    if (previous) await apiSessionsOf(core).remove(previous.session.id);
    redirect('/', sessionCookie(cookieName, token));
  }

  /** Sign-in through an external JWT signer's IdP: the start sends the browser there, the callback signs it in. */
  async function handleSso(req: IncomingMessage, res: ServerResponse, requestUrl: URL): Promise<void> {
    const redirect = (location: string, cookies: Array<string | undefined>) => {
      const setCookie = cookies.filter((c): c is string => !!c);
      res.writeHead(303, { ...SECURITY_HEADERS, location, 'cache-control': 'no-store', ...(setCookie.length ? { 'set-cookie': setCookie } : {}) });
      res.end();
    };
    if (req.method !== 'GET') {
      plain(res, 405, 'Method not allowed', { allow: 'GET' });
      return;
    }
    // loaded at the first use: it pulls in openid-client (as the share frontend's providers do)
    const { ConsoleSso, SsoFailed } = await import('./sso');
    sso ??= new ConsoleSso(core, () => url, `${cookieName}-sso`);
    const ip = req.socket.remoteAddress ?? '127.0.0.1';
    const via = { route: `GET ${requestUrl.pathname}`, authMethod: 'ext-jwt' };
    try {
      if (requestUrl.pathname === SSO_START_PATH) {
        const started = await sso.start(requestUrl.searchParams.get('signer') ?? '');
        redirect(started.location, [started.cookie]);
        return;
      }
      const done = await sso.complete(requestUrl, req.headers.cookie, ip);
      await recordLinkLogin(core, { caller: (await resolveConsoleSession(core, done.token))?.caller }, ip, via);
      const previous = await resolveConsoleSession(core, readCookie(req.headers.cookie, cookieName));
      if (previous) await apiSessionsOf(core).remove(previous.session.id);
      redirect('/', [done.clearCookie, sessionCookie(cookieName, done.token)]);
    } catch (e) {
      if (!(e instanceof SsoFailed)) throw e;
      core.log.warn({ code: e.code, detail: e.message }, 'console: sign-in through an IdP refused');
      if (requestUrl.pathname === SSO_CALLBACK_PATH) await recordLinkLogin(core, { errorCode: 'INVALID_AUTH' }, ip, via);
      redirect(`/?${LOGIN_LINK_FAILED_PARAM}=${e.code}`, [e.clearCookie]);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestHost = (req.headers.host ?? '').toLowerCase();
    if (!hosts.has(requestHost)) {
      plain(res, 421, 'Misdirected request: this console answers only to its loopback address');
      return;
    }
    const requestUrl = new URL(req.url ?? '/', `http://${requestHost}`);
    if (requestUrl.pathname.startsWith('/trpc/')) return handleTrpc(req, res, requestHost, requestUrl.pathname);
    if (requestUrl.pathname === LOGIN_LINK_PATH) return handleLoginLink(req, res, requestUrl);
    if (requestUrl.pathname === SSO_START_PATH || requestUrl.pathname === SSO_CALLBACK_PATH) return handleSso(req, res, requestUrl);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      plain(res, 405, 'Method not allowed', { allow: 'GET, HEAD' });
      return;
    }
    await serveStatic(res, opts.rendererDir, requestUrl.pathname, req.method === 'HEAD', SECURITY_HEADERS);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      core.log.error({ err: e }, 'console request failed');
      if (!res.headersSent) plain(res, 500, 'Internal error');
      else res.destroy();
    });
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 60_000;

  const wanted = splitAddress(opts.address ?? DEFAULT_CONSOLE_ADDRESS).port;
  const port = await listenOn(
    server,
    host,
    wanted,
    opts.address !== undefined
      ? undefined
      : {
          onFallback: () => core.log.warn({ address: DEFAULT_CONSOLE_ADDRESS }, 'console: the default address is in use; taking a free port'),
        },
  );
  hosts = allowedHosts(host, port);
  cookieName = sessionCookieName(port);
  url = `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;

  return {
    url,
    createLoginLink: () => `${url}${LOGIN_LINK_PATH}?token=${links.issue()}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
