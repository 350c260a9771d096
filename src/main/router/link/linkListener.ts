// Where stock OpenZiti routers dial the built-in router to link with it (OpenZiti v1.7.2 router/xlink_transport):
// mutual TLS with ALPN ziti-link, one channel-V2 connection per link. The dialer's hello carries the link id in its
// body and the link's metadata in headers 0-6; its certificate must be the one the named router enrolled with (what a
// stock listener asks its controller with VerifyRouter, checked here in process). The answer never says "grouped", so
// a dialer that offers several connections per link (multi-underlay) keeps to this one. After the hello: xgress
// payloads, acks and controls for the router's circuits, and heartbeats both ways.
import type { Server, TLSSocket } from 'node:tls';
import { authorizeRouterControl, DataPlaneRefusal } from '../../core/dataPlane/index';
import { channelTlsServer, listenOn, replaceCertificate } from '../../listen';
import { Channel } from '../channel/channel';
import { ChannelType, decode, getStr, getU32, Header, HELLO_LIMITS, str, type Message } from '../channel/wire';
import { beat, HEARTBEAT_MS, HELLO_TIMEOUT_MS, LINK_ALPN, LINK_LIMITS, linkMessage, type LinkHost, type RouterLink } from './linkSession';
import { LinkChannelType, LinkHeader } from './xgressWire';

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
      for (const c of this.links) if (c.link) beat(c.link);
    }, HEARTBEAT_MS);
    this.timer.unref();
  }

  /** The router's renewed certificate for new links; open links keep theirs. */
  replaceCertificate(tls: { keyPem: string; certChainPem: string }): void {
    replaceCertificate(this.server, tls);
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
    linkMessage(this.host, this.link, msg);
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
