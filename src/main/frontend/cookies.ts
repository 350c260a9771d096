// Minimal Cookie / Set-Cookie handling. Duplicate names are kept: a browser may send two cookies
// with one name (different Domain/Path), and every value has to be considered.

export interface CookiePair {
  name: string;
  value: string;
}

export function parseCookieHeader(header: string | string[] | undefined): CookiePair[] {
  if (!header) return [];
  const text = Array.isArray(header) ? header.join('; ') : header;
  const pairs: CookiePair[] = [];
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name) pairs.push({ name, value });
  }
  return pairs;
}

/** Rebuilds a Cookie header without the pairs `drop` selects; undefined when nothing is left. */
export function filterCookieHeader(header: string | string[] | undefined, drop: (name: string) => boolean): string | undefined {
  const kept = parseCookieHeader(header).filter((c) => !drop(c.name));
  return kept.length ? kept.map((c) => `${c.name}=${c.value}`).join('; ') : undefined;
}

export interface SetCookieOptions {
  /** undefined: a host-only cookie */
  domain: string | undefined;
  maxAgeSeconds: number;
  secure: boolean;
  path?: string;
}

export function serializeSetCookie(name: string, value: string, o: SetCookieOptions): string {
  const maxAge = Math.max(0, Math.floor(o.maxAgeSeconds));
  const parts = [`${name}=${value}`, ...(o.domain ? [`Domain=${o.domain}`] : []), `Path=${o.path ?? '/'}`, `Max-Age=${maxAge}`];
  if (maxAge === 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  parts.push('HttpOnly', 'SameSite=Lax');
  if (o.secure) parts.push('Secure');
  return parts.join('; ');
}

export function clearCookie(name: string, o: Omit<SetCookieOptions, 'maxAgeSeconds'>): string {
  return serializeSetCookie(name, '', { ...o, maxAgeSeconds: 0 });
}
