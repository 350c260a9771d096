import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Agent } from 'undici';
import { forwardRequestHeaders } from './forwardHeaders';
import { refusalMessage, type OAuthRuntime } from './oauthRuntime';
import type { OverlayProxy } from './overlay';
import { sendJson, sendPage, sendRedirect } from './pages';
import { ProviderError } from './providers';
import { proxyHttp } from './proxyHttp';
import { proxyUpgrade, writeSocketResponse } from './proxyWebSocket';
import { isUrlOfShare, shareTokenFromHost } from './redirects';
import { isApiRequest } from './requestKind';
import type { AuthIdentity, PublicShare, ShareOAuth, ShareResolver } from './types';
import { serveWebRoot } from './webRoot';

export interface PublicContext {
  shareDomain: string;
  publicScheme: 'http' | 'https';
  resolver: ShareResolver;
  logger: Logger;
  oauth?: OAuthRuntime;
  dispatcher: Agent;
  /** how overlay shares are reached; absent when this Weft runs no edge router */
  overlay?: OverlayProxy;
  /** Cookie names the frontend owns; stripped from every proxied request, OAuth share or not. */
  isOwnCookie: (name: string) => boolean;
  trackSocket: (socket: Duplex) => void;
}

interface RequestLog {
  share?: string;
  provider?: string;
  email?: string;
  method?: string;
  path: string;
  status?: number;
  outcome?: string;
}

/** Path and query of the request target; absolute-form targets keep only their path and query. */
export function requestPathOf(rawUrl: string | undefined): string {
  const raw = rawUrl ?? '/';
  if (raw.startsWith('/')) return raw;
  try {
    const url = new URL(raw);
    return `${url.pathname}${url.search}`;
  } catch {
    return '/';
  }
}

const pathOnly = (p: string) => p.split('?')[0];

type Access =
  | { ok: true; identity?: AuthIdentity; setCookies: string[] }
  | { ok: false; status: number; respond: (res: ServerResponse) => Promise<void> | void; socketBody: string; outcome: string };

const TARGET_CACHE_SIZE = 1024;

export function createPublicHandlers(ctx: PublicContext) {
  // Parsed share targets: the same few strings on every request.
  const targets = new Map<string, URL>();
  function targetUrl(target: string): URL {
    let url = targets.get(target);
    if (!url) {
      url = new URL(target);
      if (targets.size >= TARGET_CACHE_SIZE) targets.delete(targets.keys().next().value!);
      targets.set(target, url);
    }
    return url;
  }

  async function lookup(token: string): Promise<PublicShare | undefined> {
    const found = ctx.resolver.resolve(token);
    const share = found instanceof Promise ? await found : found; // store-backed resolvers answer synchronously
    return share ? { ...share, token } : undefined;
  }

  /** OAuth gate shared by HTTP requests and upgrades. */
  async function checkAccess(req: IncomingMessage, share: PublicShare, log: RequestLog, upgrade: boolean): Promise<Access> {
    if (!share.oauth) return { ok: true, setCookies: [] };
    const oauth = ctx.oauth;
    log.provider = share.oauth.provider;
    if (!oauth) {
      return denied(503, 'oauth_not_configured', (res) =>
        sendPage(res, 503, 'Share unavailable', ['This share requires a sign-in, but the frontend has no OAuth configuration.']),
      );
    }
    const gate = await oauth.authorize(req, share as PublicShare & { oauth: ShareOAuth });
    switch (gate.kind) {
      case 'allow':
        log.email = gate.identity.email;
        return { ok: true, identity: gate.identity, setCookies: gate.setCookies };
      case 'misconfigured':
        ctx.logger.error({ share: share.token }, gate.message);
        return denied(503, 'misconfigured', (res) => sendPage(res, 503, 'Share unavailable', ['This share is not configured correctly.']));
      case 'forbidden': {
        log.email = gate.email;
        const logout = `${oauth.providerUrl(gate.provider, 'logout')}?redirect_url=${encodeURIComponent(originalUrl(req))}`;
        if (upgrade || isApiRequest(req.headers)) {
          return denied(403, gate.reason, (res) =>
            sendJson(
              res,
              403,
              { error: 'forbidden', reason: gate.reason, email: gate.email },
              gate.setCookies.length ? { 'Set-Cookie': gate.setCookies } : {},
            ),
          );
        }
        return denied(403, gate.reason, (res) =>
          sendPage(res, 403, 'Access denied', [refusalMessage(gate.reason, gate.email)], {
            links: [{ href: logout, label: 'Sign out and use another account' }],
            setCookies: gate.setCookies,
          }),
        );
      }
      case 'login': {
        if (upgrade || isApiRequest(req.headers)) {
          return denied(401, `login_required:${gate.reason}`, (res) =>
            sendJson(res, 401, {
              error: 'authentication_required',
              message: 'Sign in by opening this share in a browser.',
              provider: share.oauth!.provider,
            }),
          );
        }
        const provider = oauth.providers.get(share.oauth.provider)!;
        const original = originalUrl(req);
        if (!isUrlOfShare(original, ctx.shareDomain, share.token)) {
          return denied(400, 'bad_request_target', (res) => sendPage(res, 400, 'Bad request', ['The requested address is not valid.']));
        }
        return denied(302, `login_redirect:${gate.reason}`, async (res) => {
          try {
            const login = await oauth.beginLogin(provider, share, original);
            sendRedirect(res, login.location, login.setCookies);
          } catch (err) {
            ctx.logger.warn(
              { share: share.token, provider: provider.name, err: err instanceof ProviderError ? err.message : String(err) },
              'cannot start oauth login',
            );
            sendPage(res, 502, 'Sign-in unavailable', ['The identity provider cannot be reached right now. Try again in a moment.']);
          }
        });
      }
    }
  }

  function denied(status: number, outcome: string, respond: (res: ServerResponse) => Promise<void> | void): Access {
    const error = status === 401 ? 'authentication_required' : status === 403 ? 'forbidden' : 'unavailable';
    return { ok: false, status, outcome, respond, socketBody: JSON.stringify({ error }) };
  }

  function originalUrl(req: IncomingMessage): string {
    return `${ctx.publicScheme}://${String(req.headers.host ?? '').toLowerCase()}${requestPathOf(req.url).replace(/^\/+/, '/')}`;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, log: RequestLog): Promise<void> {
    const path = requestPathOf(req.url);
    const token = shareTokenFromHost(req.headers.host, ctx.shareDomain);
    if (!token) {
      if (pathOnly(path) === '/health' && (req.method === 'GET' || req.method === 'HEAD')) return sendJson(res, 200, { status: 'ok' });
      return sendPage(res, 404, 'Not found', ['There is nothing at this address.']);
    }
    log.share = token;
    const share = await lookup(token);
    if (!share) return sendPage(res, 404, 'Share not found', ['This share does not exist or is no longer available.']);
    const access = await checkAccess(req, share, log, false);
    if (!access.ok) {
      log.outcome = access.outcome;
      req.resume();
      return access.respond(res);
    }
    if (share.overlay) {
      // the process that binds the share's service serves it (proxy or web): the request goes there as it is
      if (!ctx.overlay) return overlayUnavailable(res);
      const headers = forwardRequestHeaders(req, { publicScheme: ctx.publicScheme, isOwnCookie: ctx.isOwnCookie, identity: access.identity });
      const overlayShare = share as PublicShare & { overlay: { serviceId: string } };
      return proxyHttp(req, res, {
        dispatcher: ctx.overlay.dispatcher,
        target: ctx.overlay.target(overlayShare),
        path,
        headers,
        setCookies: access.setCookies,
      });
    }
    if (share.backendMode === 'web') {
      if (access.setCookies.length) res.setHeader('Set-Cookie', access.setCookies);
      return serveWebRoot(req, res, share.target, path);
    }
    const headers = forwardRequestHeaders(req, { publicScheme: ctx.publicScheme, isOwnCookie: ctx.isOwnCookie, identity: access.identity });
    await proxyHttp(req, res, { dispatcher: ctx.dispatcher, target: targetUrl(share.target), path, headers, setCookies: access.setCookies });
  }

  function overlayUnavailable(res: ServerResponse): void {
    sendPage(res, 503, 'Share unavailable', ['This share is served through the overlay network, which this frontend cannot reach.']);
  }

  async function request(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const log: RequestLog = { method: req.method, path: pathOnly(requestPathOf(req.url)) };
    res.on('close', () => {
      log.status = res.statusCode;
      ctx.logger.info(log, 'public request');
    });
    try {
      await handle(req, res, log);
    } catch (err) {
      log.outcome = 'error';
      ctx.logger.warn({ share: log.share, err: (err as Error)?.message }, 'public request failed');
      if (!res.headersSent) sendPage(res, 502, 'Bad gateway', ['The shared service failed to answer.']);
      else res.destroy();
    }
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    ctx.trackSocket(socket);
    socket.on('error', () => socket.destroy());
    const log: RequestLog = { method: req.method, path: pathOnly(requestPathOf(req.url)), outcome: 'upgrade' };
    try {
      const token = shareTokenFromHost(req.headers.host, ctx.shareDomain);
      const share = token ? await lookup(token) : undefined;
      log.share = token;
      if (!share) {
        log.status = 404;
        return writeSocketResponse(socket, 404, { 'Content-Type': 'text/plain; charset=utf-8' }, 'Share not found.\n');
      }
      if (share.backendMode !== 'proxy' && !share.overlay) {
        log.status = 400;
        return writeSocketResponse(socket, 400, { 'Content-Type': 'text/plain; charset=utf-8' }, 'This share does not accept upgrades.\n');
      }
      const access = await checkAccess(req, share, log, true);
      if (!access.ok) {
        log.status = access.status;
        log.outcome = access.outcome;
        return writeSocketResponse(
          socket,
          access.status,
          { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
          access.socketBody,
        );
      }
      const headers = forwardRequestHeaders(
        req,
        { publicScheme: ctx.publicScheme, isOwnCookie: ctx.isOwnCookie, identity: access.identity },
        { upgrade: true },
      );
      let target = share.overlay ? undefined : targetUrl(share.target);
      let createConnection: (() => Duplex) | undefined;
      if (share.overlay) {
        const overlayShare = share as PublicShare & { overlay: { serviceId: string } };
        if (!ctx.overlay) {
          log.status = 503;
          return writeSocketResponse(
            socket,
            503,
            { 'Content-Type': 'text/plain; charset=utf-8' },
            'This share is served through the overlay network, which this frontend cannot reach.\n',
          );
        }
        target = ctx.overlay.target(overlayShare);
        const conn = await ctx.overlay.dial(overlayShare);
        if (socket.destroyed) return void conn.destroy();
        createConnection = () => conn;
      }
      log.status = 101;
      await proxyUpgrade(req, socket, head, {
        target: target!,
        path: requestPathOf(req.url),
        headers,
        setCookies: access.setCookies,
        onUpstreamSocket: ctx.trackSocket,
        createConnection,
      });
    } catch (err) {
      log.status = 502;
      ctx.logger.warn({ share: log.share, err: (err as Error)?.message }, 'public upgrade failed');
      writeSocketResponse(socket, 502, { 'Content-Type': 'text/plain; charset=utf-8' }, 'Bad gateway.\n');
    } finally {
      ctx.logger.info(log, 'public upgrade');
    }
  }

  return { request, upgrade };
}
