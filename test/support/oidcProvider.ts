// A real OpenID Provider (oidc-provider 9) on 127.0.0.1, port 0, plain http.
// Users sign in through oidc-provider's development interactions: any login name is accepted
// (any password), and the email claims of that account come from `setAccount`.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import type { HttpUserAgent } from './browser';
import type { Page } from 'playwright-core';

export interface OidcAccount {
  email: string;
  emailVerified: boolean;
  /** More claims of the account (e.g. groups), released with the `email` scope in the ID token and userinfo. */
  claims?: Record<string, unknown>;
}

export interface OidcClientRegistration {
  clientId: string;
  /** none for a public client (tokenEndpointAuthMethod 'none': PKCE instead of a secret) */
  clientSecret?: string;
  redirectUris: string[];
  /** Where RP-initiated logout may send the browser back (post_logout_redirect_uri). */
  postLogoutRedirectUris?: string[];
  /**
   * How the client must authenticate at the token and revocation endpoints. oidc-provider itself takes either
   * for a client registered with one of them; with this set, the other method is refused (invalid_client).
   */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
  /**
   * Compare Basic credentials as sent, without undoing their form-encoding (RFC 6749 2.3.1), as some providers
   * do: then an id or secret holding any of -_.!~*'() fails with client_secret_basic.
   */
  rawBasicCredentials?: boolean;
}

export interface TestOidcProvider {
  issuer: string;
  /** Sets the email claims of a login name (unknown names get `<name>@example.test`, verified). */
  setAccount(login: string, account: OidcAccount): void;
  /** Completed refresh_token grants (token endpoint), in order. */
  readonly refreshGrants: number;
  /** Grants revoked through the revocation endpoint. */
  readonly revocations: number;
  /** Emits 'refresh' and 'revoked' as they happen (wait on these instead of sleeping). */
  readonly events: EventEmitter;
  close(): Promise<void>;
}

interface ProviderInstance {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => void;
  on(event: string, listener: (...args: any[]) => void): void;
  use(middleware: (ctx: any, next: () => Promise<void>) => Promise<void>): void;
}
type ProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance;

// oidc-provider ships no type declarations; load it through a variable specifier so the
// strict compiler does not need them (the small interface above is all the tests use).
const OIDC_PROVIDER_MODULE = 'oidc-provider';

export async function startOidcProvider(opts: {
  clients: OidcClientRegistration[];
  accounts?: Record<string, OidcAccount>;
  /** token_endpoint_auth_methods_supported, in this order (oidc-provider's default lists client_secret_basic first). */
  clientAuthMethods?: string[];
  /** names of account claims (OidcAccount.claims) released with the email scope */
  extraClaims?: string[];
  /** put the email scope's claims in the ID token too (default: only in userinfo) */
  idTokenClaims?: boolean;
  /**
   * A resource server (RFC 8707 resource indicators) whose access tokens are JWTs signed with the provider's key:
   * `resource` is their audience and every authorization request's default resource, `scope` the scopes it accepts,
   * `claims` account claims (OidcAccount) copied into its access tokens.
   */
  jwtAccessTokens?: { resource: string; scope: string; claims?: string[] };
}): Promise<TestOidcProvider> {
  const { default: Provider } = (await import(OIDC_PROVIDER_MODULE)) as { default: ProviderConstructor };
  const accounts = new Map<string, OidcAccount>(Object.entries(opts.accounts ?? {}));
  const events = new EventEmitter();
  let refreshGrants = 0;
  let revocations = 0;

  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingJwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-key' };

  const accountClaims = (id: string): Record<string, unknown> => {
    const account = accounts.get(id) ?? { email: `${id}@example.test`, emailVerified: true };
    return { sub: id, email: account.email, email_verified: account.emailVerified, ...(account.claims ?? {}) };
  };
  const resourceServer = opts.jwtAccessTokens;

  const provider = new Provider(issuer, {
    clients: opts.clients.map((c) => ({
      client_id: c.clientId,
      ...(c.clientSecret !== undefined ? { client_secret: c.clientSecret } : {}),
      redirect_uris: c.redirectUris,
      ...(c.postLogoutRedirectUris ? { post_logout_redirect_uris: c.postLogoutRedirectUris } : {}),
      response_types: ['code'],
      // refresh_token must be an allowed grant for oidc-provider to issue refresh tokens.
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: c.tokenEndpointAuthMethod ?? 'client_secret_basic',
    })),
    ...(opts.clientAuthMethods ? { clientAuthMethods: opts.clientAuthMethods } : {}),
    async findAccount(_ctx: unknown, id: string) {
      return {
        accountId: id,
        async claims() {
          return accountClaims(id);
        },
      };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified', ...(opts.extraClaims ?? [])] },
    // idTokenClaims: the claims of the scopes in the ID token too (oidc-provider puts them only in userinfo when the
    // access token can fetch it)
    conformIdTokenClaims: !opts.idTokenClaims,
    scopes: ['openid', 'email', 'offline_access'],
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true, allowedPolicy: async () => true },
      ...(resourceServer
        ? {
            resourceIndicators: {
              enabled: true,
              defaultResource: async () => resourceServer.resource,
              // the code's resource also at the token endpoint when the client names none
              useGrantedResource: async () => true,
              getResourceServerInfo: async (_ctx: unknown, indicator: string) => {
                if (indicator !== resourceServer.resource) throw new Error(`unknown resource ${indicator}`);
                return { scope: resourceServer.scope, audience: resourceServer.resource, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
              },
            },
          }
        : {}),
    },
    ...(resourceServer?.claims
      ? {
          extraTokenClaims: async (_ctx: unknown, token: { accountId?: string }) => {
            if (!token.accountId) return undefined;
            const claims = accountClaims(token.accountId);
            return Object.fromEntries(resourceServer.claims!.map((c) => [c, claims[c]]));
          },
        }
      : {}),
    pkce: { required: () => false },
    rotateRefreshToken: true,
    jwks: { keys: [signingJwk] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, RefreshToken: 86400, Interaction: 600, Session: 3600, Grant: 86400 },
  });
  // Client authentication rules oidc-provider does not have, checked once it has answered (then overridden).
  const registrations = new Map(opts.clients.map((c) => [c.clientId, c]));
  provider.use(async (ctx, next) => {
    await next();
    const registration = registrations.get(ctx.oidc?.client?.clientId);
    if (
      !registration ||
      registration.tokenEndpointAuthMethod === 'none' ||
      ctx.method !== 'POST' ||
      !['token', 'revocation'].includes(ctx.oidc.route)
    )
      return;
    const authorization = String(ctx.headers.authorization ?? '');
    const used = authorization ? 'client_secret_basic' : 'client_secret_post';
    const rawBasic = Buffer.from(authorization.replace(/^Basic /i, ''), 'base64').toString('utf8');
    let refusal: string | undefined;
    if (registration.tokenEndpointAuthMethod && used !== registration.tokenEndpointAuthMethod)
      refusal = `this client must use ${registration.tokenEndpointAuthMethod}`;
    else if (
      registration.rawBasicCredentials &&
      used === 'client_secret_basic' &&
      rawBasic !== `${registration.clientId}:${registration.clientSecret}`
    )
      refusal = 'invalid secret provided';
    if (refusal) {
      ctx.status = 401;
      ctx.type = 'application/json';
      ctx.body = { error: 'invalid_client', error_description: refusal };
    }
  });
  provider.on('grant.success', (ctx: { oidc?: { params?: { grant_type?: string } } }) => {
    if (ctx.oidc?.params?.grant_type === 'refresh_token') {
      refreshGrants += 1;
      events.emit('refresh', refreshGrants);
    }
  });
  provider.on('grant.revoked', () => {
    revocations += 1;
    events.emit('revoked', revocations);
  });
  const callback = provider.callback();
  server.on('request', (req, res) => callback(req, res));

  return {
    issuer,
    setAccount: (login, account) => void accounts.set(login, account),
    get refreshGrants() {
      return refreshGrants;
    },
    get revocations() {
      return revocations;
    },
    events,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Drives oidc-provider's development login and consent forms over HTTP, starting at an
 * authorization URL; returns the URL the provider finally redirects to (the client's callback).
 */
export async function signInAtOidcProvider(agent: HttpUserAgent, authorizationUrl: string, login: string): Promise<string> {
  const issuerOrigin = new URL(authorizationUrl).origin;
  let next = authorizationUrl;
  for (let step = 0; step < 20; step++) {
    if (new URL(next).origin !== issuerOrigin) return next;
    const res = await agent.request(next);
    if (res.status >= 300 && res.status < 400 && res.location) {
      next = res.location;
      continue;
    }
    const prompt = /name="prompt" value="(login|consent)"/.exec(res.body)?.[1];
    const action = /<form[^>]*action="([^"]+)"/.exec(res.body)?.[1];
    if (res.status !== 200 || !prompt || !action) throw new Error(`unexpected oidc-provider page (HTTP ${res.status}) at ${next}`);
    const form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any-password' } : { prompt });
    const submitted = await agent.request(new URL(action.replace(/&amp;/g, '&'), next).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    if (!submitted.location) throw new Error(`oidc-provider did not redirect after the ${prompt} form (HTTP ${submitted.status})`);
    next = submitted.location;
  }
  throw new Error('too many steps at oidc-provider');
}

/**
 * Follows an RP-initiated logout at oidc-provider over HTTP: its end_session page asks to confirm (a form), and the
 * confirmation redirects to the post_logout_redirect_uri; returns that URL.
 */
export async function confirmOidcLogout(agent: HttpUserAgent, endSessionUrl: string): Promise<string> {
  const page = await agent.request(endSessionUrl);
  const action = /<form[^>]*action="([^"]+)"/.exec(page.body)?.[1];
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (page.status !== 200 || !action || !xsrf) throw new Error(`unexpected oidc-provider logout page (HTTP ${page.status})`);
  const confirmed = await agent.request(new URL(action.replace(/&amp;/g, '&'), endSessionUrl).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
  });
  if (!confirmed.location) throw new Error(`oidc-provider did not redirect after the logout confirmation (HTTP ${confirmed.status})`);
  return confirmed.location;
}

/** Completes oidc-provider's login (and consent, if asked) pages in the browser. */
export async function signInWithBrowser(page: Page, login: string, issuer: string): Promise<void> {
  await page.waitForURL((u) => u.href.startsWith(issuer));
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', 'any-password');
  await Promise.all([page.waitForURL((u) => !u.pathname.endsWith('/login')), page.click('button[type="submit"]')]);
  if (page.url().startsWith(issuer) && (await page.locator('input[name="prompt"][value="consent"]').count())) {
    await Promise.all([page.waitForURL((u) => !u.href.startsWith(issuer)), page.click('button[type="submit"]')]);
  }
}
