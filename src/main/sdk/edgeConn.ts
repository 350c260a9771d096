import { Duplex } from 'node:stream';

/** What an EdgeConn needs from the router connection that carries it. */
export interface EdgeConnLink {
  /** Sends one Data message for the conn (FIN = half close); false = back off until drain(). */
  sendData(connId: number, body: Buffer, fin: boolean): boolean;
  drain(): Promise<void>;
  /** Tells the router the conn is gone (StateClosed). */
  sendClosed(connId: number): void;
  /** Drops the conn from the link's table. */
  forget(conn: EdgeConn): void;
  /** The conn's read buffer is full (stop reading the router connection) or has room again. */
  setBlocked(conn: EdgeConn, blocked: boolean): void;
}

export interface EdgeConnInfo {
  /** `dial`: we dialed a service; `accept`: a dial of a service we bind */
  kind: 'dial' | 'accept';
  circuitId?: string;
  /** the dialing identity's name (accepted conns) */
  callerId?: string;
  /** the dialer's app data (accepted conns), raw */
  appData?: Buffer;
}

/** Bodies larger than this are sent as several Data messages (any split is fine on an unencrypted conn). */
const MAX_DATA_BODY = 64 * 1024;

/**
 * One edge connection (a circuit end) as a Node Duplex: writes become Data messages, end() a FIN Data (half close),
 * received Data is read (a FIN ends the readable side), the peer's StateClosed ends both sides, destroy() sends
 * StateClosed. A full read buffer pauses the whole router connection until the reader catches up (the edge protocol
 * has no per-conn flow control on this path). It also offers the few net.Socket methods http and undici call.
 */
export class EdgeConn extends Duplex {
  /** the peer (or the router) closed the conn: nothing more may be sent */
  private remoteClosed = false;
  private idleMs = 0;
  private idleTimer?: NodeJS.Timeout;

  constructor(
    readonly id: number,
    private readonly link: EdgeConnLink,
    readonly info: EdgeConnInfo,
  ) {
    super({ allowHalfOpen: true, readableHighWaterMark: 256 * 1024 });
  }

  // ---- from the router connection ---------------------------------------------------------------------------

  /** A Data message's body (and FIN flag). */
  receive(body: Buffer, fin: boolean): void {
    if (this.destroyed || this.readableEnded || this.remoteClosed) return;
    this.idleTimer?.refresh();
    if (body.length && !this.push(body)) this.link.setBlocked(this, true);
    if (fin) this.push(null);
  }

  /** StateClosed from the peer: what was received can still be read, then EOF; writing is over. */
  closedByPeer(): void {
    if (this.destroyed || this.remoteClosed) return;
    this.remoteClosed = true;
    this.link.forget(this);
    this.push(null);
    this.end();
  }

  /** The router connection is gone: the conn fails. */
  linkLost(reason: string): void {
    if (this.destroyed) return;
    this.remoteClosed = true;
    this.destroy(Object.assign(new Error(reason), { code: 'ECONNRESET' }));
  }

  // ---- Duplex ---------------------------------------------------------------------------------------------

  override _read(): void {
    this.link.setBlocked(this, false);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.remoteClosed) return done(); // the peer is gone; nothing can reach it
    this.idleTimer?.refresh();
    let ok = true;
    for (let off = 0; off < chunk.length; off += MAX_DATA_BODY) {
      ok = this.link.sendData(this.id, chunk.subarray(off, off + MAX_DATA_BODY), false) && ok;
    }
    if (ok) done();
    else void this.link.drain().then(() => done());
  }

  override _final(done: (err?: Error | null) => void): void {
    if (this.remoteClosed) return done();
    if (this.link.sendData(this.id, Buffer.alloc(0), true)) done();
    else void this.link.drain().then(() => done());
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    clearTimeout(this.idleTimer);
    this.link.setBlocked(this, false);
    if (!this.remoteClosed) {
      this.remoteClosed = true;
      this.link.sendClosed(this.id);
    }
    this.link.forget(this);
    done(err);
  }

  // ---- the net.Socket surface http.Server, http.request and undici use ----------------------------------------

  /** Emits 'timeout' after `ms` without data in either direction (0 = never), as net.Socket does. */
  setTimeout(ms: number, callback?: () => void): this {
    this.idleMs = ms;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (callback) {
      if (ms > 0) this.once('timeout', callback);
      else this.removeListener('timeout', callback);
    }
    if (ms > 0 && !this.destroyed) {
      this.idleTimer = setTimeout(() => this.emit('timeout'), ms);
      this.idleTimer.unref();
    }
    return this;
  }

  get timeout(): number {
    return this.idleMs;
  }

  setNoDelay(_noDelay?: boolean): this {
    return this;
  }

  setKeepAlive(_enable?: boolean, _delay?: number): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }
}
