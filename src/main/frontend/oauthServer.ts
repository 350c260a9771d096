import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { refusalMessage, type OAuthRuntime } from './oauthRuntime';
import { sendJson, sendPage, sendRedirect } from './pages';
import { ProviderError, type OAuthProvider } from './providers';
import { hostName, isAllowedLogoutRedirect, isUrlOfShare, isUrlOfShareHost, parseStrictHttpUrl, shareTokenFromHost } from './redirects';
import type { Session } from './sessions';
import { RESERVED_PREFIX } from './tickets';
import { shareProviders, type PublicShare, type ShareOAuth, type ShareResolver } from './types';

export interface OAuthListenerContext {
  oauth: OAuthRuntime;
  resolver: ShareResolver;
  shareDomain: string;
  logger: Logger;
}

interface OAuthLog {
  route: string;
  provider?: string;
  share?: string;
  email?: string;
  status?: number;
  outcome?: string;
}

const STATE_FAILURES: Record<string, string> = {
  invalid: 'The sign-in response is not valid.',
  expired: 'The sign-in took too long and has expired.',
  unbound: 'The sign-in was not started in this browser (or its cookies are blocked).',
  replayed: 'This sign-in response has already been used.',
  wrong_provider: 'The sign-in response belongs to a different provider.',
};

const ACTIONS = ['auth/callback', 'auth/start', 'logout', 'logout/done', 'login'];
/** A host binding's hash (tickets.ts): SHA-256, base64url. */
const BINDING_HASH = /^[A-Za-z0-9_-]{43}$/;

/**
 * Routes of the OAuth listener: /health, /<name>/auth/callback, /<name>/auth/start (a login chosen on a share's page
 * or started by a custom domain), /<name>/logout, /<name>/logout/done (back from the provider's logout),
 * /<name>/login.
 */
export function createOAuthHandler(ctx: OAuthListenerContext) {
  const { oauth } = ctx;

  async function resolve(token: string): Promise<PublicShare | undefined> {
    const found = await ctx.resolver.resolve(token);
    return found ? { ...found, token } : undefined;
  }

  /** The share a URL belongs to: `<token>.<share domain>` or a custom domain. */
  async function shareOfUrl(raw: string): Promise<{ share: PublicShare; custom: boolean } | undefined> {
    const url = parseStrictHttpUrl(raw);
    if (!url) return undefined;
    const token = shareTokenFromHost(url.host, ctx.shareDomain);
    if (token) {
      const share = await resolve(token);
      return share ? { share, custom: false } : undefined;
    }
    const host = hostName(url.host);
    const share = ctx.resolver.resolveDomain ? await ctx.resolver.resolveDomain(host) : undefined;
    return share && (share.domains ?? []).includes(host) ? { share, custom: true } : undefined;
  }

  /** A URL of the share with this token: at `<token>.<share domain>`, or at one of its custom domains. */
  async function isUrlOf(raw: string, token: string): Promise<boolean> {
    if (isUrlOfShare(raw, ctx.shareDomain, token)) return true;
    return (await shareOfUrl(raw))?.share.token === token;
  }

  /** Logout redirects: a share (custom domains included) or under endpoint_url. */
  async function allowedRedirect(raw: string): Promise<boolean> {
    if (isAllowedLogoutRedirect(raw, ctx.shareDomain, oauth.endpointUrl)) return true;
    return (await shareOfUrl(raw))?.custom === true;
  }

  async function start(res: ServerResponse, provider: OAuthProvider, query: URLSearchParams, log: OAuthLog): Promise<void> {
    const url = query.get('url') ?? '';
    const bind = query.get('bind') ?? undefined;
    const found = await shareOfUrl(url);
    const share = found?.share;
    log.share = share?.token;
    if (!found || !share?.oauth || !shareProviders(share.oauth).includes(provider.name) || !isUrlOfShareHost(url, ctx.shareDomain, share)) {
      log.outcome = 'start_refused';
      return sendPage(res, 400, 'Sign-in failed', ['This sign-in link is not valid for any share.']);
    }
    if (found.custom && (!bind || !BINDING_HASH.test(bind))) {
      log.outcome = 'start_unbound';
      return sendPage(res, 400, 'Sign-in failed', ['This sign-in link is not valid for any share.']);
    }
    try {
      const login = await oauth.beginLogin(provider, share as PublicShare & { oauth: ShareOAuth }, url, found.custom ? bind : undefined);
      log.outcome = 'login_redirect';
      sendRedirect(res, login.location, login.setCookies);
    } catch (err) {
      log.outcome = 'provider_error';
      ctx.logger.warn(
        { share: share.token, provider: provider.name, err: err instanceof ProviderError ? err.message : String(err) },
        'cannot start oauth login',
      );
      sendPage(res, 502, 'Sign-in unavailable', ['The identity provider cannot be reached right now. Try again in a moment.']);
    }
  }

  async function callback(req: IncomingMessage, res: ServerResponse, provider: OAuthProvider, query: URLSearchParams, log: OAuthLog): Promise<void> {
    const state = query.get('state');
    if (!state) return sendPage(res, 400, 'Sign-in failed', [STATE_FAILURES.invalid]);
    const check = await oauth.states.consume(state, provider.name, req.headers.cookie, oauth.now());
    const clearBinding = check.bindingCookieName ? [oauth.states.clearBinding(check.bindingCookieName)] : [];
    if (!check.ok) {
      log.outcome = `state_${check.reason}`;
      log.share = check.claims?.shr;
      // The retry link is offered only for authentic (signed) states pointing at their own share.
      const retry =
        check.claims && check.reason !== 'invalid' && (await isUrlOf(check.claims.url, check.claims.shr))
          ? [{ href: check.claims.url, label: 'Start again' }]
          : [];
      return sendPage(res, 400, 'Sign-in failed', [STATE_FAILURES[check.reason]], { links: retry, setCookies: clearBinding });
    }
    const claims = check.claims;
    log.share = claims.shr;
    if (!(await isUrlOf(claims.url, claims.shr))) {
      log.outcome = 'bad_original_url';
      return sendPage(res, 400, 'Sign-in failed', [STATE_FAILURES.invalid], { setCookies: clearBinding });
    }
    const retry = [{ href: claims.url, label: 'Try again' }];
    if (query.has('error')) {
      log.outcome = 'provider_refused';
      return sendPage(res, 401, 'Sign-in was not completed', ['The identity provider did not complete the sign-in.'], {
        links: retry,
        setCookies: clearBinding,
      });
    }
    const share = await resolve(claims.shr);
    if (!share?.oauth || !shareProviders(share.oauth).includes(provider.name) || !isUrlOfShareHost(claims.url, ctx.shareDomain, share)) {
      log.outcome = 'share_changed';
      return sendPage(res, 404, 'Share not found', ['This share no longer exists or no longer uses this sign-in.'], { setCookies: clearBinding });
    }
    const oauthShare = share as PublicShare & { oauth: ShareOAuth };
    const custom = shareTokenFromHost(new URL(claims.url).host, ctx.shareDomain) !== share.token;
    if (custom && !claims.hbd) {
      log.outcome = 'bad_original_url';
      return sendPage(res, 400, 'Sign-in failed', [STATE_FAILURES.invalid], { setCookies: clearBinding });
    }

    const callbackUrl = new URL(oauth.providerUrl(provider.name, 'auth/callback'));
    callbackUrl.search = query.toString();
    let identity;
    try {
      identity = await provider.completeLogin(callbackUrl, { state, nonce: claims.non, codeVerifier: claims.pkv }, oauth.needs(oauthShare.oauth));
    } catch (err) {
      log.outcome = 'provider_error';
      ctx.logger.warn(
        { provider: provider.name, share: claims.shr, err: err instanceof ProviderError ? err.message : 'unexpected error' },
        'oauth code exchange failed',
      );
      return sendPage(res, 502, 'Sign-in failed', ['The identity provider could not complete the sign-in.'], {
        links: retry,
        setCookies: clearBinding,
      });
    }
    log.email = identity.email;

    const verdict = oauth.check(oauthShare.oauth, provider, identity);
    if (!verdict.ok) {
      log.outcome = verdict.reason;
      // Tokens of a refused user are of no further use.
      await provider.revoke(provider.tokensToStore(identity)).catch(() => undefined);
      const logoutLink = {
        href: `${oauth.providerUrl(provider.name, 'logout')}?redirect_url=${encodeURIComponent(claims.url)}`,
        label: 'Sign out and use another account',
      };
      return sendPage(res, 403, 'Access denied', [refusalMessage(verdict.reason, identity.email, provider.name)], {
        links: [logoutLink],
        setCookies: clearBinding,
      });
    }

    const session = oauth.sessionFor(oauthShare, provider, identity, verdict);
    log.outcome = 'login';
    if (custom) {
      // The session travels to the custom host in a ticket (tickets.ts); only that host can set its cookie.
      const url = new URL(claims.url);
      const ticket = await oauth.tickets.issue(
        { shr: share.token, hst: hostName(url.host), url: claims.url, hbd: claims.hbd!, ses: await oauth.sessions.sealValue(session, oauth.now()) },
        oauth.now(),
      );
      return sendRedirect(res, `${url.origin}${RESERVED_PREFIX}session?ticket=${encodeURIComponent(ticket)}`, clearBinding);
    }
    const cookie = await oauth.sessions.issue(session, oauth.now());
    sendRedirect(res, claims.url, [...clearBinding, cookie]);
  }

  async function logout(req: IncomingMessage, res: ServerResponse, provider: OAuthProvider, query: URLSearchParams, log: OAuthLog): Promise<void> {
    const mine = (await oauth.sessions.all(req.headers.cookie, oauth.now())).filter((s) => s.provider === provider.name);
    const seen = new Set<string>();
    const revocations: Promise<void>[] = [];
    for (const s of mine) {
      const key = `${s.tokens.accessToken ?? ''}|${s.tokens.refreshToken ?? ''}`;
      if (seen.has(key) || key === '|') continue;
      seen.add(key);
      revocations.push(revoke(provider, s));
    }
    await Promise.all(revocations); // failures are logged; the cookies are cleared regardless
    const cleared = [...new Set(mine.map((s) => s.cookieName))].map((name) => oauth.sessions.clear(name));
    log.email = mine[0]?.email;
    log.outcome = `logout:${mine.length}`;
    const requested = query.get('redirect_url');
    const loginPage = oauth.providerUrl(provider.name, 'login');
    const target = requested && (await allowedRedirect(requested)) ? requested : loginPage;
    sendRedirect(res, await oauth.logoutLocation(provider, target, mine.length), cleared);
  }

  /** Back from the provider's end_session_endpoint: on to where the logout was asked to go. */
  async function logoutDone(res: ServerResponse, provider: OAuthProvider, query: URLSearchParams, log: OAuthLog): Promise<void> {
    const claims = await oauth.tickets.openLogout(query.get('state') ?? '', oauth.now());
    log.outcome = claims ? 'logout_done' : 'logout_done_without_state';
    if (claims && claims.prv === provider.name && (await allowedRedirect(claims.url))) return sendRedirect(res, claims.url);
    loginPage(res, provider);
  }

  async function revoke(provider: OAuthProvider, session: Session): Promise<void> {
    try {
      await provider.revoke(session.tokens);
    } catch (err) {
      ctx.logger.warn(
        { provider: provider.name, share: session.share, email: session.email, err: err instanceof ProviderError ? err.message : 'unexpected error' },
        'token revocation failed; session cleared anyway',
      );
    }
  }

  function loginPage(res: ServerResponse, provider: OAuthProvider): void {
    sendPage(res, 200, 'Signed out', [`You are signed out of ${provider.name}.`, 'Open a share to sign in again.']);
  }

  async function route(req: IncomingMessage, res: ServerResponse, log: OAuthLog): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://oauth.invalid');
    // Routes live under endpoint_url's path ("/sso/<name>/logout"); /health also at the listener's root.
    const base = oauth.endpointPath;
    const path = !base ? url.pathname : url.pathname.startsWith(`${base}/`) ? url.pathname.slice(base.length) : undefined;
    if (url.pathname === '/health' || path === '/health') return sendJson(res, 200, { status: 'ok' });
    const parts = (path ?? '').split('/').filter(Boolean);
    const providerName = decodeSegment(parts[0]);
    const provider = providerName !== undefined ? oauth.providers.get(providerName) : undefined;
    const action = parts.slice(1).join('/');
    if (!provider || !ACTIONS.includes(action)) {
      return sendPage(res, 404, 'Not found', ['There is nothing at this address.']);
    }
    log.provider = provider.name;
    log.route = action;
    const allowed = action === 'login' ? ['GET', 'HEAD'] : ['GET'];
    if (!allowed.includes(req.method ?? '')) {
      res.setHeader('Allow', allowed.join(', '));
      return sendPage(res, 405, 'Method not allowed', ['Only GET is supported here.']);
    }
    if (action === 'auth/callback') return callback(req, res, provider, url.searchParams, log);
    if (action === 'auth/start') return start(res, provider, url.searchParams, log);
    if (action === 'logout') return logout(req, res, provider, url.searchParams, log);
    if (action === 'logout/done') return logoutDone(res, provider, url.searchParams, log);
    return loginPage(res, provider);
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const log: OAuthLog = { route: 'other' };
    res.on('close', () => {
      log.status = res.statusCode;
      ctx.logger.info(log, 'oauth request');
    });
    req.resume();
    try {
      await route(req, res, log);
    } catch (err) {
      log.outcome = 'error';
      ctx.logger.error({ err: (err as Error)?.message }, 'oauth request failed');
      if (!res.headersSent) sendPage(res, 500, 'Sign-in failed', ['Something went wrong. Try again.']);
      else res.destroy();
    }
  };
}

function decodeSegment(segment: string | undefined): string | undefined {
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
