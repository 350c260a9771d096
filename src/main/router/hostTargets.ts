import { isIP } from 'node:net';
import type { HostV1 } from '../core/dataPlane/index';

/** Where a router-hosted service's connection goes, from its host.v1 config and the dialer's app data. */
export interface HostTarget {
  protocol: string;
  host: string;
  port: number;
}

/** The address to dial for one connection, or the reason there is none (sent back to the dialer). */
export function hostTarget(config: HostV1, appData: Buffer | undefined): HostTarget | string {
  let data: Record<string, unknown> = {};
  if (appData?.length) {
    try {
      data = JSON.parse(appData.toString('utf8')) as Record<string, unknown>;
    } catch {
      return 'the dialer sent app data that is not JSON';
    }
  }
  const protocol = config.forwardProtocol ? String(data.dst_protocol ?? '') : (config.protocol ?? '');
  if (config.forwardProtocol && !config.allowedProtocols?.includes(protocol)) return `protocol ${protocol || '(none)'} is not allowed`;
  if (protocol !== 'tcp') return `${protocol || 'this'} protocol is not supported by Weft's router (tcp only)`;
  const host = config.forwardAddress ? String(data.dst_hostname ?? data.dst_ip ?? '') : (config.address ?? '');
  if (!host) return 'no address to forward to';
  if (config.forwardAddress && !(config.allowedAddresses ?? []).some((a) => addressAllowed(a, host))) return `address ${host} is not allowed`;
  const port = config.forwardPort ? Number(data.dst_port) : Number(config.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return 'no valid port to forward to';
  if (config.forwardPort && !(config.allowedPortRanges ?? []).some((r) => port >= r.low && port <= r.high)) return `port ${port} is not allowed`;
  return { protocol, host, port };
}

/** An allowed address: the same name or IP, a `*.example.com` wildcard, or an IPv4 CIDR. */
function addressAllowed(allowed: string, host: string): boolean {
  const a = allowed.toLowerCase();
  const h = host.toLowerCase();
  if (a === h) return true;
  if (a.startsWith('*.')) return h.endsWith(a.slice(1));
  const cidr = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(a);
  if (cidr && isIP(h) === 4) {
    const bits = Number(cidr[2]);
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    return (ipv4(h) & mask) >>> 0 === (ipv4(cidr[1]!) & mask) >>> 0;
  }
  return false;
}

const ipv4 = (ip: string) => ip.split('.').reduce((n, o) => ((n << 8) | Number(o)) >>> 0, 0);
