import type { IncomingMessage } from 'node:http';
import { filterCookieHeader } from './cookies';
import type { AuthIdentity } from './types';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

// Client-sent values of these cannot be trusted; the frontend sets its own.
const REPLACED = new Set([
  'host',
  'cookie',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-real-ip',
  'expect',
]);

export const AUTH_HEADER_PREFIX = 'svc-auth-';

function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined; // the common case: nothing extra to drop
  const text = Array.isArray(value) ? value.join(',') : value;
  return new Set(
    text
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
}

export interface ForwardContext {
  publicScheme: 'http' | 'https';
  isOwnCookie: (name: string) => boolean;
  identity?: AuthIdentity;
}

/**
 * Request headers for the backend, as a flat [name, value, ...] list (keeps repeated headers).
 * Hop-by-hop headers, the frontend's own cookies and every client-sent svc-auth-* header (in any case, with
 * "_" or "-") are removed, as are the headers the frontend sets itself; X-Forwarded-* and, after OAuth, svc-auth-provider/email/expires are added.
 */
export function forwardRequestHeaders(req: IncomingMessage, ctx: ForwardContext, keep: { upgrade?: boolean } = {}): string[] {
  const listed = connectionTokens(req.headers.connection);
  const out: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (HOP_BY_HOP.has(name) || listed?.has(name)) continue;
    // CGI/WSGI, PHP and others read "_" and "-" alike: svc_auth_email would pass for svc-auth-email there.
    const canonical = name.replaceAll('_', '-');
    if (REPLACED.has(canonical) || canonical.startsWith(AUTH_HEADER_PREFIX)) continue;
    out.push(raw[i], raw[i + 1]);
  }
  if (keep.upgrade && req.headers.upgrade) out.push('Connection', 'Upgrade', 'Upgrade', String(req.headers.upgrade));
  const cookie = filterCookieHeader(req.headers.cookie, ctx.isOwnCookie);
  if (cookie) out.push('Cookie', cookie);
  const remote = req.socket.remoteAddress;
  if (remote) out.push('X-Forwarded-For', remote.replace(/^::ffff:/, ''));
  out.push('X-Forwarded-Proto', ctx.publicScheme);
  if (req.headers.host) out.push('X-Forwarded-Host', req.headers.host);
  if (ctx.identity) {
    out.push(
      'svc-auth-provider',
      ctx.identity.provider,
      'svc-auth-email',
      headerSafe(ctx.identity.email),
      'svc-auth-expires',
      new Date(ctx.identity.expiresAtMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    );
  }
  return out;
}

/**
 * Request headers as they arrived, minus hop-by-hop ones and Host: what the host of an overlay share sends its
 * backend. The frontend already removed the client's svc-auth-* headers and its own cookies and set X-Forwarded-*
 * and, after OAuth, svc-auth-*; only the frontend may dial the share's service, so they are kept as they are.
 */
export function relayRequestHeaders(req: IncomingMessage, keep: { upgrade?: boolean } = {}): string[] {
  const listed = connectionTokens(req.headers.connection);
  const out: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (HOP_BY_HOP.has(name) || listed?.has(name) || name === 'host') continue;
    out.push(raw[i], raw[i + 1]);
  }
  if (keep.upgrade && req.headers.upgrade) out.push('Connection', 'Upgrade', 'Upgrade', String(req.headers.upgrade));
  return out;
}

/** Response headers from the backend minus hop-by-hop ones, as a header object for writeHead. */
export function forwardResponseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const listed = connectionTokens(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || listed?.has(lower)) continue;
    out[lower] = value;
  }
  return out;
}

/** Header values must be visible ASCII; anything else (internationalized addresses) is percent-encoded. */
function headerSafe(value: string): string {
  return value.replace(/[^\x21-\x7e]/gu, (ch) => encodeURIComponent(ch));
}
