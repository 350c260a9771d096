import type { TLSSocket } from 'node:tls';
import { DataPlaneRefusal, newId, verifyRouterFingerprints, type ControlRouter } from '../core/dataPlane/index';
import { SerialQueue } from '../core/serialQueue';
import { Channel } from '../router/channel/channel';
import {
  ChannelType,
  decode,
  getStr,
  getU64,
  Header,
  HELLO_LIMITS,
  HELLO_MAX_PART,
  message,
  str,
  u64,
  type FrameLimits,
  type Message,
} from '../router/channel/wire';
import { EdgeCtrl, Fabric, parseSubscribe } from './edgeMessages';
import { ExtensionMsg } from './routerExtension';
import { LinkMsg, parseListeners, parseRouterLinks, parseVerifyRouter, type LinkListener } from './linkMessages';
import type { ControlChannelHost } from './types';

/** OpenZiti's ctrl_pb.ControlHeaders: what a router's hello and the controller's answer carry beyond the channel's own. */
export const CtrlHeader = { Listeners: 10, RouterMetadata: 11, Capabilities: 12 } as const;

/** After the hello: the control plane's messages are small protobufs (a full data-model sync is the largest). */
const LIMITS: FrameLimits = { maxHeaders: 64 * 1024, maxFrame: 16 * 1024 * 1024 };
/** How long a connection may take to send its hello (OpenZiti's channel ConnectTimeout is 5 s by default). */
const HELLO_TIMEOUT_MS = 5_000;

/** Nanoseconds since the epoch, as OpenZiti's heartbeats carry them (time.Now().UnixNano()). */
const nowNanos = (): bigint => BigInt(Date.now()) * 1_000_000n;

/**
 * One stock router's control channel: the hello (the router's id in the body, its version header, the client
 * certificate checked by the core), then heartbeats both ways. Messages of the control plane this phase does not
 * serve are ignored, as OpenZiti's channel drops a message no handler takes.
 */
export class RouterControlChannel {
  readonly channel: Channel;
  router?: ControlRouter;
  /** the router's version header (version|revision|build date|os|arch) */
  version?: string;
  /** heartbeats sent and answers received (what tests and the live view read) */
  readonly heartbeats = { sent: 0, answered: 0, received: 0 };
  /** when the router last answered a heartbeat (ms since the epoch); starts with OpenZiti's grace of twice the timeout */
  lastAnswer: number;
  /** messages of types this phase does not serve, by content type */
  readonly ignored = new Map<number, number>();
  private readonly helloTimer: NodeJS.Timeout;
  private readonly queue = new SerialQueue((e) => this.failed(e));
  private accepted = false;

  constructor(
    private readonly host: ControlChannelHost,
    readonly socket: TLSSocket,
  ) {
    this.lastAnswer = Date.now() + host.unresponsiveMs;
    this.channel = new Channel(socket, HELLO_LIMITS, {
      // no edge Data on a control channel: a frame of that type is a message like any other
      onData: (frame) => this.queue.push(() => this.onMessage(decode(frame))),
      onMessage: (msg) => this.queue.push(() => this.onMessage(msg)),
      onClose: (reason) => this.queue.push(() => this.closed(reason)),
    });
    this.helloTimer = setTimeout(() => this.channel.close(new Error('no hello in time')), HELLO_TIMEOUT_MS);
    socket.setKeepAlive(true, host.heartbeatMs);
  }

  get remote(): string {
    return `${this.socket.remoteAddress}:${this.socket.remotePort}`;
  }

  settled(): Promise<void> {
    return this.queue.settled();
  }

  private failed(e: unknown): void {
    this.host.log.error({ err: e, router: this.router?.id }, 'control channel: message handling failed');
    this.channel.close(e as Error);
  }

  private onMessage(msg: Message): void | Promise<void> {
    if (!this.accepted) return this.hello(msg);
    // a heartbeat rides on any message (header 5): answered at once with a Heartbeat carrying it back (header 6)
    const beat = getU64(msg.headers, Header.Heartbeat);
    if (beat !== undefined) {
      this.heartbeats.received++;
      this.channel.send(message(ChannelType.Heartbeat, [[Header.HeartbeatResponse, u64(beat)]]));
    }
    if (getU64(msg.headers, Header.HeartbeatResponse) !== undefined) {
      this.heartbeats.answered++;
      this.lastAnswer = Date.now();
    }
    switch (msg.contentType) {
      case ChannelType.Heartbeat:
        return;
      case ChannelType.Ping:
        // OpenZiti's controller answers a router's ping with a successful Result "ok" (handler_ctrl/ping.go)
        this.channel.result(msg, true, 'ok');
        return;
      case ChannelType.Latency:
        this.channel.result(msg, true);
        return;
      case EdgeCtrl.ApiSessionHeartbeat:
        return this.detached('API session heartbeat', () => this.host.apiSessions.heartbeat(this, msg.body));
      case EdgeCtrl.RequestClientReSync:
        this.host.apiSessions.resync(this);
        return;
      case EdgeCtrl.SubscribeToDataModelRequest:
        return this.detached('data model subscription', () => this.host.sync.subscribe(this, parseSubscribe(msg.body)));
      case EdgeCtrl.CreateCircuitV2Request:
        return this.detached('create circuit', () => this.host.fabric.createCircuit(this, msg));
      case EdgeCtrl.CreateTunnelCircuitV2Request:
        return this.detached('create tunnel circuit', () => this.host.fabric.createTunnelCircuit(this, msg));
      case EdgeCtrl.CreateTunnelTerminatorRequestV2:
        return this.guarded('createTunnelTerminator', () => this.host.fabric.createTunnelTerminator(this, msg));
      case EdgeCtrl.UpdateTunnelTerminatorRequest:
        return this.guarded('updateTunnelTerminator', () => this.host.fabric.updateTunnelTerminator(this, msg));
      case EdgeCtrl.TunnelHealthEvent:
        return this.guarded('tunnelHealthEvent', () => this.host.fabric.tunnelHealthEvent(this, msg));
      // a router's requests about its terminators keep their order (a Bind's terminator before its removal)
      case EdgeCtrl.CreateTerminatorV2Request:
        return this.guarded('createTerminator', () => this.host.fabric.createTerminator(this, msg));
      case EdgeCtrl.RemoveTerminatorRequest:
        return this.guarded('removeTerminator', () => this.host.fabric.removeTerminator(this, msg));
      case Fabric.RemoveTerminatorsRequest:
        return this.guarded('removeTerminators', () => this.host.fabric.removeTerminators(this, msg));
      case EdgeCtrl.UpdateTerminatorRequest:
        return this.guarded('updateTerminator', () => this.host.fabric.updateTerminator(this, msg));
      case EdgeCtrl.HealthEvent:
        return this.guarded('healthEvent', () => this.host.fabric.healthEvent(this, msg));
      case Fabric.Fault:
        return this.guarded('fault', () => this.host.fabric.fault(this, msg));
      case Fabric.CircuitConfirmation:
        return this.guarded('circuit confirmation', () => this.host.fabric.confirm(this, msg));
      case LinkMsg.RouterLinks:
        return this.guarded('router links', () => this.host.mesh.reported(this.router!.id, parseRouterLinks(msg.body)));
      case LinkMsg.VerifyRouter:
        return this.detached('verify router', () => this.verifyRouter(msg));
      case ExtensionMsg.ExtendRequest:
        return this.detached('certificate extension', () => this.host.extensions.extend(this, msg));
      case ExtensionMsg.VerifyRequest:
        return this.detached('certificate extension verify', () => this.host.extensions.verify(this, msg));
      case LinkMsg.LinkState:
        // a link's connections changed: nothing Weft shows yet
        return;
      default:
        this.ignored.set(msg.contentType, (this.ignored.get(msg.contentType) ?? 0) + 1);
        this.host.log.debug({ router: this.router?.id, contentType: msg.contentType }, 'control channel: message type not served yet, ignored');
        return;
    }
  }

  /** A router accepting a link from another asks whether the dialer's certificate is that router's. */
  private async verifyRouter(msg: Message): Promise<void> {
    const { routerId, fingerprints } = parseVerifyRouter(msg.body);
    try {
      await verifyRouterFingerprints(this.host.core, routerId, fingerprints);
      this.channel.result(msg, true, 'router verified');
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) throw e;
      this.channel.result(msg, false, e.message);
    }
  }

  private async hello(msg: Message): Promise<void> {
    clearTimeout(this.helloTimer);
    if (msg.contentType !== ChannelType.Hello) return this.refuse(undefined, `expected a hello, got message type ${msg.contentType}`);
    // the decoder has held the headers to HELLO_MAX_PART already
    if (msg.body.length > HELLO_MAX_PART) return this.refuse(undefined, 'hello message too big');
    if (msg.headers.has(Header.Type)) return this.refuse(msg, 'controller peers (typed channels) are not supported');
    const version = getStr(msg.headers, Header.HelloVersion);
    if (!version) return this.refuse(msg, 'no version info header, not accepting router connection');
    if (version.split('|').length !== 5) return this.refuse(msg, 'could not parse version info from router hello');
    const routerId = msg.body.toString('utf8');
    let linkListeners: LinkListener[];
    try {
      linkListeners = parseListeners(msg.headers.get(CtrlHeader.Listeners));
    } catch {
      return this.refuse(msg, 'unable to parse the listeners header');
    }
    try {
      this.router = await this.host.authorize(routerId, this.socket.getPeerCertificate()?.raw);
    } catch (e) {
      const reason = e instanceof DataPlaneRefusal ? e.message : 'internal error';
      if (!(e instanceof DataPlaneRefusal)) this.host.log.error({ err: e }, 'control channel: hello check failed');
      return this.refuse(msg, reason);
    }
    if (this.channel.closed) return;
    this.version = version;
    this.accepted = true;
    this.channel.setLimits(LIMITS);
    // online (recorded) before the router hears it is accepted: whoever it tells next finds it online
    await this.host.connected(this);
    if (this.channel.closed) return;
    // what OpenZiti's channel listener answers (classic_listener.go ackHello): the controller's headers, a connection
    // id, the controller's id; the hello's sequence (-1) is the result's too
    this.channel.result(msg, true, '', [
      [Header.HelloVersion, str(this.host.versionHeader)],
      [CtrlHeader.Capabilities, this.host.capabilities],
      [Header.ConnectionId, str(newId(12))],
      [Header.Id, str(this.host.controllerId)],
    ]);
    this.host.log.info({ router: this.router.id, name: this.router.name, remote: this.remote, version }, 'control channel: router connected');
    // where the other routers accept links, and where this one does to them
    this.host.mesh.connected(this.router.id, version, linkListeners);
    this.detached('edge sync', async () => {
      await this.host.sync.hello(this);
      // as OpenZiti's controller, after the ClientHello
      this.host.apiSessions.connected(this);
    });
  }

  /**
   * Work that must not hold back the messages after it (a circuit waits for its route's result, which arrives on this
   * channel): run beside the queue, its failure logged. A malformed body is the router's error, not a crash.
   */
  private detached(what: string, work: () => Promise<void>): void {
    void this.guarded(what, work);
  }

  /** Work in the queue's order whose failure (a malformed body, a database away) is logged, the channel kept. */
  private async guarded(what: string, work: () => void | Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (!this.channel.closed) this.host.log.warn({ err, router: this.router?.id }, `control channel: ${what} failed`);
    }
  }

  /** A refused hello: a failed Result (what the router logs as the reason), then the connection ends. */
  private refuse(msg: Message | undefined, reason: string): void {
    this.host.log.warn({ remote: this.remote, reason }, 'control channel: router refused');
    if (msg) this.channel.result(msg, false, reason);
    this.channel.close(new Error(`refused: ${reason}`));
  }

  /** Sends a heartbeat (header 5, nanoseconds) and says whether the router answered one recently enough. */
  beat(): boolean {
    if (!this.accepted || this.channel.closed) return true;
    if (Date.now() - this.lastAnswer > this.host.unresponsiveMs) return false;
    this.heartbeats.sent++;
    this.channel.send(message(ChannelType.Heartbeat, [[Header.Heartbeat, u64(nowNanos())]]));
    return true;
  }

  private async closed(reason?: Error): Promise<void> {
    clearTimeout(this.helloTimer);
    if (this.accepted) this.host.log.info({ router: this.router?.id, reason: reason?.message }, 'control channel: router disconnected');
    await this.host.disconnected(this);
  }
}
