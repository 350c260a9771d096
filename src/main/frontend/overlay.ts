import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Agent } from 'undici';
import type { OverlayDialer, PublicShare } from './types';

/** Origins of overlay shares are `http://<token>.overlay.invalid`: a name that never resolves, only routes. */
const ORIGIN_SUFFIX = '.overlay.invalid';
const MAX_SHARES = 4096;

/**
 * How the frontend reaches overlay shares: an undici Agent whose connections are edge conns dialed to the share's
 * service (one per HTTP connection, kept alive and reused as undici does), and single dials for WebSocket upgrades.
 * The request itself is the same one the frontend sends a local backend (same headers, same OAuth identity).
 */
export class OverlayProxy {
  readonly dispatcher: Agent;
  /** share token -> service id, learned from the share of each request before undici connects */
  private readonly services = new Map<string, string>();
  private readonly origins = new Map<string, URL>();

  constructor(private readonly dialer: OverlayDialer) {
    this.dispatcher = new Agent({
      keepAliveTimeout: 10_000,
      connect: (opts, callback) => {
        const token = opts.hostname.endsWith(ORIGIN_SUFFIX) ? opts.hostname.slice(0, -ORIGIN_SUFFIX.length) : '';
        const serviceId = this.services.get(token);
        if (!serviceId) return callback(new Error(`no overlay share ${token}`), null);
        this.dialer.dial(serviceId).then(
          (conn) => callback(null, conn as unknown as Socket),
          (err: Error) => callback(err, null),
        );
      },
    });
  }

  /** The origin to dispatch the share's requests to. */
  target(share: PublicShare & { overlay: { serviceId: string } }): URL {
    if (this.services.get(share.token) !== share.overlay.serviceId) {
      if (this.services.size >= MAX_SHARES) this.services.delete(this.services.keys().next().value!);
      this.services.set(share.token, share.overlay.serviceId);
    }
    let url = this.origins.get(share.token);
    if (!url) {
      if (this.origins.size >= MAX_SHARES) this.origins.delete(this.origins.keys().next().value!);
      url = new URL(`http://${share.token}${ORIGIN_SUFFIX}/`);
      this.origins.set(share.token, url);
    }
    return url;
  }

  /** A connection of its own for an upgrade (WebSocket). */
  dial(share: PublicShare & { overlay: { serviceId: string } }): Promise<Duplex> {
    return this.dialer.dial(share.overlay.serviceId);
  }

  close(): Promise<void> {
    return this.dispatcher.destroy().catch(() => undefined);
  }
}
