// A TLS connection made within a time limit: Weft's SDK client dialing a router, the built-in router dialing a
// stock router's link listener.
import { isIP } from 'node:net';
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';

/** Connects (SNI for a DNS name, no Nagle delay); rejects when not connected to `what` within `timeoutMs`. */
export function dialTls(opts: ConnectionOptions & { host: string; port: number }, timeoutMs: number, what: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ ...(isIP(opts.host) ? {} : { servername: opts.host }), ...opts });
    const timer = setTimeout(() => fail(new Error(`no TLS connection to ${what} within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.once('error', fail);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.off('error', fail);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

/** Splits `tls:host:port` (or `tls://host:port`); IPv6 literals in brackets. */
export function parseRouterUrl(url: string): { host: string; port: number } {
  const m = /^tls:(?:\/\/)?(\[[^\]]+\]|[^:/]+):(\d{1,5})\/?$/.exec(url.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) throw new Error(`not a router URL (tls:host:port): ${url}`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}
