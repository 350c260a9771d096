import { readFile } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContext } from 'node:tls';
import type { HostPort } from './address';

export interface Listener {
  address: HostPort;
  /** Upgraded and backend sockets are not owned by the server; register them so close() ends them. */
  track(socket: Duplex): void;
  close(): Promise<void>;
}

export interface ListenOptions {
  bind: HostPort;
  tls?: { cert_file: string; key_file: string };
  /** TLS: the certificate for a server name (SNI) other than the listener's own; undefined = the listener's */
  sni?: (servername: string) => Promise<SecureContext | undefined>;
  onRequest: (req: IncomingMessage, res: ServerResponse) => void;
  onUpgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

export async function listen(opts: ListenOptions): Promise<Listener> {
  const serverOptions: http.ServerOptions = { requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 5_000 };
  const server = opts.tls
    ? https.createServer({
        ...serverOptions,
        cert: await readFile(opts.tls.cert_file),
        key: await readFile(opts.tls.key_file),
        ...(opts.sni
          ? {
              SNICallback: (servername: string, callback: (err: Error | null, ctx?: SecureContext) => void) => {
                opts.sni!(servername).then(
                  (ctx) => callback(null, ctx),
                  () => callback(null, undefined),
                );
              },
            }
          : {}),
      })
    : http.createServer(serverOptions);
  const extra = new Set<Duplex>();
  server.on('request', opts.onRequest);
  if (opts.onUpgrade) server.on('upgrade', opts.onUpgrade);
  else server.on('upgrade', (_req, socket: Socket) => socket.destroy());
  server.on('clientError', (_err, socket: Duplex) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.bind.port, opts.bind.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    address: { host: addr.address, port: addr.port },
    track(socket) {
      extra.add(socket);
      socket.once('close', () => extra.delete(socket));
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of extra) s.destroy();
      });
      return closing;
    },
  };
}
