import { createServer as createNetServer, isIP, type Server } from 'node:net';
import { createServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';

/**
 * Listens on host:port and resolves with the bound port. With `defaultAddress`, the address was not chosen by the
 * user: when it is taken, any free port is used instead (`onFallback` says so).
 */
export async function listenOn(server: Server, host: string, port: number, fallback?: { onFallback(): void }): Promise<number> {
  const once = (p: number) =>
    new Promise<number>((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      server.once('error', onError);
      server.listen(p, host, () => {
        server.removeListener('error', onError);
        resolve((server.address() as { port: number }).port);
      });
    });
  try {
    return await once(port);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || !fallback) throw e;
    fallback.onFallback();
    return once(0);
  }
}

/**
 * A TLS server for OpenZiti channels (the edge router's SDK side, the control channel): it asks for a client
 * certificate but accepts any, since whose it is gets checked against the store after the hello; hands each
 * connection to `onSocket` (Nagle off) while `accepting()`, drops it otherwise; failed handshakes (scanners, wrong
 * protocols) are the client's problem, logged at debug under `label`.
 */
export function channelTlsServer(opts: {
  tls: { keyPem: string; certChainPem: string };
  alpn?: string[];
  label: string;
  log: Logger;
  accepting: () => boolean;
  onSocket: (socket: TLSSocket) => void;
}): TlsServer {
  const server = createServer({
    key: opts.tls.keyPem,
    cert: opts.tls.certChainPem,
    requestCert: true,
    rejectUnauthorized: false,
    ...(opts.alpn ? { ALPNProtocols: opts.alpn } : {}),
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    if (!opts.accepting()) return void socket.destroy();
    socket.setNoDelay(true);
    opts.onSocket(socket);
  });
  server.on('tlsClientError', (err, socket) => {
    opts.log.debug({ err: err.message }, `${opts.label}: TLS handshake failed`);
    socket.destroy();
  });
  return server;
}

/**
 * Presents a renewed certificate on a running TLS listener: new handshakes get it, connections already open keep
 * theirs (no restart, nothing dropped).
 */
export function replaceCertificate(server: TlsServer, tls: { keyPem: string; certChainPem: string }): void {
  server.setSecureContext({ key: tls.keyPem, cert: tls.certChainPem });
}

/**
 * Another address for a TLS server: a TCP listener at host:port whose connections the server takes as its own (the
 * TLS handshake and everything after are the server's). Closing it stops new connections there; open ones stay.
 */
export async function forwardingListener(target: TlsServer, host: string, port: number): Promise<Server> {
  const extra = createNetServer((socket) => target.emit('connection', socket));
  await listenOn(extra, host, port);
  return extra;
}

/** tls:host:port (IPv6 in brackets), the form OpenZiti writes control channel and link addresses in. */
export const tlsAddress = (host: string, port: number): string => `tls:${isIP(host) === 6 ? `[${host}]` : host}:${port}`;

/** Splits tls:host:port (IPv6 in brackets). */
export function splitTlsAddress(address: string): { host: string; port: number } {
  const rest = address.slice('tls:'.length);
  const i = rest.lastIndexOf(':');
  return { host: rest.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(rest.slice(i + 1)) };
}
