import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { clearCookie, parseCookieHeader, serializeSetCookie } from './cookies';
import type { FrontendKeys } from './keys';
import { seal, unseal } from './sealed';
import type { UsedOnce } from './types';

// A share's custom domain (app.example.com) is outside cookie_domain: the OAuth endpoint cannot set a cookie for it,
// nor read one set there. Its logins therefore go like this:
// 1. the custom host sets a host-only binding cookie (random value R) and sends the browser to
//    <endpoint_url>/<provider>/auth/start with bind=SHA-256(R), which the login state carries;
// 2. after the callback, the OAuth endpoint sends the browser to <custom host>/.weft-auth/session with a ticket:
//    sealed, short-lived, single-use, naming the host, the share, the original URL, the binding hash and the sealed
//    session;
// 3. the custom host checks all of it — its own binding cookie too, so a ticket cannot be pushed into another
//    browser (login CSRF) — and sets the session as a host-only cookie.
// Logout states (RP-initiated logout) are sealed the same way: they carry where to go after the provider's logout.

const TICKET_TYP = 'weft-ticket+jwt';
const LOGOUT_TYP = 'weft-logout+jwt';
/** Tickets are followed at once by the browser: they live at most this long. */
const TICKET_LIFETIME_MS = 120_000;

/** The reserved path prefix on custom domains (never on `<token>.<share domain>` hosts). */
export const RESERVED_PREFIX = '/.weft-auth/';

export interface TicketClaims extends JWTPayload {
  jti: string;
  shr: string; // share token
  hst: string; // the custom host (lowercase, no port)
  url: string; // original URL on that host
  hbd: string; // SHA-256 (base64url) of the host binding cookie value
  ses: string; // the sealed session value
}

export interface LogoutClaims extends JWTPayload {
  prv: string;
  url: string; // where to go once the provider has logged out
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

export class Tickets {
  constructor(
    private readonly keys: FrontendKeys,
    private readonly settings: { cookieName: string; secure: boolean; lifetimeMs: number; usedOnce: UsedOnce },
  ) {}

  private get sealKeys() {
    return { signing: this.keys.stateSigning, encryption: this.keys.stateEncryption };
  }

  /** A new host binding: the host-only cookie to set on the custom host and the hash to carry in the login. */
  newHostBinding(): { cookie: string; hash: string } {
    const value = randomBytes(32).toString('base64url');
    const hash = digest(value);
    const cookie = serializeSetCookie(this.hostBindingName(hash), value, {
      domain: undefined,
      secure: this.settings.secure,
      maxAgeSeconds: Math.max(1, Math.ceil(this.settings.lifetimeMs / 1000)),
    });
    return { cookie, hash };
  }

  hostBindingName(hash: string): string {
    return `${this.settings.cookieName}.host.${hash.slice(0, 16)}`;
  }

  clearHostBinding(hash: string): string {
    return clearCookie(this.hostBindingName(hash), { domain: undefined, secure: this.settings.secure });
  }

  async issue(claims: Omit<TicketClaims, 'jti'>, nowMs: number): Promise<string> {
    const full = { ...claims, jti: randomBytes(16).toString('base64url') } as TicketClaims;
    return seal(full, this.sealKeys, TICKET_TYP, nowMs, Math.ceil((nowMs + TICKET_LIFETIME_MS) / 1000));
  }

  /** The ticket's claims when it is authentic, fresh, for this host, bound to this browser and not used before. */
  async redeem(
    ticket: string,
    host: string,
    cookieHeader: string | string[] | undefined,
    nowMs: number,
  ): Promise<{ ok: true; claims: TicketClaims } | { ok: false; reason: 'invalid' | 'expired' | 'unbound' | 'replayed' }> {
    const opened = await unseal<TicketClaims>(ticket, this.sealKeys, TICKET_TYP, nowMs);
    if (!opened.ok) return { ok: false, reason: opened.expired ? 'expired' : 'invalid' };
    const c = opened.claims;
    if (!['jti', 'shr', 'hst', 'url', 'hbd', 'ses'].every((k) => typeof c[k] === 'string') || c.hst !== host) return { ok: false, reason: 'invalid' };
    const expected = Buffer.from(c.hbd, 'base64url');
    const name = this.hostBindingName(c.hbd);
    const bound = parseCookieHeader(cookieHeader).some((k) => {
      const got = Buffer.from(digest(k.value), 'base64url');
      return k.name === name && got.length === expected.length && timingSafeEqual(got, expected);
    });
    if (!bound) return { ok: false, reason: 'unbound' };
    if (!(await this.settings.usedOnce(`oauth-ticket:${c.jti}`, (c.exp ?? 0) * 1000, nowMs))) return { ok: false, reason: 'replayed' };
    return { ok: true, claims: c };
  }

  sealLogout(claims: LogoutClaims, nowMs: number): Promise<string> {
    return seal(claims, this.sealKeys, LOGOUT_TYP, nowMs, Math.ceil((nowMs + this.settings.lifetimeMs) / 1000));
  }

  async openLogout(state: string, nowMs: number): Promise<LogoutClaims | undefined> {
    const opened = await unseal<LogoutClaims>(state, this.sealKeys, LOGOUT_TYP, nowMs);
    return opened.ok && typeof opened.claims.prv === 'string' && typeof opened.claims.url === 'string' ? opened.claims : undefined;
  }
}
