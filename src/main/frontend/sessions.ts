import type { JWTPayload } from 'jose';
import { parseCookieHeader, serializeSetCookie, clearCookie } from './cookies';
import type { FrontendKeys } from './keys';
import type { StoredTokens } from './providers';
import { seal, unseal } from './sealed';

const SESSION_TYP = 'weft-session+jwt';
// Bounds the decryption work a single request can cause.
const MAX_CANDIDATES = 8;
const MAX_LOGOUT_COOKIES = 64;
const MAX_COOKIE_BYTES = 4000;
// A browser sends the same session cookie on every request, and opening it (AES-GCM, then HMAC, through
// WebCrypto) costs more than proxying a small response. Authentic values are remembered with their claims;
// expiry is still checked on every use. Bounded: the oldest entry goes first.
const VERIFIED_CACHE_SIZE = 4096;

/** Claims of a session cookie. One cookie per share; names are `<cookie_name>_<share token>`. */
export interface SessionClaims extends JWTPayload {
  prv: string; // provider name
  shr: string; // share token
  eml: string; // verified email
  exp: number; // session expiry (s)
  chk: number; // last verification (ms)
  sub?: string;
  at?: string;
  rt?: string;
  rfp?: string; // fingerprint of the org/team/claim/domain and path rules checked (accessRules.ts rulesFingerprint)
  prs?: string[]; // verdict per path rule of the share: '' = let in, else the refusal
}

export interface Session {
  cookieName: string;
  provider: string;
  share: string;
  email: string;
  expiresAtMs: number;
  checkedAtMs: number;
  tokens: StoredTokens;
  /** the rules fingerprint the verdicts were reached under ('' or absent: email patterns only) */
  rulesFingerprint?: string;
  /** verdict per path rule: '' = let in, else the refusal */
  pathVerdicts?: string[];
}

/** Cookie placement: Domain=cookie_domain (shares under the share domain), or host-only (a share's custom domain). */
export interface CookiePlacement {
  hostOnly?: boolean;
}

export interface SessionCookieSettings {
  cookieName: string;
  cookieDomain: string;
  secure: boolean;
}

type Opened = { session: Session; expired: boolean };
const NOT_REMEMBERED = Symbol('not remembered');

export class SessionCodec {
  private readonly verified = new Map<string, SessionClaims>();

  constructor(
    private readonly keys: FrontendKeys,
    private readonly settings: SessionCookieSettings,
  ) {}

  cookieNameFor(shareToken: string): string {
    return `${this.settings.cookieName}_${shareToken}`;
  }

  /** Cookies the frontend owns (sessions and login bindings); never forwarded to backends. */
  isOwnCookie(name: string): boolean {
    const base = this.settings.cookieName;
    return name === base || name.startsWith(`${base}_`) || name.startsWith(`${base}.`);
  }

  async issue(session: Omit<Session, 'cookieName'>, nowMs: number, placement: CookiePlacement = {}): Promise<string> {
    const claims: SessionClaims = {
      prv: session.provider,
      shr: session.share,
      eml: session.email,
      exp: Math.ceil(session.expiresAtMs / 1000),
      chk: session.checkedAtMs,
    };
    if (session.tokens.subject) claims.sub = session.tokens.subject;
    if (session.tokens.accessToken) claims.at = session.tokens.accessToken;
    if (session.tokens.refreshToken) claims.rt = session.tokens.refreshToken;
    if (session.rulesFingerprint) claims.rfp = session.rulesFingerprint;
    if (session.pathVerdicts?.length) claims.prs = session.pathVerdicts;
    let header = await this.serialize(claims, nowMs, placement);
    // Browsers silently drop cookies over ~4 KB, which would loop the user through logins. Huge
    // provider tokens are dropped instead: the session then re-authenticates at its check
    // interval and logout cannot revoke, which beats not working at all.
    for (const drop of ['at', 'rt'] as const) {
      if (header.length <= MAX_COOKIE_BYTES) break;
      delete claims[drop];
      header = await this.serialize(claims, nowMs, placement);
    }
    return header;
  }

  /** The sealed value of a session (what a login ticket carries to a custom domain). */
  async sealValue(session: Omit<Session, 'cookieName'>, nowMs: number): Promise<string> {
    const header = await this.issue(session, nowMs);
    return header.slice(header.indexOf('=') + 1, header.indexOf(';'));
  }

  /** A Set-Cookie header for a sealed value made by sealValue (opened again first: only authentic values are set). */
  async issueSealed(value: string, shareToken: string, nowMs: number, placement: CookiePlacement = {}): Promise<string | undefined> {
    const opened = await this.open(this.cookieNameFor(shareToken), value, nowMs);
    if (!opened || opened.expired) return undefined;
    return serializeSetCookie(opened.session.cookieName, value, {
      domain: placement.hostOnly ? undefined : this.settings.cookieDomain,
      secure: this.settings.secure,
      maxAgeSeconds: (opened.session.expiresAtMs - nowMs) / 1000,
    });
  }

  private async serialize(claims: SessionClaims, nowMs: number, placement: CookiePlacement): Promise<string> {
    const value = await seal(claims, { signing: this.keys.sessionSigning, encryption: this.keys.sessionEncryption }, SESSION_TYP, nowMs, claims.exp);
    return serializeSetCookie(this.cookieNameFor(claims.shr), value, {
      domain: placement.hostOnly ? undefined : this.settings.cookieDomain,
      secure: this.settings.secure,
      maxAgeSeconds: (claims.exp * 1000 - nowMs) / 1000,
    });
  }

  clear(cookieName: string, placement: CookiePlacement = {}): string {
    return clearCookie(cookieName, { domain: placement.hostOnly ? undefined : this.settings.cookieDomain, secure: this.settings.secure });
  }

  /**
   * The valid session for a share with one of its providers, if any. Tampered, expired, foreign-share and
   * foreign-provider cookies are ignored; with several candidates the most recently checked wins.
   */
  async find(
    cookieHeader: string | string[] | undefined,
    shareToken: string,
    providers: string | readonly string[],
    nowMs: number,
  ): Promise<Session | undefined> {
    const accepted = typeof providers === 'string' ? [providers] : providers;
    const name = this.cookieNameFor(shareToken);
    let best: Session | undefined;
    const candidates = parseCookieHeader(cookieHeader)
      .filter((c) => c.name === name)
      .slice(0, MAX_CANDIDATES);
    for (const c of candidates) {
      const remembered = this.openRemembered(c.name, c.value, nowMs);
      const opened = remembered !== NOT_REMEMBERED ? remembered : await this.open(c.name, c.value, nowMs);
      if (!opened || opened.expired) continue;
      const s = opened.session;
      if (s.share !== shareToken || !accepted.includes(s.provider)) continue;
      if (!best || s.checkedAtMs > best.checkedAtMs) best = s;
    }
    return best;
  }

  /** Every authentic session cookie in the header (expired ones included), for logout. */
  async all(cookieHeader: string | string[] | undefined, nowMs: number): Promise<Session[]> {
    const out: Session[] = [];
    for (const c of parseCookieHeader(cookieHeader)) {
      if (!c.name.startsWith(`${this.settings.cookieName}_`) || out.length >= MAX_LOGOUT_COOKIES) continue;
      const opened = await this.open(c.name, c.value, nowMs);
      if (opened) out.push(opened.session);
    }
    return out;
  }

  /** A remembered (already verified) cookie value opened without crypto, or NOT_REMEMBERED. */
  private openRemembered(cookieName: string, value: string, nowMs: number): Opened | undefined | typeof NOT_REMEMBERED {
    const claims = this.verified.get(value);
    if (!claims) return NOT_REMEMBERED;
    const expired = claims.exp <= Math.floor(nowMs / 1000); // jose's rule for "exp"
    if (expired) this.verified.delete(value);
    return this.opened(cookieName, claims, expired);
  }

  private async open(cookieName: string, value: string, nowMs: number): Promise<Opened | undefined> {
    const remembered = this.openRemembered(cookieName, value, nowMs);
    if (remembered !== NOT_REMEMBERED) return remembered;
    const result = await unseal<SessionClaims>(
      value,
      { signing: this.keys.sessionSigning, encryption: this.keys.sessionEncryption },
      SESSION_TYP,
      nowMs,
    );
    const claims = result.claims;
    if (!claims || !isSessionClaims(claims)) return undefined;
    if (result.ok) this.remember(value, claims);
    return this.opened(cookieName, claims, !result.ok);
  }

  private opened(cookieName: string, claims: SessionClaims, expired: boolean): Opened | undefined {
    // The cookie name must agree with the share inside it, so a cookie cannot be replayed under another share's name.
    if (cookieName !== this.cookieNameFor(claims.shr)) return undefined;
    return {
      expired,
      session: {
        cookieName,
        provider: claims.prv,
        share: claims.shr,
        email: claims.eml,
        expiresAtMs: claims.exp * 1000,
        checkedAtMs: claims.chk,
        tokens: { accessToken: claims.at, refreshToken: claims.rt, subject: claims.sub },
        rulesFingerprint: claims.rfp,
        pathVerdicts: claims.prs,
      },
    };
  }

  private remember(value: string, claims: SessionClaims): void {
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(value, claims);
  }
}

function isSessionClaims(c: JWTPayload): c is SessionClaims {
  return (
    typeof c.prv === 'string' &&
    typeof c.shr === 'string' &&
    typeof c.eml === 'string' &&
    typeof c.exp === 'number' &&
    typeof c.chk === 'number' &&
    (c.at === undefined || typeof c.at === 'string') &&
    (c.rt === undefined || typeof c.rt === 'string') &&
    (c.sub === undefined || typeof c.sub === 'string') &&
    (c.rfp === undefined || typeof c.rfp === 'string') &&
    (c.prs === undefined || (Array.isArray(c.prs) && c.prs.every((v) => typeof v === 'string')))
  );
}
