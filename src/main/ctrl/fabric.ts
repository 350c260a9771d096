// Terminators and circuits of stock routers. A Bind on a router becomes a terminator (CreateTerminatorV2, id = the
// router's terminator address, as OpenZiti's); a Dial becomes a circuit (CreateCircuitV2): the controller checks the
// SDK's API session, certificate, session and policies itself, picks a terminator, sends the router its Route
// (ingress and egress on the same router: no links between routers yet) and answers with the circuit's ingress
// address. Circuits end with an Unroute when their session, API session or terminator goes (revoked access closes
// them at once) or when the router reports a fault.
import { randomUUID } from 'node:crypto';
import {
  authorizeRouterRequest,
  changeRouterTerminators,
  circuitEventsOf,
  clearRouterTerminators,
  DataPlaneRefusal,
  missingRows,
  putRouterTerminator,
  removeRouterTerminator,
  terminatorChoices,
  watchDataPlane,
  type Core,
} from '../core/dataPlane/index';
import { getBool, getStr, message, type Message } from '../router/channel/wire';
import {
  createTerminatorV2Response,
  CtrlMsgHeader,
  DestType,
  EdgeCtrl,
  encodeStringMap,
  encodeU32BytesMap,
  Fabric,
  FaultSubject,
  parseCircuitConfirmation,
  parseCreateCircuitV2,
  parseCreateTerminatorV2,
  parseFault,
  parseHealthEvent,
  parseRemoveTerminator,
  parseRemoveTerminators,
  parseUpdateTerminator,
  route,
  TerminatorResult,
  unroute,
} from './edgeMessages';
import type { RouterControlChannel } from './routerChannel';

/** The edge's PublicKey header (edge_client_pb.HeaderId): a peer data key of the dialer's and the host's keys. */
const PUBLIC_KEY = 1003;

/** How long a router has to answer a Route (OpenZiti's default route timeout is 10 s). */
const ROUTE_TIMEOUT_MS = 10_000;

/** A circuit through a stock router, as the controller keeps it. */
export interface StockCircuit {
  id: string;
  routerId: string;
  sessionId: string;
  apiSessionId: string;
  identityId: string;
  serviceId: string;
  terminatorId: string;
  /** the terminator's instance id, its host's identity and cost (circuit events) */
  instanceId: string;
  hostId: string;
  cost: number;
  createdAt: number;
}

export class StockRouterFabric {
  readonly circuits = new Map<string, StockCircuit>();
  /**
   * terminator id -> the Bind session it was created with (its end removes the terminator) and the host's peer data
   * (its public key: the dialer's end-to-end encryption is set up with it, as OpenZiti's terminator peer data).
   * An entry leaves when its terminator's row does (the change feed's terminatorsDeleted), whoever deleted it.
   */
  private readonly terminatorSessions = new Map<string, { routerId: string; sessionId: string; hostId: string; peerData: Map<number, Buffer> }>();
  private unwatch?: () => void;

  constructor(
    private readonly core: () => Core,
    private readonly channelOf: (routerId: string) => RouterControlChannel | undefined,
    private readonly log: (err: unknown, what: string) => void,
  ) {}

  start(): void {
    this.unwatch = watchDataPlane(this.core(), {
      sessionsEnded: (ids) => this.sessionsEnded(ids),
      apiSessionsEnded: (ids) => {
        const gone = new Set(ids);
        this.endCircuits((c) => gone.has(c.apiSessionId));
      },
      terminatorsDeleted: (ids) => {
        const gone = new Set(ids);
        for (const id of ids) this.terminatorSessions.delete(id);
        this.endCircuits((c) => gone.has(c.terminatorId));
      },
      routersChanged: () => undefined,
      hostingMayHaveChanged: () => undefined,
      changesMissed: () => void this.recheck().catch((err) => this.log(err, 'circuit check')),
    });
  }

  stop(): void {
    this.unwatch?.();
  }

  // ---- terminators ----

  async createTerminator(ch: RouterControlChannel, msg: Message): Promise<void> {
    const req = parseCreateTerminatorV2(msg.body);
    const routerId = ch.router!.id;
    const answer = (result: number, text = '') =>
      ch.channel.reply(msg, message(EdgeCtrl.CreateTerminatorV2Response, [], createTerminatorV2Response(req.address, result, text)));
    if (!req.address) return void answer(TerminatorResult.Other, 'no terminator id given');
    try {
      const { caller, grant } = await authorizeRouterRequest(this.core(), routerId, req, 'Bind');
      await putRouterTerminator(this.core(), routerId, grant.serviceId, {
        id: req.address,
        instance: req.instanceId,
        hostId: caller.identityId,
        cost: req.cost,
        precedence: req.precedence,
      });
      this.terminatorSessions.set(req.address, { routerId, sessionId: grant.sessionId, hostId: caller.identityId, peerData: req.peerData });
      answer(TerminatorResult.Success);
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) this.log(e, 'create terminator');
      answer(e instanceof DataPlaneRefusal ? TerminatorResult.InvalidSession : TerminatorResult.Other, refusalText(e));
    }
  }

  async removeTerminator(ch: RouterControlChannel, msg: Message): Promise<void> {
    const { terminatorId } = parseRemoveTerminator(msg.body);
    await this.onOwnTerminator(ch, msg, EdgeCtrl.RemoveTerminatorResponse, () =>
      changeRouterTerminators(this.core(), ch.router!.id, [terminatorId], 'remove', true),
    );
  }

  /** A batch of the router's ended terminators (RemoveTerminatorsRequest): those of another router are left alone. */
  async removeTerminators(ch: RouterControlChannel, msg: Message): Promise<void> {
    const ids = parseRemoveTerminators(msg.body);
    try {
      await changeRouterTerminators(this.core(), ch.router!.id, ids, 'remove', false);
      ch.channel.result(msg, true);
    } catch (e) {
      this.log(e, 'remove terminators');
      ch.channel.result(msg, false, 'internal error');
    }
  }

  async updateTerminator(ch: RouterControlChannel, msg: Message): Promise<void> {
    const { terminatorId, cost, precedence } = parseUpdateTerminator(msg.body);
    const change = { ...(cost !== undefined ? { cost } : {}), ...(precedence ? { precedence } : {}) };
    await this.onOwnTerminator(ch, msg, EdgeCtrl.UpdateTerminatorResponse, () =>
      changeRouterTerminators(this.core(), ch.router!.id, [terminatorId], change, true),
    );
  }

  /** A host's health check: a failing terminator is chosen last (precedence failed), a passing one goes back to default. */
  async healthEvent(ch: RouterControlChannel, msg: Message): Promise<void> {
    const { terminatorId, passed } = parseHealthEvent(msg.body);
    await changeRouterTerminators(this.core(), ch.router!.id, [terminatorId], { precedence: passed ? 'default' : 'failed' }, false);
  }

  /** A change a router asks of one of its own terminators (OpenZiti's verifyTerminator: another router's is refused). */
  private async onOwnTerminator(ch: RouterControlChannel, msg: Message, okType: number, change: () => Promise<void>): Promise<void> {
    try {
      await change();
      ch.channel.reply(msg, message(okType));
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) this.log(e, 'terminator change');
      ch.channel.reply(msg, message(EdgeCtrl.Error, [], refusalText(e)));
    }
  }

  // ---- circuits ----

  async createCircuit(ch: RouterControlChannel, msg: Message): Promise<void> {
    const routerId = ch.router!.id;
    let req: ReturnType<typeof parseCreateCircuitV2>;
    try {
      req = parseCreateCircuitV2(msg.headers);
    } catch (e) {
      return void ch.channel.result(msg, false, `invalid create circuit request: ${(e as Error).message}`);
    }
    try {
      if (!req.sessionToken) throw new DataPlaneRefusal('no session token provided in create circuit request');
      const { caller, grant } = await authorizeRouterRequest(this.core(), routerId, req, 'Dial');
      if (grant.encryptionRequired && !req.peerData.has(PUBLIC_KEY)) {
        throw new DataPlaneRefusal('encryption required on service, initiator did not send public header');
      }
      const choices = await terminatorChoices(this.core(), grant.serviceId, req.instanceId);
      if (choices.length === 0) throw new DataPlaneRefusal(`service ${grant.serviceName} has no terminators`);
      // without links between routers a circuit starts and ends on the same router
      const terminator = choices.find((t) => t.routerId === routerId);
      if (!terminator)
        throw new DataPlaneRefusal(`service ${grant.serviceName} has no terminators on this router (circuits across routers are not supported yet)`);
      const circuitId = randomUUID();
      const ingress = randomUUID();
      const egress = randomUUID();
      const tags = { clientId: caller.identityId, serviceId: grant.serviceId };
      const routeMsg = message(
        Fabric.Route,
        [],
        route({
          circuitId,
          attempt: 0,
          egress: { binding: terminator.binding, address: egress, destination: terminator.address, peerData: req.peerData },
          forwards: [
            { src: ingress, dst: egress, type: DestType.End },
            { src: egress, dst: ingress, type: DestType.Start },
          ],
          timeoutNs: BigInt(ROUTE_TIMEOUT_MS) * 1_000_000n,
          tags,
        }),
      );
      const circuit: StockCircuit = {
        id: circuitId,
        routerId,
        sessionId: grant.sessionId,
        apiSessionId: caller.apiSessionId,
        identityId: caller.identityId,
        serviceId: grant.serviceId,
        terminatorId: terminator.id,
        instanceId: terminator.identity,
        hostId: this.terminatorSessions.get(terminator.id)?.hostId ?? '',
        cost: terminator.cost,
        createdAt: Date.now(),
      };
      // known before the route is sent: a revocation while it is under way unroutes it
      this.circuits.set(circuitId, circuit);
      const result = await ch.channel.request(routeMsg, ROUTE_TIMEOUT_MS + 1_000).catch((e: Error) => {
        this.circuits.delete(circuitId);
        throw e;
      });
      if (result.contentType !== Fabric.RouteResult || !getBool(result.headers, CtrlMsgHeader.RouteResultSuccess)) {
        this.circuits.delete(circuitId);
        this.report('failed', circuit, ROUTE_FAILURES[result.headers.get(CtrlMsgHeader.RouteResultErrorCode)?.[0] ?? 0] ?? 'ROUTER_ERR_GENERIC');
        throw new DataPlaneRefusal(getStr(result.headers, CtrlMsgHeader.RouteResultError) || 'the router could not route the circuit');
      }
      if (!this.circuits.has(circuitId)) throw new DataPlaneRefusal('access ended while the circuit was being routed');
      // the terminator's static peer data (the host's public key), then what the route's egress reported
      const peerData = new Map([...(this.terminatorSessions.get(terminator.id)?.peerData ?? []), ...peerDataOf(result)]);
      if (grant.encryptionRequired && !peerData.has(PUBLIC_KEY)) {
        this.endCircuits((c) => c.id === circuitId);
        throw new DataPlaneRefusal('encryption required on service, terminator did not send public header');
      }
      ch.channel.reply(
        msg,
        message(EdgeCtrl.CreateCircuitV2Response, [
          [CtrlMsgHeader.RespCircuitId, Buffer.from(circuitId)],
          [CtrlMsgHeader.RespAddress, Buffer.from(ingress)],
          [CtrlMsgHeader.PeerData, encodeU32BytesMap(peerData)],
          [CtrlMsgHeader.RespTags, encodeStringMap(tags)],
        ]),
      );
      this.report('created', circuit);
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) this.log(e, 'create circuit');
      ch.channel.result(msg, false, refusalText(e));
    }
  }

  /** A router's fault: an ingress or egress fault names a circuit that broke there; it ends. */
  fault(ch: RouterControlChannel, msg: Message): void {
    const { subject, id } = parseFault(msg.body);
    const c = this.circuits.get(id);
    if (!c || c.routerId !== ch.router!.id) return;
    if (subject === FaultSubject.IngressFault || subject === FaultSubject.EgressFault || subject === FaultSubject.ForwardFault)
      this.endCircuits((x) => x.id === id);
  }

  /** The router's list of circuits it still forwards: those the controller no longer has are unrouted. */
  confirm(ch: RouterControlChannel, msg: Message): void {
    for (const id of parseCircuitConfirmation(msg.body)) if (!this.circuits.has(id)) this.send(ch, id);
  }

  /** A router's control channel went: its circuits are gone with it, its SDKs' terminators too (they bind again). */
  async routerGone(routerId: string): Promise<void> {
    for (const [id, c] of this.circuits) if (c.routerId === routerId) this.circuits.delete(id);
    for (const [id, t] of this.terminatorSessions) if (t.routerId === routerId) this.terminatorSessions.delete(id);
    await clearRouterTerminators(this.core(), routerId);
  }

  /** Circuits of the router, for the live view and the fabric API. */
  circuitsOf(routerId: string): StockCircuit[] {
    return [...this.circuits.values()].filter((c) => c.routerId === routerId);
  }

  private sessionsEnded(ids: string[]): void {
    const gone = new Set(ids);
    this.endCircuits((c) => gone.has(c.sessionId));
    for (const [id, t] of this.terminatorSessions) {
      if (!gone.has(t.sessionId)) continue;
      this.terminatorSessions.delete(id);
      void removeRouterTerminator(this.core(), id).catch((err) => this.log(err, 'remove terminator'));
    }
  }

  /** After changes may have gone untold: circuits whose session is gone end. */
  private async recheck(): Promise<void> {
    const gone = await missingRows(this.core(), 'sessions', [...new Set([...this.circuits.values()].map((c) => c.sessionId))]);
    this.endCircuits((c) => gone.has(c.sessionId));
  }

  /** Ends circuits: forgotten here, unrouted on their router (which closes the SDKs' connections). */
  endCircuits(which: (c: StockCircuit) => boolean): void {
    for (const c of [...this.circuits.values()]) {
      if (!which(c)) continue;
      this.circuits.delete(c.id);
      this.report('deleted', c);
      const ch = this.channelOf(c.routerId);
      if (ch) this.send(ch, c.id);
    }
  }

  /** OpenZiti's circuit events (created, deleted, failed), as the built-in router's circuits report them. */
  private report(eventType: 'created' | 'deleted' | 'failed', c: StockCircuit, failureCause?: string): void {
    circuitEventsOf(this.core()).report({
      eventType,
      circuitId: c.id,
      sessionId: c.sessionId,
      serviceId: c.serviceId,
      terminatorId: c.terminatorId,
      instanceId: c.instanceId,
      routerId: c.routerId,
      clientIdentityId: c.identityId,
      hostId: c.hostId,
      elapsedMs: Date.now() - c.createdAt,
      ...(eventType !== 'deleted' && { cost: c.cost }),
      ...(failureCause && { failureCause }),
    });
  }

  private send(ch: RouterControlChannel, circuitId: string): void {
    ch.channel.send(message(Fabric.Unroute, [], unroute(circuitId, true)));
  }
}

/** OpenZiti's failure causes for a route result's error code (ctrl_msg ErrorType*). */
const ROUTE_FAILURES: Record<number, string> = {
  0: 'ROUTER_ERR_GENERIC',
  1: 'ROUTER_ERR_INVALID_TERMINATOR',
  2: 'ROUTER_ERR_MISCONFIGURED_TERMINATOR',
  3: 'ROUTER_ERR_DIAL_TIMED_OUT',
  4: 'ROUTER_ERR_CONN_REFUSED',
};

/** The terminator's side's peer data in a route result (its headers beyond the channel's and the result's own). */
function peerDataOf(result: Message): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  for (const [k, v] of result.headers) {
    if (k < 256 || (k >= CtrlMsgHeader.RouteResultAttempt && k <= CtrlMsgHeader.RouteResultErrorCode)) continue;
    if (k >= CtrlMsgHeader.TerminatorLocalAddress && k <= CtrlMsgHeader.InitiatorRemoteAddress) continue;
    out.set(k, v);
  }
  return out;
}

const refusalText = (e: unknown): string => (e instanceof DataPlaneRefusal ? e.message : 'internal error');
