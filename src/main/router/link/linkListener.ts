// Where stock OpenZiti routers dial the built-in router to link with it (OpenZiti v1.7.2 router/xlink_transport):
// mutual TLS with ALPN ziti-link, one channel-V2 connection per link. The dialer's hello carries the link id in its
// body and the link's metadata in headers 0-6; its certificate must be the one the named router enrolled with (what a
// stock listener asks its controller with VerifyRouter, checked here in process). The answer never says "grouped", so
// a dialer that offers several connections per link (multi-underlay) keeps to this one. After the hello: xgress
// payloads, acks and controls for the router's circuits, and heartbeats both ways.
import type { Server, TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { authorizeRouterControl, DataPlaneRefusal, type Core } from '../../core/dataPlane/index';
import { channelTlsServer, listenOn } from '../../listen';
import { Channel } from '../channel/channel';
import { MAX_FRAME } from '../edgeConnection';
import {
  ChannelType,
  decode,
  getStr,
  getU32,
  getU64,
  Header,
  HELLO_LIMITS,
  message,
  str,
  u64,
  type FrameLimits,
  type Message,
} from '../channel/wire';
import { LinkChannelType, LinkHeader } from './xgressWire';

/** The TLS application protocol of router links. */
export const LINK_ALPN = 'ziti-link';
/** After the hello: a payload carries one SDK write, as large as an edge Data frame may be. */
const LINK_LIMITS: FrameLimits = { maxHeaders: 64 * 1024, maxFrame: MAX_FRAME };
/** How long a dialer may take to send its hello (OpenZiti's channel ConnectTimeout). */
const HELLO_TIMEOUT_MS = 5_000;
/** A heartbeat goes out this often (OpenZiti's links: 10 s); a link silent for UNRESPONSIVE_MS is closed (60 s). */
const HEARTBEAT_MS = 10_000;
const UNRESPONSIVE_MS = 60_000;

/** An accepted link: the stock router at its other end dialed it. */
export interface RouterLink {
  id: string;
  /** the dialing router */
  peerRouterId: string;
  iteration: number;
  channel: Channel;
}

/** What the listener asks of the built-in router. */
export interface LinkHost {
  readonly core: Core;
  readonly routerId: string;
  readonly log: Logger;
  /** a link is up; its xgress messages follow */
  linked(link: RouterLink): void;
  /** an xgress payload, ack or control on a link */
  xgress(link: RouterLink, msg: Message): void;
  /** the link's connection closed */
  unlinked(link: RouterLink): void;
}

export class LinkListener {
  port = 0;
  private readonly server: Server;
  private readonly links = new Set<LinkConnection>();
  private accepting = true;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly host: LinkHost,
    tls: { keyPem: string; certChainPem: string },
  ) {
    this.server = channelTlsServer({
      tls,
      alpn: [LINK_ALPN],
      label: 'link listener',
      log: host.log,
      accepting: () => this.accepting,
      onSocket: (socket) => {
        const c = new LinkConnection(host, socket, () => this.links.delete(c));
        this.links.add(c);
      },
    });
    this.timer = setInterval(() => {
      for (const c of this.links) c.beat();
    }, HEARTBEAT_MS);
    this.timer.unref();
  }

  async listen(hostname: string, port: number): Promise<number> {
    this.port = await listenOn(this.server, hostname, port);
    return this.port;
  }

  async close(): Promise<void> {
    this.accepting = false;
    clearInterval(this.timer);
    const closed = new Promise<void>((done) => (this.server.listening ? this.server.close(() => done()) : done()));
    for (const c of [...this.links]) c.channel.close(new Error('the router is stopping'));
    await closed;
  }
}

/** One link connection: the hello, then the link's messages. */
class LinkConnection {
  readonly channel: Channel;
  link?: RouterLink;
  private readonly helloTimer: NodeJS.Timeout;

  constructor(
    private readonly host: LinkHost,
    private readonly socket: TLSSocket,
    private readonly gone: () => void,
  ) {
    this.channel = new Channel(socket, HELLO_LIMITS, {
      onData: (frame) => this.onMessage(decode(frame)),
      onMessage: (msg) => this.onMessage(msg),
      onClose: () => this.closed(),
    });
    this.helloTimer = setTimeout(() => this.channel.close(new Error('no hello in time')), HELLO_TIMEOUT_MS);
  }

  private onMessage(msg: Message): void {
    if (!this.link) return void this.hello(msg).catch((err: unknown) => this.refuse(msg, 'internal error', err));
    const beat = getU64(msg.headers, Header.Heartbeat);
    if (beat !== undefined) this.channel.send(message(ChannelType.Heartbeat, [[Header.HeartbeatResponse, u64(beat)]]));
    switch (msg.contentType) {
      case ChannelType.Heartbeat:
      case ChannelType.Result:
        return;
      case ChannelType.Latency:
        this.channel.result(msg, true);
        return;
      default:
        this.host.xgress(this.link, msg);
    }
  }

  private async hello(msg: Message): Promise<void> {
    clearTimeout(this.helloTimer);
    if (msg.contentType !== ChannelType.Hello) return this.refuse(undefined, `expected a hello, got message type ${msg.contentType}`);
    const linkId = msg.body.toString('utf8');
    const peerRouterId = getStr(msg.headers, LinkHeader.LinkHeaderRouterId) ?? '';
    const type = msg.headers.get(LinkHeader.LinkHeaderType)?.[0];
    if (!linkId) return this.refuse(msg, 'the hello names no link');
    if (getStr(msg.headers, LinkHeader.LinkDialedRouterId) !== this.host.routerId)
      return this.refuse(msg, 'dialed router id does not match this router');
    if (type === LinkChannelType.PayloadChannel || type === LinkChannelType.AckChannel) return this.refuse(msg, 'split links are not supported');
    try {
      await authorizeRouterControl(this.host.core, peerRouterId, this.socket.getPeerCertificate()?.raw);
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) throw e;
      return this.refuse(msg, e.message);
    }
    if (this.channel.closed) return;
    this.channel.setLimits(LINK_LIMITS);
    // what a stock listener answers an ungrouped hello: the dialer's connection id and this router's id, no IsGrouped
    this.channel.result(msg, true, '', [
      [Header.ConnectionId, msg.headers.get(LinkHeader.LinkHeaderConnId) ?? str(linkId)],
      [Header.Id, str(this.host.routerId)],
    ]);
    this.link = { id: linkId, peerRouterId, iteration: getU32(msg.headers, LinkHeader.LinkHeaderIteration) ?? 0, channel: this.channel };
    this.host.log.info({ link: linkId, router: peerRouterId }, 'link listener: link accepted');
    this.host.linked(this.link);
  }

  /** A heartbeat out (header 5); a link silent for too long is closed. */
  beat(): void {
    if (!this.link || this.channel.closed) return;
    if (Date.now() - this.channel.lastRead > UNRESPONSIVE_MS) return this.channel.close(new Error('link unresponsive'));
    this.channel.send(message(ChannelType.Heartbeat, [[Header.Heartbeat, u64(BigInt(Date.now()) * 1_000_000n)]]));
  }

  private refuse(msg: Message | undefined, reason: string, err?: unknown): void {
    this.host.log.warn({ err, remote: `${this.socket.remoteAddress}:${this.socket.remotePort}`, reason }, 'link listener: link refused');
    if (msg && !this.channel.closed) this.channel.result(msg, false, reason);
    this.channel.close(new Error(`refused: ${reason}`));
  }

  private closed(): void {
    clearTimeout(this.helloTimer);
    this.gone();
    if (this.link) this.host.unlinked(this.link);
  }
}
