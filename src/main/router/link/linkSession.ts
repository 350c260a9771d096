// What both ends of a router link do once its hello is done, whichever dialed (OpenZiti v1.7.2
// router/handler_link/bind.go: the same handlers on both sides): heartbeats out and answered, latency probes
// answered, xgress payloads, acks and controls to the router's circuits; a link silent for too long is closed.
import type { Logger } from 'pino';
import type { Core } from '../../core/dataPlane/index';
import type { Channel } from '../channel/channel';
import { MAX_FRAME } from '../edgeConnection';
import { ChannelType, getU64, Header, message, u64, type FrameLimits, type Message } from '../channel/wire';

/** The TLS application protocol of router links. */
export const LINK_ALPN = 'ziti-link';
/** After the hello: a payload carries one SDK write, as large as an edge Data frame may be. */
export const LINK_LIMITS: FrameLimits = { maxHeaders: 64 * 1024, maxFrame: MAX_FRAME };
/** How long a hello and its answer may take (OpenZiti's channel ConnectTimeout). */
export const HELLO_TIMEOUT_MS = 5_000;
/** A heartbeat goes out this often (OpenZiti's links: 10 s); a link silent for UNRESPONSIVE_MS is closed. */
export const HEARTBEAT_MS = 10_000;
const UNRESPONSIVE_MS = 60_000;

/** A link with a stock router, accepted or dialed. */
export interface RouterLink {
  id: string;
  /** the router at the other end */
  peerRouterId: string;
  iteration: number;
  channel: Channel;
}

/** What a link's ends ask of the built-in router. */
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

/** A message on a link that is up. */
export function linkMessage(host: LinkHost, link: RouterLink, msg: Message): void {
  const beat = getU64(msg.headers, Header.Heartbeat);
  if (beat !== undefined) link.channel.send(message(ChannelType.Heartbeat, [[Header.HeartbeatResponse, u64(beat)]]));
  switch (msg.contentType) {
    case ChannelType.Heartbeat:
    case ChannelType.Result:
      return;
    case ChannelType.Latency:
      link.channel.result(msg, true);
      return;
    default:
      host.xgress(link, msg);
  }
}

/** A heartbeat out (header 5); a link silent for too long is closed. */
export function beat(link: RouterLink): void {
  const ch = link.channel;
  if (ch.closed) return;
  if (Date.now() - ch.lastRead > UNRESPONSIVE_MS) return ch.close(new Error('link unresponsive'));
  ch.send(message(ChannelType.Heartbeat, [[Header.Heartbeat, u64(BigInt(Date.now()) * 1_000_000n)]]));
}
