// The built-in router dialing stock routers' link listeners, as a v1.7.2 router's link dialer does
// (router/xlink_transport/dialer.go, link/link_events.go): the controller names the routers that accept links
// (PeerStateChanges, in process here), the built-in router dials each healthy one with mutual TLS (its enrolled client
// certificate, ALPN ziti-link) and a hello naming the link (body), itself (2), the router dialed (6) and the attempt
// (5), never "grouped", so the listener keeps one plain channel. The listener answers at once and then asks the
// controller whether the certificate is the built-in router's (VerifyRouter); a link it closes right after was
// refused. The dialer reports its links (RouterLinks) and their ends (LinkFault), and dials again while the peer is
// healthy: the same link id, the next iteration, waiting longer after each failure.
import { randomUUID } from 'node:crypto';
import { newId } from '../../core/ids';
import { dialTls, parseRouterUrl } from '../../tlsDial';
import { Channel } from '../channel/channel';
import { ChannelType, decode, getStr, Header, message, str, u32, type Message } from '../channel/wire';
import { beat, HEARTBEAT_MS, HELLO_TIMEOUT_MS, LINK_ALPN, LINK_LIMITS, linkMessage, type LinkHost, type RouterLink } from './linkSession';
import { LinkHeader } from './xgressWire';

/** A router of the mesh as the controller describes it (ctrl/linkMessages.ts PeerStateChange). */
export interface LinkPeer {
  id: string;
  version: string;
  /** PeerState: Healthy 0, Unhealthy 1, Removed 2 */
  state: number;
  listeners: Array<{ address: string; protocol: string; groups: string[] }>;
}

export interface LinkDialerHost extends LinkHost {
  /** the built-in router's enrolled client certificate chain and key, and the CA bundle its peers' certificates chain to */
  credentials(): { keyPem: string; certChainPem: string; caPem: string };
}

/** The wait before dialing again after a failure: doubled each time up to the most (OpenZiti: 5 s up to 5 min). */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;

interface DialState {
  peerId: string;
  version: string;
  address: string;
  linkId: string;
  iteration: number;
  /** the peer is healthy and accepts links: dial it when there is no link */
  wanted: boolean;
  dialing: boolean;
  link?: RouterLink;
  delay: number;
  retry?: NodeJS.Timeout;
}

export class LinkDialer {
  private readonly states = new Map<string, DialState>();
  private readonly timer: NodeJS.Timeout;
  private stopped = false;
  /** a link is up (the controller records it as this router's: RouterLinks) */
  reported: (link: RouterLink, dialAddress: string) => void = () => undefined;
  /** a link this router dialed went (the controller drops it and tells the other router: LinkFault) */
  faulted: (link: RouterLink) => void = () => undefined;

  constructor(private readonly host: LinkDialerHost) {
    this.timer = setInterval(() => {
      for (const s of this.states.values()) if (s.link) beat(s.link);
    }, HEARTBEAT_MS);
    this.timer.unref();
  }

  /** The controller's news of other routers: a healthy one with a TLS listener in the default group is dialed. */
  peers(changes: LinkPeer[]): void {
    for (const p of changes) {
      if (p.id === this.host.routerId) continue;
      const listener =
        p.state === 0 ? p.listeners.find((l) => l.protocol === 'tls' && (l.groups.length === 0 || l.groups.includes('default'))) : undefined;
      const s = this.states.get(p.id);
      if (!listener) {
        // unhealthy or gone: no more dials; a link still up stays until it closes (as a stock router's)
        if (s) {
          s.wanted = false;
          clearTimeout(s.retry);
        }
        continue;
      }
      const state: DialState = s ?? {
        peerId: p.id,
        version: '',
        address: '',
        linkId: newId(22),
        iteration: 0,
        wanted: true,
        dialing: false,
        delay: RETRY_FIRST_MS,
      };
      this.states.set(p.id, state);
      Object.assign(state, { version: p.version, address: listener.address, wanted: true, delay: RETRY_FIRST_MS });
      clearTimeout(state.retry);
      if (!state.link && !state.dialing) this.dial(state);
    }
  }

  close(): void {
    this.stopped = true;
    clearInterval(this.timer);
    for (const s of this.states.values()) {
      clearTimeout(s.retry);
      s.link?.channel.close(new Error('the router is stopping'));
    }
  }

  private dial(s: DialState): void {
    if (this.stopped) return;
    s.dialing = true;
    s.iteration++;
    const address = s.address;
    this.connect(s, s.iteration).then(
      (link) => {
        s.dialing = false;
        if (link.channel.closed) return this.retryLater(s);
        if (this.stopped || !s.wanted) return link.channel.close(new Error('no longer wanted'));
        s.link = link;
        s.delay = RETRY_FIRST_MS;
        this.host.log.info({ link: link.id, router: s.peerId, address }, 'link dialer: link up');
        this.host.linked(link);
        this.reported(link, address);
      },
      (err: unknown) => {
        s.dialing = false;
        this.host.log.warn({ router: s.peerId, address, err: err instanceof Error ? err.message : err }, 'link dialer: dial failed');
        this.retryLater(s);
      },
    );
  }

  private retryLater(s: DialState): void {
    if (this.stopped || !s.wanted) return;
    clearTimeout(s.retry);
    s.retry = setTimeout(() => {
      if (s.wanted && !s.link && !s.dialing) this.dial(s);
    }, s.delay);
    s.retry.unref();
    s.delay = Math.min(s.delay * 2, RETRY_MAX_MS);
  }

  /** TLS, the hello and its answer; the link, or why not. */
  private async connect(s: DialState, iteration: number): Promise<RouterLink> {
    const { host, port } = parseRouterUrl(s.address);
    const creds = this.host.credentials();
    const socket = await dialTls(
      { host, port, ALPNProtocols: [LINK_ALPN], key: creds.keyPem, cert: creds.certChainPem, ca: creds.caPem },
      HELLO_TIMEOUT_MS,
      s.address,
    );
    let link: RouterLink | undefined;
    const onMessage = (msg: Message) => {
      if (link) linkMessage(this.host, link, msg);
    };
    const channel = new Channel(socket, LINK_LIMITS, {
      onData: (frame) => onMessage(decode(frame)),
      onMessage,
      onClose: () => {
        if (link) this.closed(s, link);
      },
    });
    const hello = message(
      ChannelType.Hello,
      [
        [LinkHeader.LinkHeaderConnId, str(randomUUID())],
        [LinkHeader.LinkHeaderRouterId, str(this.host.routerId)],
        // what a stock dialer sends here: the dialed router's version
        [LinkHeader.LinkHeaderRouterVersion, str(s.version)],
        [LinkHeader.LinkHeaderBinding, str('')],
        [LinkHeader.LinkHeaderIteration, u32(iteration)],
        [LinkHeader.LinkDialedRouterId, str(s.peerId)],
      ],
      str(s.linkId),
    );
    let answer: Message;
    try {
      answer = await channel.hello(hello, HELLO_TIMEOUT_MS);
    } catch (e) {
      channel.close(e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
    if (answer.contentType !== ChannelType.Result || answer.headers.get(Header.ResultSuccess)?.[0] !== 1) {
      channel.close(new Error('link refused'));
      throw new Error(`the router refused the link: ${answer.body.toString('utf8') || `message type ${answer.contentType}`}`);
    }
    const answeredBy = getStr(answer.headers, Header.Id);
    if (answeredBy !== undefined && answeredBy !== s.peerId) {
      channel.close(new Error('another router answered'));
      throw new Error(`router ${answeredBy} answered at ${s.address}, not ${s.peerId}`);
    }
    if (channel.closed) throw new Error('the router closed the link');
    link = { id: s.linkId, peerRouterId: s.peerId, iteration, channel };
    return link;
  }

  private closed(s: DialState, link: RouterLink): void {
    if (s.link !== link) return;
    s.link = undefined;
    this.host.log.info({ link: link.id, router: s.peerId }, 'link dialer: link closed');
    this.host.unlinked(link);
    this.faulted(link);
    this.retryLater(s);
  }
}
