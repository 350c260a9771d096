import { isIP } from 'node:net';

export interface HostPort {
  host: string;
  port: number;
}

/** Parses "ip:port" ("127.0.0.1:8080", "[::1]:0"); throws with a human message. */
export function parseBindAddress(text: string): HostPort {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  if (!m) throw new Error(`must be "ip:port" (for example "127.0.0.1:8080" or "[::1]:8080")`);
  const host = m[1] ?? m[2];
  if (!isIP(host)) throw new Error(`"${host}" is not an IP address (use "ip:port", for example "0.0.0.0:8080")`);
  if (m[1] !== undefined && isIP(host) !== 6) throw new Error(`only IPv6 addresses go in brackets`);
  if (m[2] !== undefined && isIP(host) === 6) throw new Error(`IPv6 addresses must be written in brackets, for example "[::1]:8080"`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`port ${port} is out of range (0-65535)`);
  return { host, port };
}

/** Formats a host for use in a URL authority (brackets for IPv6). */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

export function isDomainName(text: string): boolean {
  if (text.length === 0 || text.length > 253) return false;
  return text.split('.').every((label) => LABEL.test(label));
}

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost') || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** True when `host` equals `domain` or is a subdomain of it (cookie domain-match, RFC 6265 5.1.3). */
export function domainMatches(host: string, domain: string): boolean {
  const h = host.toLowerCase();
  const d = domain.toLowerCase().replace(/^\./, '');
  return h === d || h.endsWith(`.${d}`);
}
