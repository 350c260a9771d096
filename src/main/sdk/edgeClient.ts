import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { EdgeConn } from './edgeConn';
import { RouterLink } from './routerLink';

/** A Dial or Bind session of a service, as `POST /edge/client/v1/sessions` returns it (plus the service's flag). */
export interface ServiceSession {
  /** the session token (the Connect / Bind body) */
  token: string;
  /** the service's encryptionRequired: this SDK has no end-to-end encryption, so it refuses such services */
  encryptionRequired?: boolean;
  /** for messages */
  service?: string;
}

/**
 * A fixed session, or a function that returns one for the API session a router connection presents (called before
 * every dial and every (re)bind, so a caller that can reach the controller may create fresh sessions).
 */
export type SessionSource = ServiceSession | ((apiSessionToken: string) => ServiceSession | Promise<ServiceSession>);

export interface EdgeClientOptions {
  /** the edge router's URL, `tls://host:port` (or `tls:host:port`) */
  routerUrl: string;
  /** PEM bundle of the controller's CAs (the router's certificate chains to them) */
  ca: string;
  /** the identity's client certificate and private key (PEM) */
  cert: string;
  key: string;
  /** the API session token for the hello; called for every new router connection */
  apiSession: () => string | Promise<string>;
  /** TLS connect + hello, dial and bind replies (default 15 s) */
  timeoutMs?: number;
  /** re-binding after a failure waits min, 2×min, … up to max (defaults 250 ms and 15 s) */
  retry?: { minDelayMs?: number; maxDelayMs?: number };
}

/** The service requires end-to-end encryption, which this SDK does not implement. */
export class EncryptionNotSupportedError extends Error {
  constructor(service?: string) {
    super(
      `service ${service ?? ''} requires end-to-end encryption (encryptionRequired), which Weft's SDK does not implement; create it with encryptionRequired false`.replace(
        'service  ',
        'the service ',
      ),
    );
    this.name = 'EncryptionNotSupportedError';
  }
}

async function resolveSession(source: SessionSource, apiSessionToken: string): Promise<ServiceSession> {
  const session = typeof source === 'function' ? await source(apiSessionToken) : source;
  if (session.encryptionRequired) throw new EncryptionNotSupportedError(session.service);
  return session;
}

/**
 * Weft's SDK-side edge client: connects to one edge router with an identity's certificate and an API session, dials
 * services and binds them. Dials and binds share one router connection (opened on demand); `dial(…, {dedicated})`
 * gives a conn its own connection, so a slow reader of that conn never holds up the others. Listeners re-bind by
 * themselves, with backoff, when the router drops their terminator or the connection.
 */
export class EdgeClient {
  private link?: RouterLink;
  private linking?: Promise<RouterLink>;
  private readonly dedicated = new Set<RouterLink>();
  private readonly listeners = new Set<EdgeListener>();
  private closed = false;
  readonly timeoutMs: number;
  readonly retry: { minDelayMs: number; maxDelayMs: number };

  constructor(private readonly opts: EdgeClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.retry = { minDelayMs: opts.retry?.minDelayMs ?? 250, maxDelayMs: opts.retry?.maxDelayMs ?? 15_000 };
  }

  /** Opens a new router connection (TLS + hello). */
  private async openLink(): Promise<RouterLink> {
    const apiSessionToken = await this.opts.apiSession();
    return RouterLink.open({
      url: this.opts.routerUrl,
      ca: this.opts.ca,
      cert: this.opts.cert,
      key: this.opts.key,
      apiSessionToken,
      timeoutMs: this.timeoutMs,
    });
  }

  /** The shared router connection, opened if there is none (one attempt; concurrent callers share it). */
  sharedLink(): Promise<RouterLink> {
    if (this.closed) return Promise.reject(new Error('the edge client is closed'));
    if (this.link && !this.link.closed) return Promise.resolve(this.link);
    this.linking ??= this.openLink()
      .then((link) => {
        if (this.closed) {
          link.close();
          throw new Error('the edge client is closed');
        }
        this.link = link;
        link.once('close', () => {
          if (this.link === link) this.link = undefined;
        });
        return link;
      })
      .finally(() => (this.linking = undefined));
    return this.linking;
  }

  /**
   * Dials a service. `dedicated`: over a router connection of its own, closed with the conn. Rejects with
   * EdgeRefusedError (the router's reason) when the dial is refused, EncryptionNotSupportedError for services that
   * require end-to-end encryption.
   */
  async dial(session: SessionSource, opts: { dedicated?: boolean } = {}): Promise<EdgeConn> {
    if (!opts.dedicated) {
      const link = await this.sharedLink();
      return link.connect((await resolveSession(session, link.apiSessionToken)).token);
    }
    if (this.closed) throw new Error('the edge client is closed');
    const link = await this.openLink();
    if (this.closed) {
      // closed while the link was opening: close() did not see it
      link.close();
      throw new Error('the edge client is closed');
    }
    this.dedicated.add(link);
    link.once('close', () => this.dedicated.delete(link));
    try {
      const conn = await link.connect((await resolveSession(session, link.apiSessionToken)).token);
      conn.once('close', () => link.close());
      return conn;
    } catch (err) {
      link.close();
      throw err;
    }
  }

  /** Binds a service and keeps it bound until the listener is closed; incoming dials are its 'connection' events. */
  listen(session: SessionSource): EdgeListener {
    if (this.closed) throw new Error('the edge client is closed');
    const listener = new EdgeListener(this, session, () => this.listeners.delete(listener));
    this.listeners.add(listener);
    listener.start();
    return listener;
  }

  /** Closes the listeners (Unbind), the shared router connection and dedicated ones (their conns fail). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of [...this.listeners]) l.close();
    this.link?.close();
    for (const link of [...this.dedicated]) link.close();
  }
}

/**
 * A bound service. Events: 'connection' (EdgeConn) for each incoming dial; 'bound' once the router confirms the
 * terminator; 'unavailable' (Error) when binding failed or the terminator was lost (it retries with backoff; the
 * error tells why: HelloRefusedError, EdgeRefusedError, EncryptionNotSupportedError or a network error);
 * 'close' after close().
 */
export class EdgeListener extends EventEmitter {
  /** one id for all binds of this listener: the router replaces a terminator re-bound with it */
  readonly listenerId = randomUUID();
  private current?: { link: RouterLink; bindConnId?: number };
  private retryTimer?: NodeJS.Timeout;
  private failures = 0;
  closed = false;
  /** whether a terminator of ours is established right now */
  bound = false;

  constructor(
    private readonly client: EdgeClient,
    private readonly session: SessionSource,
    private readonly onClose: () => void,
  ) {
    super();
  }

  start(): void {
    void this.bindOnce();
  }

  private async bindOnce(): Promise<void> {
    if (this.closed) return;
    let attempt: { link: RouterLink; bindConnId?: number } | undefined;
    try {
      const link = await this.client.sharedLink();
      const session = await resolveSession(this.session, link.apiSessionToken);
      if (this.closed) return;
      attempt = { link };
      this.current = attempt;
      attempt.bindConnId = await link.bind(session.token, this.listenerId, {
        token: Buffer.from(session.token),
        established: () => {
          if (this.current !== attempt || this.closed) return;
          this.failures = 0;
          this.bound = true;
          this.emit('bound');
        },
        accept: (conn) => {
          if (this.closed) return void conn.destroy();
          this.emit('connection', conn);
        },
        dropped: (reason) => {
          if (this.current !== attempt) return;
          this.current = undefined;
          this.bound = false;
          if (!this.closed) this.failed(new Error(`the terminator was lost: ${reason}`));
        },
      });
      if (this.closed) attempt.link.unbind(attempt.bindConnId);
    } catch (err) {
      // a bind whose link closed meanwhile was reported as dropped already
      if (attempt && this.current !== attempt) return;
      this.current = undefined;
      if (!this.closed) this.failed(err as Error);
    }
  }

  private failed(err: Error): void {
    this.emit('unavailable', err);
    if (this.closed || this.retryTimer) return;
    const { minDelayMs, maxDelayMs } = this.client.retry;
    const delay = Math.min(maxDelayMs, minDelayMs * 2 ** Math.min(this.failures, 20));
    this.failures++;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.bindOnce();
    }, delay);
  }

  /** Unbinds (conns already accepted stay open) and stops re-binding. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.bound = false;
    clearTimeout(this.retryTimer);
    const current = this.current;
    this.current = undefined;
    if (current?.bindConnId !== undefined && !current.link.closed) current.link.unbind(current.bindConnId);
    this.onClose();
    this.emit('close');
  }
}
