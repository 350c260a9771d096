import type { Socket } from 'node:net';
import type { LiveStatus } from '../core/dataPlane/index';
import type { Channel } from './channel/channel';
import { bodyOf, EdgeType, encode, findHeader, Flag, hasFin, Header, message, str, u32 } from './channel/wire';

/** What a circuit uses of an SDK connection it runs over (an EdgeConnection). */
export interface CircuitConnection {
  readonly channel: Channel;
  /** the circuit has let go of one of the connection's conn ids */
  forget(connId: number): void;
}

/** An SDK connection's edge conn id as one end of a circuit. */
export type SdkEnd = { kind: 'sdk'; conn: CircuitConnection; connId: number };

/** The far end of a circuit that crosses a router link (link/linkEnd.ts): it takes and gives edge Data frames. */
export interface LinkCircuitEnd {
  /** a Data frame for the far end; false = back off until drained() */
  write(frame: Buffer): boolean;
  drained(): Promise<void>;
  /** frames from the far end wait until `until` settles (the near end is full) */
  holdUntil(until: Promise<unknown>): void;
  /** the circuit ended; `told`: the far end ended it (nothing to tell it) */
  close(reason: string, told: boolean): void;
}
export type LinkEnd = { kind: 'link'; end: LinkCircuitEnd };
/** The dialing end: an SDK connection here, or the far end of a link (an SDK at another router dialed). */
export type DialerEnd = SdkEnd | LinkEnd;
/** The hosting end: an SDK connection's edge conn id, a TCP socket the router dialed (router hosting), a link. */
export type HostEnd = SdkEnd | { kind: 'tcp'; socket: Socket } | LinkEnd;
export type CircuitEnd = DialerEnd | HostEnd;
export type Side = 'dialer' | 'host';

/** What a circuit is for: the dial's service, terminator and session, and who dialed. */
export interface CircuitDial {
  serviceId: string;
  serviceName: string;
  terminatorId: string;
  sessionId: string;
  caller: string;
  /** for circuit events: the dialing identity, the hosting one (the router for services it hosts), the terminator */
  callerId: string;
  hostId: string;
  instanceId: string;
  cost: number;
}

/**
 * How much a receiver may have queued before its sender is paused. Above the sockets' own 16 KiB mark: SDKs write
 * 32 KiB frames, and pausing at every frame costs more than the memory saves.
 */
const RELAY_BUFFER_BYTES = 1024 * 1024;

/** What the console shows of a circuit (the core's live view declares the shape). */
export type CircuitInfo = LiveStatus['circuits'][number];

/**
 * A circuit joins a dialer's edge conn to a terminator: Data frames are relayed one for one and in order (the
 * SDKs' end-to-end encryption depends on it), with the conn id rewritten for the receiving side and everything
 * else (flags, body) untouched. A full receiver pauses the sender until it drains.
 */
export class Circuit {
  readonly createdAt = new Date();
  /** when the dialer was told it is connected (a circuit that never opened has no lifetime to report) */
  openedAt?: number;
  bytesIn = 0;
  bytesOut = 0;
  private state: 'dialing' | 'open' | 'closed' = 'dialing';
  /** frames the host sent before the dialer was told it is connected */
  private early: Buffer[] = [];
  host?: HostEnd;

  constructor(
    readonly id: string,
    readonly info: CircuitDial,
    readonly dialer: DialerEnd,
    private readonly onClosed: (c: Circuit) => void,
  ) {}

  get closed(): boolean {
    return this.state === 'closed';
  }

  attachHost(host: HostEnd): void {
    this.host = host;
    if (host.kind === 'tcp') this.pipeTcp(host.socket);
  }

  /** The dialer has its StateConnected: deliver what the host already sent, then relay as it comes. */
  open(): void {
    if (this.state !== 'dialing') return;
    this.state = 'open';
    this.openedAt = Date.now();
    for (const frame of this.early) this.relay('host', frame);
    this.early = [];
  }

  /** A Data frame from one side. */
  relay(from: Side, frame: Buffer): void {
    if (this.state === 'closed') return;
    if (from === 'host' && this.state === 'dialing') {
      this.early.push(Buffer.from(frame)); // the frame's memory belongs to the read buffer
      return;
    }
    const to = from === 'dialer' ? this.host : this.dialer;
    const source = from === 'dialer' ? this.dialer : this.host;
    if (!to || !source) return;
    const body = bodyOf(frame);
    if (from === 'dialer') this.bytesIn += body.length;
    else this.bytesOut += body.length;
    let writable: boolean;
    if (to.kind === 'sdk') {
      const connId = findHeader(frame, Header.ConnId);
      if (!connId || connId.length !== 4) return;
      frame.writeUInt32LE(to.connId, connId.offset);
      writable = to.conn.channel.write(frame) || to.conn.channel.socket.writableLength < RELAY_BUFFER_BYTES;
      if (!writable) backOff(source, () => to.conn.channel.drain());
    } else if (to.kind === 'link') {
      if (!to.end.write(frame)) backOff(source, () => to.end.drained());
    } else {
      writable = (body.length > 0 ? to.socket.write(body) : true) || to.socket.writableLength < RELAY_BUFFER_BYTES;
      if (hasFin(frame)) to.socket.end();
      if (!writable) backOff(source, () => new Promise((r) => to.socket.once('drain', r)));
    }
  }

  /** Ends the circuit; the side that ended it (if any) is not told again. */
  close(reason: string, from?: Side): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.early = [];
    for (const [side, end] of [
      ['dialer', this.dialer],
      ['host', this.host],
    ] as const) {
      if (!end) continue;
      if (end.kind === 'sdk') {
        end.conn.forget(end.connId);
        if (side !== from) end.conn.channel.send(message(EdgeType.StateClosed, [[Header.ConnId, u32(end.connId)]], str(reason)));
      } else if (end.kind === 'link') {
        end.end.close(reason, side === from);
      } else if (side !== from) {
        end.socket.end(() => end.socket.destroy());
      }
    }
    this.onClosed(this);
  }

  describe(): CircuitInfo {
    return {
      id: this.id,
      serviceId: this.info.serviceId,
      serviceName: this.info.serviceName,
      terminatorId: this.info.terminatorId,
      caller: this.info.caller,
      callerId: this.info.callerId,
      hostKind: this.host?.kind === 'tcp' ? 'tcp' : 'sdk',
      createdAt: this.createdAt.toISOString(),
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
    };
  }

  /** Bytes from the router-dialed TCP socket go to the dialer as Data; its half-close as an empty FIN Data. */
  private pipeTcp(socket: Socket): void {
    // a link's far end takes no conn id (the frame's is replaced on the way)
    const connId = this.dialer.kind === 'sdk' ? this.dialer.connId : 0;
    const header = (flags: number) => [[Header.ConnId, u32(connId)], ...(flags ? [[Header.Flags, u32(flags)]] : [])] as Array<[number, Buffer]>;
    socket.on('data', (chunk: Buffer) => {
      if (this.state === 'closed') return;
      this.relay('host', encode(message(EdgeType.Data, header(0), chunk)));
    });
    socket.on('end', () => {
      if (this.state !== 'closed') this.relay('host', encode(message(EdgeType.Data, header(Flag.FIN))));
    });
    socket.on('error', () => undefined); // 'close' follows
    socket.on('close', () => this.close('the hosted server closed the connection', 'host'));
  }
}

/** Pauses the sending side until the receiver has room again. */
function backOff(source: CircuitEnd, drained: () => Promise<unknown>): void {
  if (source.kind === 'link') return source.end.holdUntil(drained());
  const socket = source.kind === 'sdk' ? source.conn.channel.socket : source.socket;
  if (socket.isPaused()) return;
  socket.pause();
  void drained().then(() => socket.resume());
}
