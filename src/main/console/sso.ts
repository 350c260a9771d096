import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import { authenticateExtJwt, loginSigners, markUsedOnce, refusalReason, WRONG_AUDIENCE, type LoginSigner } from '../core/auth/index';
import type { Core } from '../core/context';
import { ApiError } from '../core/errors';
import { isLoopbackHost } from '../frontend/address';
import { deriveKeys } from '../frontend/keys';
import { LoginStates } from '../frontend/loginState';
import { SSO_CALLBACK_PATH, type SsoFailure } from '../../shared/console';

/** How long a started sign-in may take at the IdP. */
const STATE_LIFETIME_MS = 10 * 60_000;
const IDP_TIMEOUT_S = 10;
/** The login states' provider name (their `shr` field carries the signer's id). */
const PROVIDER = 'console';

/** A sign-in through an IdP that did not succeed: `code` tells the login page why; `detail` goes to the log only. */
export class SsoFailed extends Error {
  constructor(
    readonly code: SsoFailure,
    detail: string,
    /** Set-Cookie value clearing the flow's binding cookie, when there is one */
    readonly clearCookie?: string,
  ) {
    super(detail);
  }
}

/**
 * Console sign-in with the network's external JWT signers: the OIDC authorization code flow with PKCE against the
 * signer's issuer (openid-client, as a public client: the signer has a client id and no secret), then the token the
 * signer verifies (ID or access, its `targetToken`) goes through `POST /authenticate?method=ext-jwt` of the core, with
 * every check of that login. State, nonce and PKCE verifier live in the frontend's sealed login state (one-time across
 * every node on the database, bound to a cookie of the browser that started).
 */
export class ConsoleSso {
  private readonly states: LoginStates;

  constructor(
    private readonly core: Core,
    private readonly consoleUrl: () => string,
    cookieName: string,
  ) {
    const secret = () => randomBytes(32).toString('base64url');
    this.states = new LoginStates(deriveKeys(secret(), secret()), {
      cookieName,
      cookieDomain: '',
      secure: false,
      lifetimeMs: STATE_LIFETIME_MS,
      usedOnce: (key, expiresAtMs, nowMs) => markUsedOnce(core, key, new Date(expiresAtMs), new Date(nowMs)),
    });
  }

  private redirectUri(): string {
    return `${this.consoleUrl()}${SSO_CALLBACK_PATH}`;
  }

  private now(): number {
    return this.core.clock.now().getTime();
  }

  /** The IdP's authorization URL for a signer, and the cookie binding the flow to this browser. */
  async start(signerId: string): Promise<{ location: string; cookie: string }> {
    const signer = (await loginSigners(this.core, signerId))[0];
    if (!signer) throw new SsoFailed('sso-signer', `no enabled signer ${signerId} with an externalAuthUrl and a clientId`);
    const config = await discover(signer).catch((e: unknown) => {
      throw new SsoFailed('sso-unavailable', `discovery at ${signer.issuer}: ${describe(e)}`);
    });
    const login = await this.states.create({ provider: PROVIDER, share: signer.id, originalUrl: this.consoleUrl() }, this.now());
    const scopes = signer.scopes.includes('openid') ? signer.scopes : ['openid', ...signer.scopes];
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri(),
      response_type: 'code',
      scope: scopes.join(' '),
      state: login.state,
      nonce: login.claims.non,
      code_challenge: await client.calculatePKCECodeChallenge(login.claims.pkv),
      code_challenge_method: 'S256',
    });
    return { location: url.href, cookie: login.bindingCookie };
  }

  /**
   * The IdP's answer at the callback: checks the state (sealed, unexpired, bound to this browser, not used before),
   * exchanges the code and logs the identity in as `POST /authenticate?method=ext-jwt` does. Returns the API session's
   * token; throws SsoFailed otherwise.
   */
  async complete(callbackUrl: URL, cookieHeader: string | undefined, ipAddress: string): Promise<{ token: string; clearCookie: string }> {
    const state = callbackUrl.searchParams.get('state') ?? '';
    const checked = await this.states.consume(state, PROVIDER, cookieHeader, this.now());
    const clearCookie = checked.bindingCookieName ? this.states.clearBinding(checked.bindingCookieName) : undefined;
    if (!checked.ok) throw new SsoFailed('sso-state', `login state ${checked.reason}`, clearCookie);
    const { claims } = checked;
    const fail = (code: SsoFailure, detail: string) => new SsoFailed(code, detail, clearCookie);
    const idpError = callbackUrl.searchParams.get('error');
    if (idpError) throw fail('sso-idp', `the IdP answered ${idpError}`);
    const signer = (await loginSigners(this.core, claims.shr))[0];
    if (!signer) throw fail('sso-signer', `signer ${claims.shr} is gone, disabled or has no client id`);
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      const config = await discover(signer);
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        expectedState: state,
        expectedNonce: claims.non,
        pkceCodeVerifier: claims.pkv,
        idTokenExpected: true,
      });
    } catch (e) {
      throw fail('sso-idp', `code exchange at ${signer.issuer}: ${describe(e)}`);
    }
    const jwt = signer.targetToken === 'ID' ? tokens.id_token : tokens.access_token;
    if (!jwt) throw fail('sso-idp', `the IdP sent no ${signer.targetToken === 'ID' ? 'ID' : 'access'} token`);
    try {
      const view = await authenticateExtJwt(this.core, { authorization: `Bearer ${jwt}`, ztSession: undefined, body: {}, client: { ipAddress } });
      return { token: String(view.token), clearCookie: clearCookie! };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const reason = refusalReason(e) ?? e.message;
      throw fail(refusalCode(reason), `ext-jwt login refused: ${reason}`);
    }
  }
}

/** What the login page says for a refusal of the ext-jwt login (core/auth: extJwt.ts, authenticate.ts). */
function refusalCode(reason: string): SsoFailure {
  if (reason === 'the JWT names no identity') return 'sso-unknown-identity';
  if (reason === WRONG_AUDIENCE) return 'sso-audience';
  if (reason.startsWith('the auth policy does not allow')) return 'sso-policy';
  if (reason.startsWith('the identity is disabled') || reason.startsWith('the identity was disabled')) return 'sso-disabled';
  return 'sso-refused';
}

/** The issuer's configuration, as a public client (no secret; PKCE protects the code). Plain http only on loopback. */
async function discover(signer: LoginSigner): Promise<client.Configuration> {
  const issuer = new URL(signer.issuer);
  const execute = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname) ? [client.allowInsecureRequests] : [];
  const config = await client.discovery(issuer, signer.clientId, undefined, client.None(), { execute, timeout: IDP_TIMEOUT_S });
  config.timeout = IDP_TIMEOUT_S;
  return config;
}

/** Error text from openid-client without response bodies or tokens. */
function describe(err: unknown): string {
  if (err instanceof client.ResponseBodyError) return `${err.error}${err.status ? ` (HTTP ${err.status})` : ''}`;
  if (err instanceof client.AuthorizationResponseError) return `authorization error ${err.error}`;
  if (err instanceof Error)
    return err.cause instanceof Error && err.cause.message !== err.message ? `${err.message} (${err.cause.message})` : err.message;
  return String(err);
}
