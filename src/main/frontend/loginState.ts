import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { clearCookie, parseCookieHeader, serializeSetCookie } from './cookies';
import type { FrontendKeys } from './keys';
import { seal, unseal } from './sealed';
import type { UsedOnce } from './types';

const STATE_TYP = 'weft-state+jwt';

/**
 * The OAuth `state`: sealed (signed + encrypted), short-lived, single-use, and bound to a random
 * value kept in an HttpOnly cookie of the browser that started the login (login CSRF/fixation).
 */
export interface StateClaims extends JWTPayload {
  jti: string;
  prv: string; // provider name
  shr: string; // share token
  url: string; // original URL: scheme, host, path and query
  bid: string; // binding cookie id (cookie name suffix)
  bnd: string; // SHA-256 of the binding cookie value
  non: string; // OIDC nonce
  pkv: string; // PKCE code verifier
  hbd?: string; // a custom domain's login: SHA-256 of the binding cookie value on that host (tickets.ts)
}

export interface NewLogin {
  state: string;
  claims: StateClaims;
  bindingCookie: string;
}

export type StateCheck =
  | { ok: true; claims: StateClaims; bindingCookieName: string }
  | { ok: false; reason: 'invalid' | 'expired' | 'unbound' | 'replayed' | 'wrong_provider'; claims?: StateClaims; bindingCookieName?: string };

export interface LoginStateSettings {
  cookieName: string;
  cookieDomain: string;
  secure: boolean;
  lifetimeMs: number;
  /** where consumed states are remembered (default: this process) */
  usedOnce?: UsedOnce;
}

/** Single-use values remembered in this process until they would have expired anyway. */
export function usedOnceInMemory(): UsedOnce {
  const used = new Map<string, number>();
  return (key, expiresAtMs, nowMs) => {
    for (const [k, exp] of used) if (exp < nowMs) used.delete(k);
    if (used.has(key)) return false;
    used.set(key, expiresAtMs);
    return true;
  };
}

const random = (bytes: number) => randomBytes(bytes).toString('base64url');
const digest = (value: string) => createHash('sha256').update(value).digest();

export class LoginStates {
  private readonly usedOnce: UsedOnce;

  constructor(
    private readonly keys: FrontendKeys,
    private readonly settings: LoginStateSettings,
  ) {
    this.usedOnce = settings.usedOnce ?? usedOnceInMemory();
  }

  bindingCookieName(bindingId: string): string {
    return `${this.settings.cookieName}.flow.${bindingId}`;
  }

  async create(input: { provider: string; share: string; originalUrl: string; hostBinding?: string }, nowMs: number): Promise<NewLogin> {
    const bindingValue = random(32);
    const claims: StateClaims = {
      jti: random(16),
      prv: input.provider,
      shr: input.share,
      url: input.originalUrl,
      bid: random(12),
      bnd: digest(bindingValue).toString('base64url'),
      non: random(24),
      pkv: random(48),
    };
    if (input.hostBinding) claims.hbd = input.hostBinding;
    const expiresAtSec = Math.ceil((nowMs + this.settings.lifetimeMs) / 1000);
    const state = await seal(claims, { signing: this.keys.stateSigning, encryption: this.keys.stateEncryption }, STATE_TYP, nowMs, expiresAtSec);
    const bindingCookie = serializeSetCookie(this.bindingCookieName(claims.bid), bindingValue, {
      domain: this.settings.cookieDomain,
      secure: this.settings.secure,
      maxAgeSeconds: Math.max(1, Math.ceil(this.settings.lifetimeMs / 1000)),
    });
    return { state, claims, bindingCookie };
  }

  /** Verifies a returned state for `provider`, its binding cookie, and consumes it. */
  async consume(state: string, provider: string, cookieHeader: string | string[] | undefined, nowMs: number): Promise<StateCheck> {
    const opened = await unseal<StateClaims>(state, { signing: this.keys.stateSigning, encryption: this.keys.stateEncryption }, STATE_TYP, nowMs);
    const claims = opened.claims && isStateClaims(opened.claims) ? opened.claims : undefined;
    if (!claims) return { ok: false, reason: 'invalid' };
    const bindingCookieName = this.bindingCookieName(claims.bid);
    if (!opened.ok) return { ok: false, reason: opened.expired ? 'expired' : 'invalid', claims, bindingCookieName };
    if (claims.prv !== provider) return { ok: false, reason: 'wrong_provider', claims, bindingCookieName };
    const expected = Buffer.from(claims.bnd, 'base64url');
    const bound = parseCookieHeader(cookieHeader).some((c) => c.name === bindingCookieName && safeEqual(digest(c.value), expected));
    if (!bound) return { ok: false, reason: 'unbound', claims, bindingCookieName };
    if (!(await this.usedOnce(`oauth-state:${claims.jti}`, (claims.exp ?? 0) * 1000, nowMs)))
      return { ok: false, reason: 'replayed', claims, bindingCookieName };
    return { ok: true, claims, bindingCookieName };
  }

  clearBinding(bindingCookieName: string): string {
    return clearCookie(bindingCookieName, { domain: this.settings.cookieDomain, secure: this.settings.secure });
  }
}

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function isStateClaims(c: JWTPayload): c is StateClaims {
  return (
    ['jti', 'prv', 'shr', 'url', 'bid', 'bnd', 'non', 'pkv'].every((k) => typeof c[k] === 'string' && (c[k] as string).length > 0) &&
    (c.hbd === undefined || typeof c.hbd === 'string')
  );
}
