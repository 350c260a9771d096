import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { refusalMessage, type OAuthRuntime } from './oauthRuntime';
import { sendJson, sendPage, sendRedirect } from './pages';
import { ProviderError, type OAuthProvider } from './providers';
import { isAllowedLogoutRedirect, isUrlOfShare } from './redirects';
import type { Session } from './sessions';
import type { ShareResolver } from './types';

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

/** Routes of the OAuth listener: /health, /<name>/auth/callback, /<name>/logout, /<name>/login. */
export function createOAuthHandler(ctx: OAuthListenerContext) {
  const { oauth } = ctx;

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
        check.claims && check.reason !== 'invalid' && isUrlOfShare(check.claims.url, ctx.shareDomain, check.claims.shr)
          ? [{ href: check.claims.url, label: 'Start again' }]
          : [];
      return sendPage(res, 400, 'Sign-in failed', [STATE_FAILURES[check.reason]], { links: retry, setCookies: clearBinding });
    }
    const claims = check.claims;
    log.share = claims.shr;
    if (!isUrlOfShare(claims.url, ctx.shareDomain, claims.shr)) {
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

    const callbackUrl = new URL(oauth.providerUrl(provider.name, 'auth/callback'));
    callbackUrl.search = query.toString();
    let identity;
    try {
      identity = await provider.completeLogin(callbackUrl, { state, nonce: claims.non, codeVerifier: claims.pkv });
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

    const share = await ctx.resolver.resolve(claims.shr);
    if (!share?.oauth || share.oauth.provider !== provider.name) {
      log.outcome = 'share_changed';
      return sendPage(res, 404, 'Share not found', ['This share no longer exists or no longer uses this sign-in.'], { setCookies: clearBinding });
    }
    const checked = oauth.check(share.oauth, identity);
    if (!checked.ok) {
      log.outcome = checked.reason;
      // Tokens of a refused user are of no further use.
      await provider.revoke(provider.tokensToStore(identity)).catch(() => undefined);
      const logoutLink = {
        href: `${oauth.providerUrl(provider.name, 'logout')}?redirect_url=${encodeURIComponent(claims.url)}`,
        label: 'Sign out and use another account',
      };
      return sendPage(res, 403, 'Access denied', [refusalMessage(checked.reason, identity.email)], { links: [logoutLink], setCookies: clearBinding });
    }

    const now = oauth.now();
    const cookie = await oauth.sessions.issue(
      {
        provider: provider.name,
        share: claims.shr,
        email: checked.email,
        expiresAtMs: now + oauth.sessionLifetimeMs,
        checkedAtMs: now,
        tokens: provider.tokensToStore(identity),
      },
      now,
    );
    log.outcome = 'login';
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
    const target = requested && isAllowedLogoutRedirect(requested, ctx.shareDomain, oauth.endpointUrl) ? requested : loginPage;
    sendRedirect(res, target, cleared);
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
    if (!provider || !['auth/callback', 'logout', 'login'].includes(action)) {
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
    if (action === 'logout') return logout(req, res, provider, url.searchParams, log);
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
