import { randomBytes, X509Certificate } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { TLSSocket } from 'node:tls';
import { Channel, ChannelClosedError } from '../router/channel/channel';
import { dialTls, parseRouterUrl } from '../tlsDial';
import {
  bodyOf,
  bool,
  ChannelType,
  EdgeType,
  findHeader,
  Flag,
  getBool,
  getStr,
  getU32,
  hasFin,
  Header,
  message,
  str,
  u32,
  type Message,
} from '../router/channel/wire';
import { EdgeConn, type EdgeConnLink } from './edgeConn';

/** Frames larger than this from the router are a protocol error (our own writes are split far below it). */
const MAX_FRAME = 64 * 1024 * 1024;
/** SDK-chosen conn ids are 1 … 2^31-2; routers hand out the upper half for incoming dials. */
const MAX_SDK_CONN_ID = 0x7ffffffe;

export interface RouterLinkOptions {
  /** the router's edge listener, `tls://host:port` (as sessions list it; `tls:host:port` is accepted too) */
  url: string;
  /** PEM bundle of the CAs the router's certificate must chain to (the controller's CA bundle) */
  ca: string;
  /** the identity's client certificate and key (PEM) */
  cert: string;
  key: string;
  /** the API session the hello presents */
  apiSessionToken: string;
  /** TLS connect + hello, and each request's reply */
  timeoutMs: number;
}

/** The router answered the hello with a failure (or closed the connection instead of answering). */
export class HelloRefusedError extends Error {
  constructor(readonly reason: string) {
    super(`the router refused the connection: ${reason}`);
    this.name = 'HelloRefusedError';
  }
}

/** A Connect or Bind answered with StateClosed. */
export class EdgeRefusedError extends Error {
  constructor(
    readonly operation: 'dial' | 'bind',
    readonly reason: string,
  ) {
    super(`${operation} refused by the router: ${reason}`);
    this.name = 'EdgeRefusedError';
  }
}

/** What a listener hears about one of its binds on a link. */
export interface BindHandler {
  /** the Bind's body: incoming Dials must carry it byte for byte */
  token: Buffer;
  /** the router confirmed the terminator (BindSuccess, or the StateConnected reply when it does not send BindSuccess) */
  established(): void;
  /** a dial for the bound service */
  accept(conn: EdgeConn): void;
  /** the terminator is gone: the router dropped it, or the link closed */
  dropped(reason: string): void;
}

function connectTls(opts: RouterLinkOptions): Promise<TLSSocket> {
  const { host, port } = parseRouterUrl(opts.url);
  return dialTls({ host, port, ca: opts.ca, cert: opts.cert, key: opts.key }, opts.timeoutMs, opts.url);
}

/**
 * One TLS connection to an edge router, from the SDK's side: the hello (API session token), answers to the router's
 * latency probes and pings, dials (Connect) and binds (Bind / Unbind, incoming Dial → DialSuccess), and the edge
 * conns of both multiplexed by conn id. Only services without end-to-end encryption: a peer that asks for it is
 * refused. Emits 'close' (reason) once the connection is gone.
 */
export class RouterLink extends EventEmitter implements EdgeConnLink {
  readonly channel: Channel;
  /** the router's id (hello result header 8) */
  routerId = '';
  private supportsBindSuccess = false;
  private readonly conns = new Map<number, EdgeConn>();
  private readonly binds = new Map<number, BindHandler>();
  private readonly blocked = new Set<EdgeConn>();
  private nextId = 0;
  closeReason?: string;

  private constructor(
    private readonly socket: TLSSocket,
    readonly apiSessionToken: string,
    private readonly timeoutMs: number,
  ) {
    super();
    this.channel = new Channel(socket, MAX_FRAME, {
      onData: (frame) => this.data(frame),
      onMessage: (msg) => this.message(msg),
      onClose: (reason) => this.onChannelClosed(reason),
    });
  }

  /** Connects and says hello; rejects with HelloRefusedError when the router does not accept the API session. */
  static async open(opts: RouterLinkOptions): Promise<RouterLink> {
    const socket = await connectTls(opts);
    const link = new RouterLink(socket, opts.apiSessionToken, opts.timeoutMs);
    let commonName = '';
    try {
      commonName = /(?:^|\n)CN=([^\n]*)/.exec(new X509Certificate(opts.cert).subject)?.[1] ?? '';
    } catch {
      // informational only
    }
    let reply: Message;
    try {
      reply = await link.channel.hello(message(ChannelType.Hello, [[Header.SessionToken, str(opts.apiSessionToken)]], commonName), opts.timeoutMs);
    } catch (err) {
      link.close();
      // the router closes the connection instead of answering when it refuses (or its answer was cut off)
      throw err instanceof ChannelClosedError ? new HelloRefusedError('the router closed the connection during the hello') : err;
    }
    if (reply.contentType !== ChannelType.Result || !getBool(reply.headers, Header.ResultSuccess)) {
      link.close();
      throw new HelloRefusedError(reply.body.toString('utf8') || 'no reason given');
    }
    link.routerId = getStr(reply.headers, Header.Id) ?? '';
    link.supportsBindSuccess = getBool(reply.headers, Header.SupportsBindSuccess);
    return link;
  }

  get closed(): boolean {
    return this.channel.closed;
  }

  close(): void {
    this.channel.close();
  }

  // ---- dialing ----------------------------------------------------------------------------------------------

  /** Dials the service of a Dial session token; resolves once the router reports the circuit connected. */
  async connect(sessionToken: string): Promise<EdgeConn> {
    const id = this.allocateId();
    const conn = new EdgeConn(id, this, { kind: 'dial' });
    conn.on('error', () => undefined); // until the caller has it: a failed dial rejects instead
    this.conns.set(id, conn);
    let reply: Message;
    try {
      reply = await this.channel.request(
        message(
          EdgeType.Connect,
          [
            [Header.ConnId, u32(id)],
            [Header.ConnectionMarker, str(randomBytes(6).toString('base64url'))],
            [Header.UseXgressToSdk, bool(false)],
          ],
          sessionToken,
        ),
        this.timeoutMs,
      );
    } catch (err) {
      conn.destroy(); // tells the router to forget the id, as SDKs do after a failed Connect
      throw err;
    }
    if (reply.contentType !== EdgeType.StateConnected) {
      this.forget(conn);
      conn.destroy();
      if (reply.contentType === EdgeType.StateClosed) throw new EdgeRefusedError('dial', reply.body.toString('utf8') || 'no reason given');
      throw new Error(`unexpected answer to a dial: message type ${reply.contentType}`);
    }
    if (reply.headers.get(Header.PublicKey)?.length) {
      conn.destroy();
      throw new Error("the service is hosted with end-to-end encryption, which Weft's SDK does not implement");
    }
    conn.info.circuitId = getStr(reply.headers, Header.CircuitId);
    conn.removeAllListeners('error');
    return conn;
  }

  // ---- binding ----------------------------------------------------------------------------------------------

  /** Binds the service of a Bind session token (a terminator on this router); resolves with the bind conn id. */
  async bind(sessionToken: string, listenerId: string, handler: BindHandler): Promise<number> {
    const id = this.allocateId();
    this.binds.set(id, handler);
    let reply: Message;
    try {
      reply = await this.channel.request(
        message(
          EdgeType.Bind,
          [
            [Header.ConnId, u32(id)],
            [Header.SupportsInspect, bool(true)],
            [Header.SupportsBindSuccess, bool(true)],
            [Header.UseXgressToSdk, bool(false)],
            [Header.ListenerId, str(listenerId)],
            [Header.RouterProvidedConnId, bool(true)],
          ],
          sessionToken,
        ),
        this.timeoutMs,
      );
    } catch (err) {
      this.binds.delete(id);
      throw err;
    }
    if (reply.contentType !== EdgeType.StateConnected) {
      this.binds.delete(id);
      if (reply.contentType === EdgeType.StateClosed) throw new EdgeRefusedError('bind', reply.body.toString('utf8') || 'no reason given');
      throw new Error(`unexpected answer to a bind: message type ${reply.contentType}`);
    }
    if (!this.supportsBindSuccess) handler.established();
    return id;
  }

  /** Removes a terminator of ours (Unbind: no reply). */
  unbind(bindConnId: number): void {
    const handler = this.binds.get(bindConnId);
    if (!handler) return;
    this.binds.delete(bindConnId);
    this.channel.send(message(EdgeType.Unbind, [[Header.ConnId, u32(bindConnId)]], handler.token));
  }

  // ---- EdgeConnLink -----------------------------------------------------------------------------------------

  sendData(connId: number, body: Buffer, fin: boolean): boolean {
    const headers: Array<[number, Buffer]> = [[Header.ConnId, u32(connId)]];
    if (fin) headers.push([Header.Flags, u32(Flag.FIN)]);
    return this.channel.send(message(EdgeType.Data, headers, body));
  }

  drain(): Promise<void> {
    return this.channel.drain();
  }

  sendClosed(connId: number): void {
    this.channel.send(message(EdgeType.StateClosed, [[Header.ConnId, u32(connId)]]));
  }

  forget(conn: EdgeConn): void {
    if (this.conns.get(conn.id) === conn) this.conns.delete(conn.id);
  }

  setBlocked(conn: EdgeConn, blocked: boolean): void {
    if (blocked) {
      this.blocked.add(conn);
      this.socket.pause();
    } else if (this.blocked.delete(conn) && this.blocked.size === 0 && !this.channel.closed) {
      this.socket.resume();
    }
  }

  // ---- incoming ---------------------------------------------------------------------------------------------

  private data(frame: Buffer): void {
    const at = findHeader(frame, Header.ConnId);
    if (!at || at.length !== 4) return;
    const conn = this.conns.get(frame.readUInt32LE(at.offset));
    if (!conn) return; // a conn we closed already: stray data
    conn.receive(bodyOf(frame), hasFin(frame));
  }

  private message(msg: Message): void {
    switch (msg.contentType) {
      case ChannelType.Latency:
      case ChannelType.Ping:
        this.channel.result(msg, true);
        return;
      case EdgeType.Dial:
        return this.incomingDial(msg);
      case EdgeType.BindSuccess: {
        this.binds.get(getU32(msg.headers, Header.ConnId) ?? -1)?.established();
        return;
      }
      case EdgeType.StateClosed: {
        const id = getU32(msg.headers, Header.ConnId);
        if (id === undefined) return;
        const bind = this.binds.get(id);
        if (bind) {
          this.binds.delete(id);
          return bind.dropped(msg.body.toString('utf8') || 'the router removed the terminator');
        }
        this.conns.get(id)?.closedByPeer();
        return;
      }
      default:
        // inspect requests, trace routes, late replies: not needed by this SDK
        return;
    }
  }

  /** The router asks us to accept a dial of a service we bind: DialSuccess with the conn id it chose, or DialFailed. */
  private incomingDial(msg: Message): void {
    const bindConnId = getU32(msg.headers, Header.ConnId);
    const fail = (reason: string) => {
      this.channel.reply(msg, message(EdgeType.DialFailed, [[Header.ConnId, u32(bindConnId ?? 0)]], reason));
    };
    const bind = bindConnId === undefined ? undefined : this.binds.get(bindConnId);
    if (!bind || !bind.token.equals(msg.body)) return fail('invalid token');
    const id = getU32(msg.headers, Header.RouterProvidedConnId);
    if (id === undefined) return fail('the dial carries no router-provided connection id');
    if (this.conns.has(id)) return fail(`connection id ${id} is in use`);
    if (msg.headers.get(Header.PublicKey)?.length) return fail("end-to-end encryption is not supported by Weft's SDK");
    const conn = new EdgeConn(id, this, {
      kind: 'accept',
      circuitId: getStr(msg.headers, Header.CircuitId),
      callerId: getStr(msg.headers, Header.CallerId),
      appData: msg.headers.get(Header.AppData) ? Buffer.from(msg.headers.get(Header.AppData)!) : undefined,
    });
    this.conns.set(id, conn);
    this.channel.reply(msg, message(EdgeType.DialSuccess, [[Header.ConnId, u32(bindConnId!)]], u32(id)));
    bind.accept(conn);
  }

  private allocateId(): number {
    do {
      this.nextId = this.nextId >= MAX_SDK_CONN_ID ? 1 : this.nextId + 1;
    } while (this.conns.has(this.nextId) || this.binds.has(this.nextId));
    return this.nextId;
  }

  private onChannelClosed(reason?: Error): void {
    this.closeReason = reason?.message ?? 'closed';
    const why = `the connection to the router closed${reason ? ` (${reason.message})` : ''}`;
    for (const conn of [...this.conns.values()]) conn.linkLost(why);
    this.conns.clear();
    this.blocked.clear();
    const binds = [...this.binds.values()];
    this.binds.clear();
    for (const b of binds) b.dropped(why);
    this.emit('close', this.closeReason);
  }
}
