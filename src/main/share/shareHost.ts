import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { Agent } from 'undici';
import { relayRequestHeaders } from '../frontend/forwardHeaders';
import { sendPage } from '../frontend/pages';
import { proxyHttp } from '../frontend/proxyHttp';
import { proxyUpgrade, writeSocketResponse } from '../frontend/proxyWebSocket';
import { requestPathOf } from '../frontend/publicServer';
import { serveWebRoot } from '../frontend/webRoot';
import { EdgeClient, EdgeRefusedError, HelloRefusedError, type EdgeConn, type EdgeListener } from '../sdk';
import type { ShareGrant } from './grant';

/** What a hosting `weft share` serves: the same two backends the frontend serves local shares with. */
export interface ShareBackend {
  backendMode: 'proxy' | 'web';
  /** http(s) URL (proxy) or absolute directory (web) */
  target: string;
}

/**
 * An HTTP server that is never listened on: each overlay conn is handed to it as a connection. Requests arrive as
 * the frontend forwards them (OAuth done, X-Forwarded-* and svc-auth-* set) and are served exactly as the frontend
 * serves a local share: proxied to the target URL (WebSocket upgrades included), or files from the directory.
 */
export function createBackendServer(backend: ShareBackend): { accept(conn: Duplex): void; close(): Promise<void> } {
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connect: { timeout: 10_000 } });
  const target = backend.backendMode === 'proxy' ? new URL(backend.target) : undefined;
  const sockets = new Set<Duplex>();
  const track = (s: Duplex) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const server = http.createServer({ requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 5_000 }, (req, res) => {
    const path = requestPathOf(req.url);
    const served = target
      ? proxyHttp(req, res, { dispatcher, target, path, headers: relayRequestHeaders(req), setCookies: [] })
      : serveWebRoot(req, res, backend.target, path);
    served.catch(() => {
      if (!res.headersSent) sendPage(res, 502, 'Bad gateway', ['The shared service failed to answer.']);
      else res.destroy();
    });
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (!target) return writeSocketResponse(socket, 400, { 'Content-Type': 'text/plain; charset=utf-8' }, 'This share does not accept upgrades.\n');
    void proxyUpgrade(req, socket, head, {
      target,
      path: requestPathOf(req.url),
      headers: relayRequestHeaders(req, { upgrade: true }),
      setCookies: [],
      onUpstreamSocket: track,
    });
  });
  server.on('clientError', (_err, socket: Duplex) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  return {
    accept(conn) {
      track(conn);
      conn.on('error', () => undefined); // a conn that fails is closed; the server sees 'close'
      server.emit('connection', conn);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await dispatcher.destroy().catch(() => undefined);
    },
  };
}

/** Errors after which a grant can never work again: its API session or Bind session is gone (the share was removed). */
export function isGrantExpired(err: Error): boolean {
  if (err instanceof HelloRefusedError) return /API session/i.test(err.reason);
  if (err instanceof EdgeRefusedError) return /session no longer exists|invalid session token|another API session/i.test(err.reason);
  return false;
}

/**
 * Hosts an overlay share with nothing but its grant: binds the share's service on the router the grant names and
 * serves each incoming conn with the backend. Events: 'bound' (the terminator is up; again after every re-bind),
 * 'unavailable' (Error; it keeps retrying), 'expired' (Error; the grant no longer works, hosting has stopped).
 */
export class ShareHost extends EventEmitter {
  private readonly client: EdgeClient;
  private readonly listener: EdgeListener;
  private readonly server: ReturnType<typeof createBackendServer>;
  private stopped = false;

  constructor(
    readonly grant: ShareGrant,
    readonly backend: ShareBackend,
    opts: { retry?: { minDelayMs?: number; maxDelayMs?: number } } = {},
  ) {
    super();
    this.server = createBackendServer(backend);
    this.client = new EdgeClient({
      routerUrl: grant.router,
      ca: grant.ca,
      cert: grant.cert,
      key: grant.key,
      apiSession: () => grant.apiSession,
      retry: opts.retry,
    });
    // the service was created without end-to-end encryption (createOverlayShare)
    this.listener = this.client.listen({ token: grant.bindSession, service: `share-${grant.share}` });
    this.listener.on('connection', (conn: EdgeConn) => this.server.accept(conn));
    this.listener.on('bound', () => this.emit('bound'));
    this.listener.on('unavailable', (err: Error) => {
      if (isGrantExpired(err)) {
        void this.close();
        this.emit('expired', err);
      } else {
        this.emit('unavailable', err);
      }
    });
  }

  get bound(): boolean {
    return this.listener.bound;
  }

  /** Unbinds and closes every conn. */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.client.close();
    await this.server.close();
  }
}
