// The control channel stock OpenZiti routers dial (OpenZiti's `ctrl` listener): mTLS with the router's enrolled
// certificate, ALPN ziti-ctrl, OpenZiti's channel framing (src/main/router/channel), the hello and its result, and
// heartbeats both ways. While a router's channel is up its edge router record is online. What a router asks beyond
// that (edge sync, terminators, circuits, links) is docs/router-control-channel.md.
import type { Server } from 'node:tls';
import type { Logger } from 'pino';
import type { WeftConfig } from '../config';
import {
  authorizeRouterControl,
  DataPlaneRefusal,
  routerControlStillValid,
  reassertControlRouters,
  setControlRouterOnline,
  watchEdgeRouters,
  type ControlRouter,
  type Core,
} from '../core/dataPlane/index';
import { SerialQueue } from '../core/serialQueue';
import { channelTlsServer, listenOn, replaceCertificate, tlsAddress } from '../listen';
import { parseDuration } from '../../shared/duration';
import { BUILD_DATE, REVISION, WEFT_VERSION } from '../version';
import type { LinkDialer } from '../router/link/linkDialer';
import type { LinkCircuits } from '../router/link/linkCircuits';
import { StockRouterFabric } from './fabric';
import { LinkMesh } from './links';
import { RouterExtensions } from './routerExtension';
import { RouterModelSync } from './modelSync';
import { ApiSessionSync } from './apiSessionSync';
import { RouterControlChannel } from './routerChannel';
import type { ControlChannelHost } from './types';

export { RouterControlChannel } from './routerChannel';

export const DEFAULT_CTRL_LISTENER = 'tls:127.0.0.1:6262';
/** The TLS application protocol routers ask for on their control channel (OpenZiti's transport "protocol"). */
export const CTRL_ALPN = 'ziti-ctrl';

/** OpenZiti's controller capabilities (common/capabilities): bit numbers of the mask in the hello's result. */
export const Capability = {
  ControllerCreateTerminatorV2: 1,
  ControllerSingleRouterLinkSource: 2,
  ControllerCreateCircuitV2: 3,
  RouterDataModel: 4,
} as const;

/** A set of capability bits as Go's big.Int.Bytes() writes it: big-endian, no leading zero bytes. */
export function capabilityMask(bits: number[]): Buffer {
  let mask = 0n;
  for (const b of bits) mask |= 1n << BigInt(b);
  if (mask === 0n) return Buffer.alloc(0);
  let hex = mask.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  return Buffer.from(hex, 'hex');
}

/** The OpenZiti router version whose links the built-in router speaks (stock dialers pick their link mode by it). */
const BUILTIN_LINK_VERSION = 'v1.7.2';

/** What OpenZiti v1.7.2's controller sends by default (the router data model is on by default). */
const CAPABILITIES = capabilityMask(Object.values(Capability));

/** Go's GOARCH names for Node's process.arch (the version header is read by Go). */
const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' };

export { tlsAddress };

/**
 * Where the control channel listens (the default address falls back to a free port when taken) and what it
 * advertises: the configured tls:host[:port], else the listener's host (127.0.0.1 for a wildcard) and bound port.
 */
export function ctrlAddresses(config: WeftConfig['ctrl']): {
  listen: { host: string; port: number; isDefault: boolean };
  advertise: { host: string; port?: number };
} {
  const split = (address: string) => {
    const m = /^tls:(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(address)!;
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port: m[2] ? Number(m[2]) : undefined };
  };
  const l = split(config.listener ?? DEFAULT_CTRL_LISTENER);
  const listen = { host: l.host, port: l.port!, isDefault: config.listener === undefined };
  if (config.advertise) return { listen, advertise: split(config.advertise) };
  return { listen, advertise: { host: listen.host === '0.0.0.0' || listen.host === '::' ? '127.0.0.1' : listen.host } };
}

export interface ControlChannelOptions {
  config: WeftConfig['ctrl'];
  /** the controller's TLS server key and certificate chain (the API's: routers verify it with the CA they enrolled with) */
  tls: { keyPem: string; certChainPem: string };
  log: Logger;
}

/**
 * The control channel listener. Bound before the core is built (enrollment JWTs name its address), it accepts
 * routers once started with the core; connections before that are dropped.
 */
export class ControlChannelServer implements ControlChannelHost {
  /** the advertised address, tls:host:port: what router enrollment JWTs name in `ctrls` */
  address = '';
  port = 0;
  core!: Core;
  controllerId = '';
  readonly log: Logger;
  readonly versionHeader = `${WEFT_VERSION}|${REVISION}|${BUILD_DATE}|${process.platform}|${GO_ARCH[process.arch] ?? process.arch}`;
  readonly capabilities = CAPABILITIES;
  readonly heartbeatMs: number;
  readonly unresponsiveMs: number;
  readonly sync: RouterModelSync;
  readonly apiSessions: ApiSessionSync;
  readonly fabric: StockRouterFabric;
  readonly mesh: LinkMesh;
  readonly extensions: RouterExtensions;
  private readonly server: Server;
  private readonly conns = new Set<RouterControlChannel>();
  /** router id -> its current channel (a router that connects again replaces its old channel) */
  private readonly byRouter = new Map<string, RouterControlChannel>();
  /** online/offline writes, one after another, each writing the state at the time it runs */
  private readonly writes = new SerialQueue((e) => this.log.error({ err: e }, 'control channel: router state write failed'));
  private accepting = false;
  private timer?: NodeJS.Timeout;
  private unwatch?: () => void;

  private constructor(private readonly opts: ControlChannelOptions) {
    this.log = opts.log;
    this.heartbeatMs = parseDuration(opts.config.heartbeat_interval);
    this.unresponsiveMs = parseDuration(opts.config.unresponsive_timeout);
    const failed = (err: unknown, what: string) => this.log.error({ err }, `control channel: ${what} failed`);
    this.sync = new RouterModelSync(() => this.core, WEFT_VERSION, failed);
    this.apiSessions = new ApiSessionSync(() => this.core, failed);
    const channelOf = (id: string) => this.byRouter.get(id);
    this.mesh = new LinkMesh(channelOf);
    this.extensions = new RouterExtensions(() => this.core, this.log);
    this.fabric = new StockRouterFabric(
      () => this.core,
      channelOf,
      this.mesh,
      () => this.connectedRouters(),
      failed,
    );
    // the certificate is checked against the router's record after the hello (its fingerprint, see authorize)
    this.server = channelTlsServer({
      tls: opts.tls,
      alpn: [CTRL_ALPN],
      label: 'control channel',
      log: this.log,
      accepting: () => this.accepting,
      onSocket: (socket) => this.conns.add(new RouterControlChannel(this, socket)),
    });
  }

  /** A renewed server certificate for new router connections (certificateRenewal.ts); open channels keep theirs. */
  replaceCertificate(tls: { keyPem: string; certChainPem: string }): void {
    replaceCertificate(this.server, tls);
  }

  /** Binds the listener (nothing is accepted until start). */
  static async bind(opts: ControlChannelOptions): Promise<ControlChannelServer> {
    const ctrl = new ControlChannelServer(opts);
    const { listen, advertise } = ctrlAddresses(opts.config);
    ctrl.port = await listenOn(
      ctrl.server,
      listen.host,
      listen.port,
      listen.isDefault
        ? {
            onFallback: () =>
              opts.log.warn(
                { listener: tlsAddress(listen.host, listen.port) },
                'control channel: the default listener address is in use; taking a free port',
              ),
          }
        : undefined,
    );
    ctrl.address = tlsAddress(advertise.host, advertise.port ?? ctrl.port);
    return ctrl;
  }

  /** Accepts routers from now on. */
  start(core: Core, controllerId: string): void {
    this.core = core;
    this.controllerId = controllerId;
    this.accepting = true;
    this.unwatch = watchEdgeRouters(core, (ids) => this.routersChanged(ids));
    this.sync.start();
    this.fabric.start();
    this.timer = setInterval(() => this.heartbeat(), Math.max(1, this.heartbeatMs));
    this.timer.unref();
    this.log.info({ listener: this.address }, 'control channel listening');
  }

  async authorize(routerId: string, leafDer: Buffer | undefined): Promise<ControlRouter> {
    if (!this.accepting) throw new DataPlaneRefusal('the controller is stopping');
    return authorizeRouterControl(this.core, routerId, leafDer);
  }

  async connected(ch: RouterControlChannel): Promise<void> {
    const router = ch.router!;
    const previous = this.byRouter.get(router.id);
    this.byRouter.set(router.id, ch);
    if (previous && previous !== ch) previous.channel.close(new Error('replaced by a new connection of the router'));
    await this.syncOnline(router.id);
    // a change committed between the hello's check and the line above was told to nobody: look again
    if (!(await routerControlStillValid(this.core, router))) ch.channel.close(new Error('the router changed while it connected'));
  }

  async disconnected(ch: RouterControlChannel): Promise<void> {
    this.conns.delete(ch);
    this.sync.closed(ch);
    this.apiSessions.closed(ch);
    const id = ch.router?.id;
    if (id === undefined || this.byRouter.get(id) !== ch) return;
    this.byRouter.delete(id);
    this.mesh.disconnected(id);
    await this.syncOnline(id);
    await this.writes.run(() => this.fabric.routerGone(id));
  }

  /** Writes whether the router is online as it stands when the write runs (writes never overtake each other). */
  private syncOnline(id: string): Promise<void> {
    return this.writes.run(() => setControlRouterOnline(this.core, id, this.byRouter.has(id)));
  }

  /** Records changed (disabled, deleted, re-enrolled): their channels close. No ids: look at every channel. */
  private routersChanged(ids?: string[]): void {
    const channels = ids ? ids.map((id) => this.byRouter.get(id)).filter((c) => c !== undefined) : [...this.byRouter.values()];
    for (const ch of channels) {
      void routerControlStillValid(this.core, ch.router!)
        .then((ok) => {
          if (!ok) ch.channel.close(new Error('the router was disabled, deleted or re-enrolled'));
        })
        .catch((err) => this.log.error({ err }, 'control channel: router check failed'));
    }
  }

  private heartbeat(): void {
    for (const ch of this.conns) if (!ch.beat()) ch.channel.close(new Error('heartbeat not answered in time'));
    // after an outage the other nodes may have taken this one for dead: its routers are recorded again
    if (this.byRouter.size > 0) void this.writes.run(() => reassertControlRouters(this.core, [...this.byRouter.keys()]));
  }

  /**
   * The built-in router takes part in the stock routers' mesh: with a link listener (router.link_listener) they learn
   * where it accepts links (announced as the OpenZiti version whose link protocol it speaks) and dial it; without one it
   * hears where they accept links and dials them, reporting its links as a stock dialer does. Circuits dialed at them
   * may end at its terminators, its dials for services it holds no terminator of may end at theirs, and circuits
   * between two of them may pass through it (a transit hop) when that is the cheapest path.
   */
  attachBuiltin(router: { id: string; linkAddress: string; links: LinkCircuits; linkDialer?: LinkDialer }): void {
    router.links.onEnded = (id) => this.fabric.endCircuits((c) => c.id === id);
    router.links.remote = (req) => this.fabric.routeFromBuiltin(req);
    router.links.remoteBeats = (q) => this.fabric.remoteBeats(q.serviceId, q.instanceId, q);
    this.fabric.attachBuiltin({
      id: router.id,
      route: (r) => router.links.route(r),
      transit: (id, a, b) => router.links.transit(id, a, b),
      unroute: (id) => router.links.unroute(id),
    });
    const dialer = router.linkDialer;
    if (dialer) {
      dialer.reported = (link, dialAddress) =>
        this.mesh.reported(router.id, [{ id: link.id, destRouterId: link.peerRouterId, protocol: 'tls', dialAddress, iteration: link.iteration }]);
      dialer.faulted = (link) => this.fabric.linkFaulted(router.id, link.id, link.iteration);
    }
    const listeners = router.linkAddress
      ? [{ address: router.linkAddress, protocol: 'tls', costTags: [], groups: ['default'], localBinding: '' }]
      : [];
    this.mesh.connected(router.id, BUILTIN_LINK_VERSION, listeners, { deliver: dialer && ((changes) => dialer.peers(changes)) });
  }

  /** The routers connected now (their ids). */
  connectedRouters(): string[] {
    return [...this.byRouter.keys()];
  }

  /** The current channel of a router. */
  channelOf(routerId: string): RouterControlChannel | undefined {
    return this.byRouter.get(routerId);
  }

  /** Stops accepting, closes every channel (the routers go offline) and the listener. A second call finds nothing to do. */
  async close(): Promise<void> {
    this.accepting = false;
    clearInterval(this.timer);
    this.unwatch?.();
    this.unwatch = undefined;
    this.sync.stop();
    this.apiSessions.stop();
    this.fabric.stop();
    const closed = new Promise<void>((done) => (this.server.listening ? this.server.close(() => done()) : done()));
    const channels = [...this.conns];
    for (const ch of channels) ch.channel.close(new Error('the controller is stopping'));
    for (const ch of channels) await ch.settled();
    await this.writes.settled();
    for (const ch of channels) ch.socket.destroy();
    await closed;
  }
}
