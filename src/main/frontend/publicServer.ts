import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Agent } from 'undici';
import { forwardRequestHeaders } from './forwardHeaders';
import { pathRefusalMessage, refusalMessage, type OAuthRuntime } from './oauthRuntime';
import type { OverlayProxy } from './overlay';
import { sendJson, sendPage, sendRedirect } from './pages';
import { ProviderError } from './providers';
import { proxyHttp } from './proxyHttp';
import { proxyUpgrade, writeSocketResponse } from './proxyWebSocket';
import { hostName, isUrlOfShareHost, shareTokenFromHost } from './redirects';
import { isApiRequest } from './requestKind';
import { RESERVED_PREFIX } from './tickets';
import { shareProviders, type AuthIdentity, type PublicShare, type ShareOAuth, type ShareResolver } from './types';
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

const pathOnly = (p: string) => p.split('?')[0]!;

const TICKET_FAILURES: Record<string, string> = {
  invalid: 'The sign-in response is not valid.',
  expired: 'The sign-in took too long and has expired.',
  unbound: 'The sign-in was not started in this browser (or its cookies are blocked).',
  replayed: 'This sign-in response has already been used.',
};

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

  /** How a request reached its share: `<token>.<share domain>`, or one of its custom domains (host-only cookies). */
  interface Reached {
    share: PublicShare;
    /** the custom domain the request came in at, if any */
    customHost?: string;
  }

  async function findShare(hostHeader: string | undefined): Promise<Reached | undefined> {
    const token = shareTokenFromHost(hostHeader, ctx.shareDomain);
    if (token) {
      const share = await lookup(token);
      return share ? { share } : undefined;
    }
    const host = hostName(hostHeader);
    if (!host || !ctx.resolver.resolveDomain) return undefined;
    const found = ctx.resolver.resolveDomain(host);
    const share = found instanceof Promise ? await found : found;
    return share && (share.domains ?? []).includes(host) ? { share, customHost: host } : undefined;
  }

  /** OAuth gate shared by HTTP requests and upgrades. */
  async function checkAccess(req: IncomingMessage, reached: Reached, log: RequestLog, upgrade: boolean): Promise<Access> {
    const { share, customHost } = reached;
    if (!share.oauth) return { ok: true, setCookies: [] };
    const oauth = ctx.oauth;
    const names = shareProviders(share.oauth);
    log.provider = names.join(',');
    if (!oauth) {
      return denied(503, 'oauth_not_configured', (res) =>
        sendPage(res, 503, 'Share unavailable', ['This share requires a sign-in, but the frontend has no OAuth configuration.']),
      );
    }
    const oauthShare = share as PublicShare & { oauth: ShareOAuth };
    const gate = await oauth.authorize(req, oauthShare, requestPathOf(req.url), { hostOnly: !!customHost });
    switch (gate.kind) {
      case 'skip':
        log.outcome = 'skip_path';
        return { ok: true, setCookies: [] };
      case 'allow':
        log.provider = gate.identity.provider;
        log.email = gate.identity.email;
        return { ok: true, identity: gate.identity, setCookies: gate.setCookies };
      case 'bad_path':
        return denied(gate.status, 'bad_path', (res) =>
          sendPage(res, gate.status, gate.status === 414 ? 'Address too long' : 'Bad request', ['The requested address is not valid.']),
        );
      case 'misconfigured':
        ctx.logger.error({ share: share.token }, gate.message);
        return denied(503, 'misconfigured', (res) => sendPage(res, 503, 'Share unavailable', ['This share is not configured correctly.']));
      case 'forbidden': {
        log.provider = gate.provider;
        log.email = gate.email;
        const outcome = gate.scope === 'path' ? `path_${gate.reason}` : gate.reason;
        const logout = customHost
          ? `${RESERVED_PREFIX}logout`
          : `${oauth.providerUrl(gate.provider, 'logout')}?redirect_url=${encodeURIComponent(originalUrl(req))}`;
        if (upgrade || isApiRequest(req.headers)) {
          return denied(403, outcome, (res) =>
            sendJson(
              res,
              403,
              { error: 'forbidden', reason: gate.reason, ...(gate.scope === 'path' ? { scope: 'path' } : {}), email: gate.email },
              gate.setCookies.length ? { 'Set-Cookie': gate.setCookies } : {},
            ),
          );
        }
        const message = (gate.scope === 'path' ? pathRefusalMessage : refusalMessage)(gate.reason, gate.email, gate.provider);
        return denied(403, outcome, (res) =>
          sendPage(res, 403, 'Access denied', [message], {
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
              provider: names[0],
              ...(names.length > 1 ? { providers: names } : {}),
            }),
          );
        }
        const original = originalUrl(req);
        if (!isUrlOfShareHost(original, ctx.shareDomain, share)) {
          return denied(400, 'bad_request_target', (res) => sendPage(res, 400, 'Bad request', ['The requested address is not valid.']));
        }
        // A custom domain's login starts at the OAuth endpoint, bound to this host by a host-only cookie (tickets.ts).
        const binding = customHost ? oauth.tickets.newHostBinding() : undefined;
        const startUrl = (name: string) =>
          `${oauth.providerUrl(name, 'auth/start')}?url=${encodeURIComponent(original)}${binding ? `&bind=${binding.hash}` : ''}`;
        if (names.length > 1) {
          return denied(200, `login_choice:${gate.reason}`, (res) =>
            sendPage(res, 200, 'Sign in', ['This share needs a sign-in. Choose how to sign in:'], {
              links: names.map((name) => ({ href: startUrl(name), label: `Sign in with ${name}` })),
              setCookies: binding ? [binding.cookie] : [],
            }),
          );
        }
        if (binding) {
          return denied(302, `login_redirect:${gate.reason}`, (res) => sendRedirect(res, startUrl(names[0]!), [binding.cookie]));
        }
        const provider = oauth.providers.get(names[0]!)!;
        return denied(302, `login_redirect:${gate.reason}`, async (res) => {
          try {
            const login = await oauth.beginLogin(provider, oauthShare, original);
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

  /**
   * The reserved paths of a custom domain (/.weft-auth/session: a login ticket becomes the host-only session cookie;
   * /.weft-auth/logout: sign out on this host), or false for any other path.
   */
  async function reservedRoute(req: IncomingMessage, res: ServerResponse, reached: Reached, log: RequestLog): Promise<boolean> {
    const oauth = ctx.oauth;
    const path = pathOnly(requestPathOf(req.url));
    if (!reached.customHost || !reached.share.oauth || !oauth || !path.startsWith(RESERVED_PREFIX)) return false;
    const host = reached.customHost;
    const share = reached.share;
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      sendPage(res, 405, 'Method not allowed', ['Only GET is supported here.']);
      return true;
    }
    const query = new URL(requestPathOf(req.url), 'http://host.invalid').searchParams;
    const now = oauth.now();
    if (path === `${RESERVED_PREFIX}session`) {
      const redeemed = await oauth.tickets.redeem(query.get('ticket') ?? '', host, req.headers.cookie, now);
      if (!redeemed.ok) {
        log.outcome = `ticket_${redeemed.reason}`;
        sendPage(res, 400, 'Sign-in failed', [TICKET_FAILURES[redeemed.reason]], { links: [{ href: '/', label: 'Start again' }] });
        return true;
      }
      const claims = redeemed.claims;
      const cookie =
        claims.shr === share.token && isUrlOfShareHost(claims.url, ctx.shareDomain, share) && hostName(new URL(claims.url).host) === host
          ? await oauth.sessions.issueSealed(claims.ses, share.token, now, { hostOnly: true })
          : undefined;
      if (!cookie) {
        log.outcome = 'ticket_invalid';
        sendPage(res, 400, 'Sign-in failed', [TICKET_FAILURES.invalid], { links: [{ href: '/', label: 'Start again' }] });
        return true;
      }
      log.outcome = 'login';
      sendRedirect(res, claims.url, [cookie, oauth.tickets.clearHostBinding(claims.hbd)]);
      return true;
    }
    if (path === `${RESERVED_PREFIX}logout`) {
      const mine = (await oauth.sessions.all(req.headers.cookie, now)).filter((s) => s.share === share.token);
      for (const s of mine) {
        const provider = oauth.providers.get(s.provider);
        await provider
          ?.revoke(s.tokens)
          .catch((err: unknown) =>
            ctx.logger.warn(
              { provider: s.provider, share: share.token, err: err instanceof ProviderError ? err.message : 'unexpected error' },
              'token revocation failed; session cleared anyway',
            ),
          );
      }
      const cleared = [...new Set(mine.map((s) => s.cookieName))].map((name) => oauth.sessions.clear(name, { hostOnly: true }));
      log.outcome = `logout:${mine.length}`;
      log.email = mine[0]?.email;
      const target = `${ctx.publicScheme}://${String(req.headers.host ?? host).toLowerCase()}/`;
      const provider = mine[0] ? oauth.providers.get(mine[0].provider) : undefined;
      sendRedirect(res, provider ? await oauth.logoutLocation(provider, target, mine.length) : target, cleared);
      return true;
    }
    sendPage(res, 404, 'Not found', ['There is nothing at this address.']);
    return true;
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
    const reached = await findShare(req.headers.host);
    if (!reached) {
      if (!shareTokenFromHost(req.headers.host, ctx.shareDomain)) {
        if (pathOnly(path) === '/health' && (req.method === 'GET' || req.method === 'HEAD')) return sendJson(res, 200, { status: 'ok' });
        return sendPage(res, 404, 'Not found', ['There is nothing at this address.']);
      }
      log.share = shareTokenFromHost(req.headers.host, ctx.shareDomain);
      return sendPage(res, 404, 'Share not found', ['This share does not exist or is no longer available.']);
    }
    const share = reached.share;
    log.share = share.token;
    if (await reservedRoute(req, res, reached, log)) return;
    const access = await checkAccess(req, reached, log, false);
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
      const reached = await findShare(req.headers.host);
      const share = reached?.share;
      log.share = share?.token ?? shareTokenFromHost(req.headers.host, ctx.shareDomain);
      if (!reached || !share) {
        log.status = 404;
        return writeSocketResponse(socket, 404, { 'Content-Type': 'text/plain; charset=utf-8' }, 'Share not found.\n');
      }
      if (share.backendMode !== 'proxy' && !share.overlay) {
        log.status = 400;
        return writeSocketResponse(socket, 400, { 'Content-Type': 'text/plain; charset=utf-8' }, 'This share does not accept upgrades.\n');
      }
      const access = await checkAccess(req, reached, log, true);
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
