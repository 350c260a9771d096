import type { TLSSocket } from 'node:tls';
import {
  authorizeServiceSession,
  authorizeTokenUpdate,
  checkSessionPosture,
  DataPlaneRefusal,
  newId,
  type ChannelCaller,
  type SessionGrant,
} from '../core/dataPlane/index';
import { SerialQueue } from '../core/serialQueue';
import { Channel } from './channel/channel';
import {
  bool,
  ChannelType,
  EdgeType,
  findHeader,
  getByte,
  getStr,
  getU16,
  getU32,
  Header,
  HELLO_LIMITS,
  HELLO_MAX_PART,
  message,
  PRECEDENCES,
  str,
  u32,
  type FrameLimits,
  type Message,
} from './channel/wire';
import type { Circuit, CircuitDial } from './circuit';
import { dialHost } from './hostDial';
import { terminatorRank, type BindingConnection, type ConnectionRouter, type SdkTerminator } from './types';

/** SDKs send each write as one Data frame, however large (io.Copy: 32 KiB; a single 10 MB write: 10 MB). */
export const MAX_FRAME = 64 * 1024 * 1024;
/** After the hello: bodies may be large, headers (conn ids, tokens, keys) never are. */
const LIMITS: FrameLimits = { maxHeaders: 64 * 1024, maxFrame: MAX_FRAME };
const HELLO_TIMEOUT_MS = 15_000;
/** Conn ids the router hands out for incoming dials start in the upper half (SDKs use the lower half). */
const ROUTER_CONN_IDS = 0x80000000;

/**
 * Where a connection's frames go: the hello's handlers until it is accepted, then the edge protocol's. `release`: the
 * frame's handling lets the frames after it go ahead, the rest of it running out of turn (see the frame queue).
 */
interface FrameHandlers {
  onData(frame: Buffer): void | Promise<void>;
  onMessage(msg: Message, release: () => void): void | Promise<void>;
}

/**
 * One SDK's TLS connection to the router: the hello (API session token + client certificate, checked by the
 * core), then Connect (dial), Bind/Unbind/UpdateBind, Data and StateClosed multiplexed by edge conn id.
 */
export class EdgeConnection implements BindingConnection {
  readonly channel: Channel;
  caller?: ChannelCaller;
  /** edge conn id -> the circuit it belongs to and which side it is */
  private readonly endpoints = new Map<number, { circuit: Circuit; side: 'dialer' | 'host' }>();
  /** bind conn id -> terminator id */
  readonly binds = new Map<number, string>();
  private nextConnId = ROUTER_CONN_IDS;
  private readonly helloTimer: NodeJS.Timeout;
  private frames: FrameHandlers;
  /**
   * Frames are handled one after another, in the order they arrived: one whose handling waits for the core (a hello,
   * dial or bind being authorized, a terminator being recorded) holds back those after it on this connection; with
   * nothing under way a frame is handled at once. A Connect lets the frames after it go once the host has been asked
   * (`release`). The close takes its turn too: its clean-up comes after whatever arrived before it. A handling that
   * fails ends the connection (see handlingFailed).
   */
  private readonly queue = new SerialQueue((e) => this.handlingFailed(e));
  /** what closed the channel (an error), once it is closed */
  private closeReason?: Error;

  constructor(
    private readonly router: ConnectionRouter,
    readonly socket: TLSSocket,
  ) {
    this.frames = {
      onData: () => this.end(new Error('data before hello')),
      onMessage: (msg) => this.hello(msg),
    };
    this.channel = new Channel(socket, HELLO_LIMITS, {
      onData: (frame) => this.queue.push(() => this.frames.onData(frame)),
      onMessage: (msg) => this.queue.push((release) => this.frames.onMessage(msg, release)),
      onClose: (reason) => {
        this.closeReason = reason;
        this.queue.push(() => this.closed(reason));
      },
    });
    this.helloTimer = setTimeout(() => this.channel.close(new Error('no hello in time')), HELLO_TIMEOUT_MS);
    // No channel frame keeps the link alive: OpenZiti's router sends SDKs none (the C SDK cannot take a zero-length
    // Ping; SDKs probe latency themselves, the C SDK once a minute). A peer that vanished is found by TCP keepalive.
    socket.setKeepAlive(true, router.keepAliveMs);
  }

  get remote(): string {
    return `${this.socket.remoteAddress}:${this.socket.remotePort}`;
  }

  /** A frame's handling failed: as when a handler threw, the connection ends with the error (closed() logs it). */
  private handlingFailed(e: unknown): void {
    if (this.channel.closed) this.router.log.error({ err: e }, 'edge router: connection clean-up failed');
    else this.end(e as Error);
  }

  /**
   * A frame's handler ends the connection: the frames after it are dropped (as a closed channel drops those it
   * receives), the close's clean-up still runs after it. The channel's close gives the clean-up to the queue; when
   * the channel had closed already (the peer went while this frame was handled), the clean-up given then was dropped
   * with the frames and is given again.
   */
  private end(reason: Error): void {
    this.queue.cancel();
    if (!this.channel.closed) return this.channel.close(reason);
    const closedBy = this.closeReason;
    this.queue.push(() => this.closed(closedBy));
  }

  /** Resolves once the frames that arrived so far, and the clean-up after a close, have been handled. */
  settled(): Promise<void> {
    return this.queue.settled();
  }

  private async hello(msg: Message): Promise<void> {
    clearTimeout(this.helloTimer);
    if (msg.contentType !== ChannelType.Hello) return this.end(new Error(`expected a hello, got message type ${msg.contentType}`));
    // the decoder has held the headers to HELLO_MAX_PART already
    if (msg.body.length > HELLO_MAX_PART) return this.end(new Error('hello message too big'));
    try {
      const token = getStr(msg.headers, Header.SessionToken) ?? '';
      const certDer = this.socket.getPeerCertificate()?.raw;
      const { result: caller, ended } = await this.router.noteEnded(() => this.router.authorizeHello(token, certDer));
      // the API session ended while it was being checked: as if it had ended before
      if (ended.has(caller.apiSessionId)) throw new DataPlaneRefusal('invalid or expired API session');
      this.caller = caller;
    } catch (e) {
      const reason = e instanceof DataPlaneRefusal ? e.message : 'internal error';
      if (!(e instanceof DataPlaneRefusal)) this.router.log.error({ err: e }, 'edge router: hello check failed');
      this.channel.result(msg, false, reason);
      return this.end(new Error(`refused: ${reason}`));
    }
    this.channel.setLimits(LIMITS);
    this.frames = {
      onData: (frame) => this.data(frame),
      onMessage: (m, release) => this.message(m, release),
    };
    // No SupportsBindSuccess: the terminator exists before a Bind is answered, so the answer is the confirmation.
    // With BindSuccess, the Go SDK (v1.2) may count its listeners before it has registered the new one and its
    // `WaitForNEstablishedListeners` then waits for an event that never comes.
    this.channel.result(msg, true, '', [
      [Header.ConnectionId, str(newId(8))],
      [Header.Id, str(this.router.id)],
      [Header.HelloVersion, str(this.router.versionHeader)],
    ]);
    this.router.log.debug({ remote: this.remote, identity: this.caller.identityName }, 'edge router: connection accepted');
  }

  private data(frame: Buffer): void {
    const at = findHeader(frame, Header.ConnId);
    if (!at || at.length !== 4) return;
    const endpoint = this.endpoints.get(frame.readUInt32LE(at.offset));
    endpoint?.circuit.relay(endpoint.side, frame);
  }

  private message(msg: Message, release: () => void): void | Promise<void> {
    switch (msg.contentType) {
      case ChannelType.Latency:
      case ChannelType.Ping:
        this.channel.result(msg, true);
        return;
      case EdgeType.Connect:
        // in turn until the host has been asked; its answer is awaited out of turn (a slow host holds up no other frame)
        return this.connect(msg, release).catch((e) => this.internalError(msg, e));
      case EdgeType.Bind:
        return this.bind(msg).catch((e) => this.internalError(msg, e));
      case EdgeType.Unbind:
        return this.unbind(getU32(msg.headers, Header.ConnId), msg.body);
      case EdgeType.UpdateBind:
        return this.updateBind(msg);
      case EdgeType.HealthEvent:
        return this.health(msg);
      case EdgeType.UpdateToken:
        return this.updateToken(msg);
      case EdgeType.StateClosed: {
        const connId = getU32(msg.headers, Header.ConnId);
        if (connId === undefined) return;
        const endpoint = this.endpoints.get(connId);
        if (endpoint) return endpoint.circuit.close('closed by the peer', endpoint.side);
        if (this.binds.has(connId)) return this.unbind(connId);
        return;
      }
      default:
        // replies that came too late, inspect answers, trace routes, xgress frames: nothing to do
        return;
    }
  }

  private internalError(msg: Message, e: unknown): void {
    this.router.log.error({ err: e }, 'edge router: request failed');
    this.refuse(msg, 'internal error in the router');
  }

  /** A failed Connect or Bind: StateClosed as the reply, with the reason. */
  private refuse(msg: Message, reason: string): void {
    const connId = msg.headers.get(Header.ConnId);
    this.channel.reply(msg, message(EdgeType.StateClosed, connId ? [[Header.ConnId, connId]] : [], str(reason)));
  }

  private async grant(msg: Message, type: 'Dial' | 'Bind'): Promise<SessionGrant | undefined> {
    try {
      const grant = await authorizeServiceSession(this.router.core, this.caller!, msg.body.toString('utf8'), type);
      // posture is checked again at each dial and bind (failing sessions are deleted: see checkSessionPosture)
      await checkSessionPosture(this.router.core, this.caller!, grant);
      return grant;
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) throw e;
      this.refuse(msg, e.message);
      return undefined;
    }
  }

  /**
   * A dial: pick a terminator, ask its host, and answer StateConnected (or StateClosed) to the dialer. `release`:
   * the host has been asked (what follows waits for its answer, not the frames after this one).
   */
  private async connect(msg: Message, release: () => void): Promise<void> {
    const connId = getU32(msg.headers, Header.ConnId);
    if (connId === undefined) return this.refuse(msg, 'connId not set, required');
    if (this.endpoints.has(connId)) return this.refuse(msg, `conn id ${connId} is in use`);
    const { result: grant, ended } = await this.router.noteEnded(() => this.grant(msg, 'Dial'));
    if (!grant) return;
    // the session ended while it was being checked: as if it had ended before
    if (ended.has(grant.sessionId)) return this.refuse(msg, 'the session no longer exists');
    const instance = getStr(msg.headers, Header.TerminatorIdentity) ?? '';
    const started = Date.now();
    let terminator = this.router.pickTerminator(grant.serviceId, instance);
    // linked with other routers, one of their terminators may be the better choice (precedence, then cost with the
    // path's, as the controller picks for a stock router); else the best one here, picked again after the question
    if (terminator && this.router.links.routable) {
      const remote = await this.router.links.preferRemote(grant.serviceId, instance, { rank: terminatorRank(terminator), cost: terminator.cost });
      terminator = remote ? undefined : this.router.pickTerminator(grant.serviceId, instance);
    }
    const info: CircuitDial = {
      serviceId: grant.serviceId,
      serviceName: grant.serviceName,
      terminatorId: terminator?.id ?? '',
      sessionId: grant.sessionId,
      caller: this.caller!.identityName,
      callerId: this.caller!.identityId,
      hostId: terminator ? (terminator.kind === 'sdk' ? (terminator.conn.caller?.identityId ?? '') : this.router.id) : '',
      instanceId: instance,
      cost: terminator?.cost ?? 0,
    };
    // none here: with the router in the stock routers' mesh, the controller may route it to one at another router
    // (and reports the circuit's events itself)
    const overLink = !terminator && this.router.links.routable;
    if (!terminator && !overLink) {
      this.router.reportCircuit('failed', newId(), info, Date.now() - started, 'NO_TERMINATORS');
      return this.refuse(msg, `service ${grant.serviceName} has no terminators${instance ? ` for instance ${instance}` : ''}`);
    }
    const circuit = this.router.newCircuit(info, { kind: 'sdk', conn: this, connId });
    this.endpoints.set(connId, { circuit, side: 'dialer' });
    const fail = (reason: string, cause: string) => {
      if (circuit.closed) return;
      if (!overLink) this.router.reportCircuit('failed', circuit.id, info, Date.now() - started, cause);
      this.endpoints.delete(connId);
      circuit.close(reason, 'dialer');
      this.refuse(msg, reason);
    };
    if (overLink) release();
    const dialed = terminator
      ? await dialHost(terminator, circuit, getStr(msg.headers, Header.CallerId) ?? this.caller!.identityName, msg.headers, release)
      : await this.router.links.dial(circuit, { caller: this.caller!, grant, instanceId: instance }, msg.headers);
    if ('failure' in dialed) return fail(dialed.failure, dialed.cause);
    const hostKey = dialed.hostKey;
    if (circuit.closed) return; // the dialer gave up, or the session ended meanwhile
    this.channel.reply(
      msg,
      message(EdgeType.StateConnected, [
        [Header.ConnId, u32(connId)],
        [Header.CircuitId, str(circuit.id)],
        ...(hostKey ? [[Header.PublicKey, hostKey] as [number, Buffer]] : []),
      ]),
    );
    circuit.open();
    if (!overLink) this.router.reportCircuit('created', circuit.id, info, Date.now() - started);
  }

  /** A host binds a service: a terminator on this router, then the StateConnected answer (see the hello: no BindSuccess). */
  private async bind(msg: Message): Promise<void> {
    const connId = getU32(msg.headers, Header.ConnId);
    if (connId === undefined) return this.refuse(msg, 'connId not set, required');
    // a session that ends meanwhile finds no terminator of this bind yet: its end is carried out here, once there is one
    const { result: bound, ended } = await this.router.noteEnded(() => this.addBind(msg, connId));
    if (!bound) return;
    if (ended.has(bound.terminatorId)) {
      // deleted elsewhere (an admin, its service) before the router held it: its SDK binds again, as for any such delete
      await this.router.removeTerminator(bound.terminatorId, true);
    } else if (ended.has(bound.sessionId)) {
      this.dropBind(connId, 'the session ended');
      await this.router.removeTerminator(bound.terminatorId, false);
    }
  }

  private async addBind(msg: Message, connId: number): Promise<{ sessionId: string; terminatorId: string } | undefined> {
    const grant = await this.grant(msg, 'Bind');
    if (!grant) return;
    const precedence = PRECEDENCES[getByte(msg.headers, Header.Precedence) ?? 0];
    if (!precedence) return void this.refuse(msg, 'invalid precedence');
    const term: Omit<SdkTerminator, 'id'> = {
      kind: 'sdk',
      serviceId: grant.serviceId,
      sessionId: grant.sessionId,
      conn: this,
      bindConnId: connId,
      token: Buffer.from(msg.body),
      publicKey: msg.headers.get(Header.PublicKey) ? Buffer.from(msg.headers.get(Header.PublicKey)!) : undefined,
      listenerId: getStr(msg.headers, Header.ListenerId),
      identity: getStr(msg.headers, Header.TerminatorIdentity) ?? '',
      cost: getU16(msg.headers, Header.Cost) ?? 0,
      precedence,
      healthy: true,
    };
    const previous = this.binds.get(connId);
    if (previous) await this.router.removeTerminator(previous, false);
    const id = await this.router.addSdkTerminator(term, this.caller!.identityId);
    this.binds.set(connId, id);
    const replyHeaders: Array<[number, Buffer]> = [[Header.ConnId, u32(connId)]];
    if (msg.headers.has(Header.RouterProvidedConnId)) replyHeaders.push([Header.RouterProvidedConnId, bool(true)]);
    this.channel.reply(msg, message(EdgeType.StateConnected, replyHeaders));
    return { sessionId: grant.sessionId, terminatorId: id };
  }

  private async unbind(connId: number | undefined, token?: Buffer): Promise<void> {
    if (connId === undefined) return;
    const id = this.binds.get(connId);
    if (!id) return;
    const term = this.router.terminator(id);
    if (token?.length && term?.kind === 'sdk' && !term.token.equals(token)) return;
    this.binds.delete(connId);
    await this.router.removeTerminator(id, false);
  }

  private async updateBind(msg: Message): Promise<void> {
    const id = this.binds.get(getU32(msg.headers, Header.ConnId) ?? -1);
    if (!id) return;
    const precedenceByte = getByte(msg.headers, Header.Precedence);
    await this.router.updateTerminator(id, {
      cost: getU16(msg.headers, Header.Cost),
      precedence: precedenceByte === undefined ? undefined : PRECEDENCES[precedenceByte],
    });
  }

  /** A host's health check result: failing terminators are chosen last. */
  /**
   * An SDK of an OIDC session sends each refreshed access token (OpenZiti's UpdateToken): UpdateTokenSuccess, or
   * UpdateTokenFailure with the reason as the body.
   */
  private async updateToken(msg: Message): Promise<void> {
    try {
      await authorizeTokenUpdate(this.router.core, this.caller!, msg.body.toString('utf8'));
      this.channel.reply(msg, message(EdgeType.UpdateTokenSuccess, [], ''));
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) this.router.log.error({ err: e }, 'edge router: token update failed');
      this.channel.reply(msg, message(EdgeType.UpdateTokenFailure, [], str(e instanceof DataPlaneRefusal ? e.message : 'internal error')));
    }
  }

  private health(msg: Message): void {
    const id = this.binds.get(getU32(msg.headers, Header.ConnId) ?? -1);
    const term = id ? this.router.terminator(id) : undefined;
    if (term?.kind === 'sdk') term.healthy = msg.headers.get(Header.HealthStatus)?.[0] === 1;
  }

  /** An incoming dial: a conn id of this connection, unused, becomes the host side of `circuit`. */
  acceptCircuit(circuit: Circuit): number {
    do {
      this.nextConnId = this.nextConnId >= 0xfffffffe ? ROUTER_CONN_IDS : this.nextConnId + 1;
    } while (this.endpoints.has(this.nextConnId));
    this.endpoints.set(this.nextConnId, { circuit, side: 'host' });
    return this.nextConnId;
  }

  /** A circuit has let go of one of this connection's conn ids. */
  forget(connId: number): void {
    this.endpoints.delete(connId);
  }

  /** Ends what depends on a terminator of this connection without touching the terminator itself. */
  dropBind(connId: number, reason: string): void {
    if (!this.binds.delete(connId)) return;
    this.channel.send(message(EdgeType.StateClosed, [[Header.ConnId, u32(connId)]], str(reason)));
  }

  private async closed(reason?: Error): Promise<void> {
    clearTimeout(this.helloTimer);
    if (reason && !/ECONNRESET|EPIPE|socket hang up/.test(reason.message)) {
      this.router.log.info({ remote: this.remote, identity: this.caller?.identityName, reason: reason.message }, 'edge router: connection closed');
    }
    for (const { circuit, side } of [...this.endpoints.values()]) circuit.close('the connection to the router closed', side);
    this.endpoints.clear();
    const removing = this.router.removeTerminators([...this.binds.values()], false);
    this.binds.clear();
    this.router.connectionClosed(this);
    await removing;
  }
}
