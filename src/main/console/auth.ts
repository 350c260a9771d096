import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { authenticatePassword, apiSessionsOf } from '../core/auth/index';
import type { Clock } from '../core/clock';
import type { Core } from '../core/context';
import { CSRF_HEADER, CSRF_HEADER_VALUE } from '../../shared/console';
import type { ConsoleSession } from './trpc';

/**
 * One-time login links: random 256-bit tokens, kept (hashed) in memory by one console, usable once and only
 * until they expire. A restart forgets them all.
 */
export class LoginLinks {
  private readonly pending = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly max = 32,
  ) {}

  issue(): string {
    this.prune();
    // bounded: the oldest outstanding link goes first
    while (this.pending.size >= this.max) this.pending.delete(this.pending.keys().next().value!);
    const token = randomBytes(32).toString('base64url');
    this.pending.set(digest(token), this.clock.now().getTime() + this.ttlMs);
    return token;
  }

  /** True once for a token issued here and not yet expired; the token is spent either way. */
  consume(token: unknown): boolean {
    if (typeof token !== 'string' || token.length < 20 || token.length > 100) return false;
    const key = digest(token);
    const expires = this.pending.get(key);
    this.pending.delete(key);
    return expires !== undefined && expires > this.clock.now().getTime();
  }

  get size(): number {
    this.prune();
    return this.pending.size;
  }

  private prune(): void {
    const now = this.clock.now().getTime();
    for (const [k, exp] of this.pending) if (exp <= now) this.pending.delete(k);
  }
}

const digest = (token: string) => createHash('sha256').update(token).digest('base64url');

// ---- cookies --------------------------------------------------------------------------------------

/** Cookies ignore ports: the name carries the console's port so two consoles on one host do not clash. */
export const sessionCookieName = (port: number) => `weft-console-${port}`;

export function sessionCookie(name: string, token: string): string {
  return `${name}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

export function expiredCookie(name: string): string {
  return `${name}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim() || undefined;
  }
  return undefined;
}

// ---- request checks -------------------------------------------------------------------------------

/** The Host values the console answers to (DNS rebinding: any other name is refused). */
export function allowedHosts(host: string, port: number): Set<string> {
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  hosts.add(host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);
  return hosts;
}

/**
 * Why a tRPC request must be refused as a possible cross-site request, or undefined. Browsers add no custom header
 * to cross-origin requests without a CORS preflight (which the console never approves), and they send Origin and
 * Sec-Fetch-Site with fetches; SameSite=Strict keeps the cookie off cross-site requests as well. `marker: false`: a
 * request that cannot carry the header (an EventSource opening a subscription, console/server.ts) is judged by Origin
 * and Sec-Fetch-Site alone.
 */
export function csrfProblem(headers: IncomingHttpHeaders, host: string, opts: { marker: boolean } = { marker: true }): string | undefined {
  const marker = headers[CSRF_HEADER];
  if (opts.marker && (typeof marker !== 'string' || !safeEqual(marker, CSRF_HEADER_VALUE))) return `the ${CSRF_HEADER} header is missing`;
  const origin = headers.origin;
  if (origin !== undefined && origin !== `http://${host}`) return `cross-origin request from ${origin}`;
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return `cross-site request (${site})`;
  return undefined;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

// ---- sessions -------------------------------------------------------------------------------------

/** The API session of a cookie's token, with the REST API's expiry, disabled-identity and MFA rules. */
export async function resolveConsoleSession(core: Core, token: string | undefined): Promise<ConsoleSession | undefined> {
  if (!token || token.length > 200) return undefined;
  const resolved = await apiSessionsOf(core).resolve(token);
  return resolved && { session: resolved.session, caller: resolved.caller, token };
}

/** Username/password login: `POST /authenticate?method=password` of the core. Returns the new session token. */
export async function passwordLogin(core: Core, body: { username: string; password: string }, ipAddress: string): Promise<string> {
  const view = await authenticatePassword(core, body, { ipAddress });
  return view.token as string;
}
