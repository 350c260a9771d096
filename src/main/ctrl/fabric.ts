// Terminators and circuits of stock routers. A Bind on a router becomes a terminator (CreateTerminatorV2, id = the
// router's terminator address, as OpenZiti's); a Dial becomes a circuit (CreateCircuitV2): the controller checks the
// SDK's API session, certificate, session and policies itself, picks a terminator by precedence and cost plus the
// cost of the path to its router (links between routers: links.ts), sends every router on the path its Route and
// answers with the circuit's ingress address. Circuits end with an Unroute to every router on their path when their
// session, API session, terminator, a link or a router of the path goes (revoked access closes them at once) or when a
// router reports a fault.
import { randomUUID } from 'node:crypto';
import {
  authorizeRouterRequest,
  authorizeRouterTunnel,
  changeRouterTerminators,
  circuitEventsOf,
  clearRouterTerminators,
  removeTerminatorsOfSessions,
  removeTerminatorsWithoutSession,
  routerIsOnline,
  DataPlaneRefusal,
  missingRows,
  putRouterTerminator,
  removeRouterTerminator,
  PRECEDENCE_RANK,
  terminatorChoices,
  tunnelTerminatorsOf,
  watchDataPlane,
  type Core,
  type ChannelCaller,
  type SessionGrant,
  type TerminatorChoice,
} from '../core/dataPlane/index';
import { bool, getBool, getStr, message, str, type Message } from '../router/channel/wire';
import {
  createTerminatorV2Response,
  createTunnelCircuitV2Response,
  createTunnelTerminatorV2Response,
  CtrlMsgHeader,
  DestType,
  RouteErrorCode,
  EdgeCtrl,
  encodeStringMap,
  encodeU32BytesMap,
  Fabric,
  FaultSubject,
  parseCircuitConfirmation,
  parseCreateCircuitV2,
  parseCreateTerminatorV2,
  parseCreateTunnelCircuitV2,
  parseCreateTunnelTerminatorV2,
  parseFault,
  parseHealthEvent,
  parseRemoveTerminator,
  parseRemoveTerminators,
  parseTunnelHealthEvent,
  parseUpdateTerminator,
  parseUpdateTunnelTerminator,
  route,
  TerminatorResult,
  type RouteSpec,
  unroute,
} from './edgeMessages';
import type { LinkMesh, RouterPath } from './links';
import type { LinkDialRequest, LocalRoute, LocalRouteResult } from '../router/link/linkCircuits';
import { ProtoError } from './protobuf';
import type { RouterControlChannel } from './routerChannel';

/** The edge's PublicKey header (edge_client_pb.HeaderId): a peer data key of the dialer's and the host's keys. */
const PUBLIC_KEY = 1003;

/** How long a router has to answer a Route (OpenZiti's default route timeout is 10 s). */
const ROUTE_TIMEOUT_MS = 10_000;

/** A circuit through a stock router, as the controller keeps it. */
export interface StockCircuit {
  id: string;
  /** the ingress router (where the dialing SDK is) */
  routerId: string;
  /** the routers of its path, ingress first, and the links between them */
  path: string[];
  links: string[];
  /** what its routes were built from: the ingress address, the egress (the terminator) and the tags */
  route: RouteParts;
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
  private unwatch?: () => void;
  private readonly tunnelCheck = { running: false, again: false };
  /** the built-in router, while it takes part in the mesh (see attachBuiltin) */
  private builtin?: BuiltinRouterPeer;

  constructor(
    private readonly core: () => Core,
    private readonly channelOf: (routerId: string) => RouterControlChannel | undefined,
    private readonly mesh: LinkMesh,
    private readonly connectedRouters: () => string[],
    private readonly log: (err: unknown, what: string) => void,
  ) {}

  /**
   * A dial at the built-in router (already authorized by it) for a service it holds no terminator of: a terminator at a
   * stock router reachable over a link, every router of the path routed as for a dial at a stock router.
   */
  async routeFromBuiltin(req: LinkDialRequest): Promise<{ peerData: Map<number, Buffer> } | { failure: string }> {
    const peer = this.builtin;
    if (!peer) return { failure: 'the built-in router is not linked with other routers' };
    try {
      const c = await this.routeCircuit(peer.id, undefined, req, req.instanceId, req.peerData, req);
      return { peerData: c.peerData };
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) this.log(e, 'route a circuit from the built-in router');
      return { failure: refusalText(e) };
    }
  }

  /**
   * Whether a terminator at another router, reachable from the built-in router, beats its own best one (precedence
   * rank, then cost plus the path's cost: the choice `pick` makes for a dial at a stock router).
   */
  async remoteBeats(serviceId: string, instanceId: string, local: { rank: number; cost: number }): Promise<boolean> {
    const peer = this.builtin;
    if (!peer) return false;
    const choices = (await terminatorChoices(this.core(), serviceId, instanceId)).filter((t) => t.routerId !== peer.id);
    const picked = this.pick(peer.id, choices);
    if (!picked) return false;
    const rank = PRECEDENCE_RANK[picked.terminator.precedence];
    return rank < local.rank || (rank === local.rank && picked.terminator.cost + picked.path.cost < local.cost);
  }

  /** The built-in router routes circuits over its links from now on (or, with undefined, no more). */
  attachBuiltin(peer: BuiltinRouterPeer | undefined): void {
    if (this.builtin && this.builtin !== peer) this.endCircuits((c) => c.path.includes(this.builtin!.id));
    this.builtin = peer;
  }

  start(): void {
    this.unwatch = watchDataPlane(this.core(), {
      sessionsEnded: (ids) => this.sessionsEnded(ids),
      apiSessionsEnded: (ids) => {
        const gone = new Set(ids);
        this.endCircuits((c) => gone.has(c.apiSessionId));
      },
      terminatorsDeleted: (ids) => {
        const gone = new Set(ids);
        this.endCircuits((c) => gone.has(c.terminatorId));
      },
      routersChanged: () => this.tunnelAccessMayHaveChanged(),
      hostingMayHaveChanged: () => this.tunnelAccessMayHaveChanged(),
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
        bind: { sessionId: grant.sessionId, peerData: req.peerData },
      });
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

  /**
   * A tunneler-enabled router hosting a service itself (host.v1, its tunnel binding): a terminator of binding `tunnel`
   * whose host is the router's own identity, which must hold a Bind policy for the service.
   */
  async createTunnelTerminator(ch: RouterControlChannel, msg: Message): Promise<void> {
    const routerId = ch.router!.id;
    let req: ReturnType<typeof parseCreateTunnelTerminatorV2>;
    try {
      req = parseCreateTunnelTerminatorV2(msg.body);
    } catch (e) {
      return void ch.channel.reply(msg, message(EdgeCtrl.Error, [], `invalid request: ${(e as Error).message}`));
    }
    const answer = (result: number, text = '') =>
      ch.channel.reply(
        msg,
        message(EdgeCtrl.CreateTunnelTerminatorResponseV2, [], createTunnelTerminatorV2Response(req.address, req.startTime, result, text)),
      );
    if (!req.address) return void answer(TerminatorResult.Other, 'no terminator id given');
    if (req.cost > 0xffff) return void answer(TerminatorResult.Other, `invalid cost ${req.cost}. cost must be between 0 and 65535 inclusive`);
    try {
      const { grant } = await authorizeRouterTunnel(this.core(), routerId, { id: req.serviceId }, 'Bind');
      await putRouterTerminator(this.core(), routerId, grant.serviceId, {
        id: req.address,
        instance: req.instanceId,
        hostId: routerId,
        cost: req.cost,
        precedence: req.precedence,
        binding: 'tunnel',
      });
      answer(TerminatorResult.Success);
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) this.log(e, 'create tunnel terminator');
      answer(TerminatorResult.Other, refusalText(e));
    }
  }

  async updateTunnelTerminator(ch: RouterControlChannel, msg: Message): Promise<void> {
    const { terminatorId, cost, precedence } = parseUpdateTunnelTerminator(msg.body);
    const change = { ...(cost !== undefined ? { cost } : {}), ...(precedence ? { precedence } : {}) };
    await this.onOwnTerminator(ch, msg, EdgeCtrl.UpdateTunnelTerminatorResponse, () =>
      changeRouterTerminators(this.core(), ch.router!.id, [terminatorId], change, true),
    );
  }

  async tunnelHealthEvent(ch: RouterControlChannel, msg: Message): Promise<void> {
    const { terminatorId, passed } = parseTunnelHealthEvent(msg.headers);
    await changeRouterTerminators(this.core(), ch.router!.id, [terminatorId], { precedence: passed ? 'default' : 'failed' }, false);
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
      const access = await authorizeRouterRequest(this.core(), routerId, req, 'Dial');
      const c = await this.routeCircuit(ch.router!.id, ch, access, req.instanceId, req.peerData);
      ch.channel.reply(
        msg,
        message(EdgeCtrl.CreateCircuitV2Response, [
          [CtrlMsgHeader.RespCircuitId, Buffer.from(c.circuitId)],
          [CtrlMsgHeader.RespAddress, Buffer.from(c.ingress)],
          [CtrlMsgHeader.PeerData, encodeU32BytesMap(c.peerData)],
          [CtrlMsgHeader.RespTags, encodeStringMap(c.tags)],
        ]),
      );
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal)) this.log(e, 'create circuit');
      ch.channel.result(msg, false, refusalText(e));
    }
  }

  /** A tunneler-enabled router's own dial (an intercepted connection): its identity's Dial policy is checked. */
  async createTunnelCircuit(ch: RouterControlChannel, msg: Message): Promise<void> {
    try {
      const req = parseCreateTunnelCircuitV2(msg.body);
      const access = await authorizeRouterTunnel(this.core(), ch.router!.id, { name: req.serviceName }, 'Dial');
      const c = await this.routeCircuit(ch.router!.id, ch, access, req.instanceId, req.peerData);
      ch.channel.reply(msg, message(EdgeCtrl.CreateTunnelCircuitV2Response, [], createTunnelCircuitV2Response(c)));
    } catch (e) {
      if (!(e instanceof DataPlaneRefusal) && !(e instanceof ProtoError)) this.log(e, 'create tunnel circuit');
      const text = e instanceof ProtoError ? `invalid request: ${e.message}` : refusalText(e);
      ch.channel.reply(msg, message(EdgeCtrl.Error, [], text));
    }
  }

  /**
   * A circuit for an authorized dial at a router: a terminator and the path to it picked, every router of the path
   * routed, and what the dialer needs back (the circuit id, its ingress address, the host's peer data, the tags).
   */
  private async routeCircuit(
    routerId: string,
    ch: RouterControlChannel | undefined,
    { caller, grant }: { caller: ChannelCaller; grant: SessionGrant },
    instanceId: string,
    dialerPeerData: Map<number, Buffer>,
    fromBuiltin?: Pick<LinkDialRequest, 'circuitId' | 'install'>,
  ): Promise<{ circuitId: string; ingress: string; peerData: Map<number, Buffer>; tags: Record<string, string> }> {
    if (grant.encryptionRequired && !dialerPeerData.has(PUBLIC_KEY)) {
      throw new DataPlaneRefusal('encryption required on service, initiator did not send public header');
    }
    // a dial at the built-in router comes here for terminators it does not hold itself
    const choices = (await terminatorChoices(this.core(), grant.serviceId, instanceId)).filter((t) => !fromBuiltin || t.routerId !== routerId);
    if (choices.length === 0) throw new DataPlaneRefusal(`service ${grant.serviceName} has no terminators`);
    const picked = this.pick(routerId, choices);
    if (!picked) throw new DataPlaneRefusal(`service ${grant.serviceName} has no terminators reachable from this router`);
    const { terminator, path } = picked;
    const circuitId = fromBuiltin?.circuitId ?? randomUUID();
    const ingress = randomUUID();
    const tags = { clientId: caller.identityId, serviceId: grant.serviceId };
    const parts: RouteParts = {
      circuitId,
      ingress,
      egress: { binding: terminator.binding, address: randomUUID(), destination: terminator.address, peerData: dialerPeerData },
      tags,
    };
    const routes = routeMessages(path, parts);
    const circuit: StockCircuit = {
      id: circuitId,
      routerId,
      path: path.routers,
      links: path.links,
      route: parts,
      sessionId: grant.sessionId,
      apiSessionId: caller.apiSessionId,
      identityId: caller.identityId,
      serviceId: grant.serviceId,
      terminatorId: terminator.id,
      instanceId: terminator.identity,
      hostId: terminator.hostId,
      cost: terminator.cost,
      createdAt: Date.now(),
    };
    // known before the routes are sent: a revocation while they are under way unroutes it
    this.circuits.set(circuitId, circuit);
    // every router of the path at once (OpenZiti's routeSender); the egress router's result carries the host's peer data
    const builtin: BuiltinDial = {
      install: fromBuiltin?.install,
      terminatorId: terminator.id,
      dial: { serviceName: grant.serviceName, sessionId: grant.sessionId, caller: caller.identityName, callerId: caller.identityId, instanceId },
    };
    const results = await Promise.allSettled(path.routers.map((r, i) => this.routeOn(r, routes[i]!, r === routerId ? ch : undefined, builtin)));
    const failed = results.find((x) => x.status === 'rejected' || !routed(x.value));
    if (failed) {
      // the routers that did route it unroute it again
      this.endCircuits((c) => c.id === circuitId, false);
      const result = failed.status === 'fulfilled' ? failed.value : undefined;
      this.report('failed', circuit, ROUTE_FAILURES[result?.headers.get(CtrlMsgHeader.RouteResultErrorCode)?.[0] ?? 0] ?? 'ROUTER_ERR_GENERIC');
      if (failed.status === 'rejected' && !(failed.reason instanceof DataPlaneRefusal)) throw failed.reason;
      throw new DataPlaneRefusal(
        (failed.status === 'rejected' ? (failed.reason as Error).message : getStr(result!.headers, CtrlMsgHeader.RouteResultError)) ||
          'the router could not route the circuit',
      );
    }
    const result = (results.at(-1) as PromiseFulfilledResult<Message>).value;
    if (!this.circuits.has(circuitId)) throw new DataPlaneRefusal('access ended while the circuit was being routed');
    // the terminator's static peer data (the host's public key), then what the route's egress reported
    const peerData = new Map([...terminator.peerData, ...peerDataOf(result)]);
    if (grant.encryptionRequired && !peerData.has(PUBLIC_KEY)) {
      this.endCircuits((c) => c.id === circuitId);
      throw new DataPlaneRefusal('encryption required on service, terminator did not send public header');
    }
    this.report('created', circuit);
    return { circuitId, ingress, peerData, tags };
  }

  /**
   * The terminator to dial and the path to it: by precedence, then the terminator's cost plus the path's (OpenZiti's
   * biased route cost), the random order among equals kept; terminators on routers with no path are passed over.
   */
  private pick(from: string, choices: TerminatorChoice[]): { terminator: TerminatorChoice; path: RouterPath } | undefined {
    const paths = new Map<string, RouterPath | undefined>();
    const reachable: Array<{ terminator: TerminatorChoice; path: RouterPath }> = [];
    for (const t of choices) {
      if (!paths.has(t.routerId)) paths.set(t.routerId, this.mesh.path(from, t.routerId));
      const path = paths.get(t.routerId);
      if (path) reachable.push({ terminator: t, path });
    }
    const rank = (x: (typeof reachable)[number]) => PRECEDENCE_RANK[x.terminator.precedence];
    // a stable sort: choices came in random order among equals
    reachable.sort((a, b) => rank(a) - rank(b) || a.terminator.cost + a.path.cost - (b.terminator.cost + b.path.cost));
    return reachable[0];
  }

  /** A router's fault: an ingress, egress or forward fault names a circuit that broke there (it ends), a link fault a link. */
  fault(ch: RouterControlChannel, msg: Message): void {
    const { subject, id, iteration } = parseFault(msg.body);
    const routerId = ch.router!.id;
    if (subject === FaultSubject.LinkFault || subject === FaultSubject.LinkDuplicate) return this.linkFaulted(routerId, id, iteration);
    if (subject !== FaultSubject.IngressFault && subject !== FaultSubject.EgressFault && subject !== FaultSubject.ForwardFault) return;
    // a forward fault names the circuits it could not forward, separated by spaces
    const ids = new Set(id.split(' '));
    this.endCircuits((c) => ids.has(c.id) && c.path.includes(routerId));
  }

  /** A link a router dialed went (its LinkFault): the mesh drops it and the circuits over it take another path or end. */
  linkFaulted(routerId: string, linkId: string, iteration: number): void {
    const link = this.mesh.faulted(routerId, linkId, iteration);
    // beside the channel's queue: the routes' results arrive on these channels
    if (link) void this.rerouteOver(link.id).catch((err) => this.log(err, 'reroute'));
  }

  /**
   * The circuits over a link that went take the cheapest path left between their ingress and egress routers (OpenZiti's
   * smart reroute: new forwards, no new dial at the egress); the routers left behind unroute them. No path: they end.
   */
  private async rerouteOver(linkId: string): Promise<void> {
    for (const c of [...this.circuits.values()]) {
      if (!c.links.includes(linkId)) continue;
      const path = this.mesh.path(c.path[0]!, c.path.at(-1)!);
      if (!path) {
        this.endCircuits((x) => x === c);
        continue;
      }
      const left = c.path.filter((r) => !path.routers.includes(r));
      c.path = path.routers;
      c.links = path.links;
      const routes = routeMessages(path, c.route, SMART_REROUTE_ATTEMPT);
      const results = await Promise.allSettled(path.routers.map((r, i) => this.routeOn(r, routes[i]!)));
      if (!this.circuits.has(c.id)) continue;
      if (results.some((x) => x.status === 'rejected' || !routed(x.value))) {
        this.endCircuits((x) => x === c);
        continue;
      }
      for (const r of left) this.unrouteOn(r, c.id);
    }
  }

  private routeOn(routerId: string, spec: RouteSpec, ch = this.channelOf(routerId), builtin?: BuiltinDial): Promise<Message> {
    if (this.builtin?.id === routerId) return this.routeBuiltin(this.builtin, spec, builtin);
    if (!ch) return Promise.reject(new DataPlaneRefusal(`router ${routerId} of the path went away`));
    return ch.channel.request(message(Fabric.Route, [], route(spec)), ROUTE_TIMEOUT_MS + 1_000);
  }

  /**
   * The built-in router's route, in process: a circuit's egress (its terminator, reached over a link), its ingress (a
   * dial there) or a transit hop between two links (also a rerouted circuit's new hop); not yet a moved path's end.
   * Its outcome as the RouteResult a stock router would send.
   */
  private async routeBuiltin(peer: BuiltinRouterPeer, spec: RouteSpec, builtin: BuiltinDial | undefined): Promise<Message> {
    const links = [...new Set(spec.forwards.filter((f) => f.type === DestType.Link).map((f) => f.dst))];
    const linkId = links[0];
    let r: LocalRouteResult = { failure: 'the built-in router cannot take this route', cause: 'invalid link' };
    if (links.length === 2 && !spec.egress) r = peer.transit(spec.circuitId, links[0]!, links[1]!);
    else if (builtin && linkId && spec.egress)
      r = await peer.route({
        circuitId: spec.circuitId,
        linkId,
        terminatorId: builtin.terminatorId,
        peerData: spec.egress.peerData,
        dial: builtin.dial,
      });
    else if (builtin?.install && linkId) r = builtin.install(spec.circuitId, linkId);
    if ('peerData' in r) return message(Fabric.RouteResult, [[CtrlMsgHeader.RouteResultSuccess, bool(true)], ...r.peerData]);
    return message(Fabric.RouteResult, [
      [CtrlMsgHeader.RouteResultSuccess, bool(false)],
      [CtrlMsgHeader.RouteResultError, str(r.failure)],
      [
        CtrlMsgHeader.RouteResultErrorCode,
        Buffer.from([r.cause === 'invalid terminator' ? RouteErrorCode.InvalidTerminator : RouteErrorCode.Generic]),
      ],
    ]);
  }

  /** A router of a circuit's path lets it go (Unroute; the built-in router in process). */
  private unrouteOn(routerId: string, circuitId: string): void {
    if (this.builtin?.id === routerId) return this.builtin.unroute(circuitId);
    const ch = this.channelOf(routerId);
    if (ch) this.send(ch, circuitId);
  }

  /** The router's list of circuits it still forwards: those the controller no longer has are unrouted. */
  confirm(ch: RouterControlChannel, msg: Message): void {
    for (const id of parseCircuitConfirmation(msg.body)) if (!this.circuits.has(id)) this.send(ch, id);
  }

  /**
   * A router's control channel went: the circuits through it end (the other routers of their paths unroute them), its
   * SDKs' terminators go too (they bind again).
   */
  async routerGone(routerId: string): Promise<void> {
    this.endCircuits((c) => c.path.includes(routerId));
    // unless it is still connected to another node (which holds them for it)
    if (!(await routerIsOnline(this.core(), routerId))) await clearRouterTerminators(this.core(), routerId);
  }

  /** Circuits of the router, for the live view and the fabric API. */
  circuitsOf(routerId: string): StockCircuit[] {
    return [...this.circuits.values()].filter((c) => c.routerId === routerId);
  }

  /**
   * Policies, services or routers changed: the tunnel circuits (a router's own dials, no session to end with them)
   * whose router identity lost its Dial end, and the tunnel terminators whose router identity lost its Bind go. One
   * check at a time; a change during one is followed by another.
   */
  private tunnelAccessMayHaveChanged(): void {
    // no stock router connected: no tunnel circuit or terminator of one to check (a write's hot path stays free)
    if (this.connectedRouters().length === 0) return;
    if (this.tunnelCheck.running) {
      this.tunnelCheck.again = true;
      return;
    }
    this.tunnelCheck.running = true;
    void (async () => {
      try {
        do {
          this.tunnelCheck.again = false;
          await this.recheckTunnels();
        } while (this.tunnelCheck.again);
      } catch (err) {
        this.log(err, 'tunnel access check');
      } finally {
        this.tunnelCheck.running = false;
      }
    })();
  }

  private async recheckTunnels(): Promise<void> {
    const core = this.core();
    const refused = async (routerId: string, serviceId: string, type: 'Dial' | 'Bind') =>
      authorizeRouterTunnel(core, routerId, { id: serviceId }, type).then(
        () => false,
        (e: unknown) => {
          if (e instanceof DataPlaneRefusal) return true;
          throw e;
        },
      );
    for (const c of [...this.circuits.values()]) {
      if (c.sessionId === '' && (await refused(c.routerId, c.serviceId, 'Dial'))) this.endCircuits((x) => x === c);
    }
    for (const t of await tunnelTerminatorsOf(core, [...this.connectedRouters()])) {
      if (await refused(t.routerId, t.serviceId, 'Bind')) await removeRouterTerminator(core, t.id);
    }
  }

  private sessionsEnded(ids: string[]): void {
    const gone = new Set(ids);
    this.endCircuits((c) => gone.has(c.sessionId));
    void removeTerminatorsOfSessions(this.core(), ids).catch((err) => this.log(err, 'remove terminators'));
  }

  /** After changes may have gone untold: circuits whose session is gone end, and terminators whose Bind session is. */
  private async recheck(): Promise<void> {
    const gone = await missingRows(this.core(), 'sessions', [...new Set([...this.circuits.values()].map((c) => c.sessionId))]);
    this.endCircuits((c) => gone.has(c.sessionId));
    await removeTerminatorsWithoutSession(this.core());
  }

  /** Ends circuits: forgotten here, unrouted on every router of their path (which closes the SDKs' connections). */
  endCircuits(which: (c: StockCircuit) => boolean, report = true): void {
    for (const c of [...this.circuits.values()]) {
      if (!which(c)) continue;
      this.circuits.delete(c.id);
      if (report) this.report('deleted', c);
      for (const r of c.path) this.unrouteOn(r, c.id);
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
      path: { routers: c.path, links: c.links, ingressId: c.route.ingress, egressId: c.route.egress.address },
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

/** The built-in router as a router of the mesh (router.link_listener): routed in process, not over a channel. */
export interface BuiltinRouterPeer {
  id: string;
  route(r: LocalRoute): Promise<LocalRouteResult>;
  transit(circuitId: string, a: string, b: string): LocalRouteResult;
  unroute(circuitId: string): void;
}

/** What the built-in router needs to know of a circuit beyond its route (its terminator, who dialed what). */
interface BuiltinDial {
  terminatorId: string;
  dial: LocalRoute['dial'];
  /** a dial at the built-in router: its end of the circuit, on the link the path starts with */
  install?: LinkDialRequest['install'];
}

/** What a circuit's routes are built from. */
export interface RouteParts {
  circuitId: string;
  ingress: string;
  egress: NonNullable<RouteSpec['egress']>;
  tags: Record<string, string>;
}

/** The attempt number of a route that moves an existing circuit to a new path (OpenZiti's SmartRerouteAttempt). */
const SMART_REROUTE_ATTEMPT = 99969996;

/** Whether a router answered a Route with a successful RouteResult. */
const routed = (result: Message): boolean => result.contentType === Fabric.RouteResult && getBool(result.headers, CtrlMsgHeader.RouteResultSuccess);

/**
 * The Route for each router of a path, in the path's order (OpenZiti's CreateRouteMessages): one router forwards
 * between the ingress and egress addresses; across links the ingress router forwards to the first link, each transit
 * router from link to link, the egress router from the last link to the terminator's egress.
 */
export function routeMessages(path: Pick<RouterPath, 'routers' | 'links'>, c: RouteParts, attempt = 0): RouteSpec[] {
  const spec = (forwards: RouteSpec['forwards'], egress?: RouteSpec['egress']): RouteSpec => ({
    circuitId: c.circuitId,
    attempt,
    ...(egress && { egress }),
    forwards,
    timeoutNs: BigInt(ROUTE_TIMEOUT_MS) * 1_000_000n,
    tags: c.tags,
  });
  const [ingress, egress] = [c.ingress, c.egress.address];
  const { links } = path;
  if (links.length === 0)
    return [
      spec(
        [
          { src: ingress, dst: egress, type: DestType.End },
          { src: egress, dst: ingress, type: DestType.Start },
        ],
        c.egress,
      ),
    ];
  const out = [
    spec([
      { src: ingress, dst: links[0]!, type: DestType.Link },
      { src: links[0]!, dst: ingress, type: DestType.Start },
    ]),
  ];
  for (let i = 0; i < links.length - 1; i++)
    out.push(
      spec([
        { src: links[i]!, dst: links[i + 1]!, type: DestType.Link },
        { src: links[i + 1]!, dst: links[i]!, type: DestType.Link },
      ]),
    );
  out.push(
    spec(
      [
        { src: egress, dst: links.at(-1)!, type: DestType.Link },
        { src: links.at(-1)!, dst: egress, type: DestType.End },
      ],
      // a reroute changes forwards only: the egress has its connection to the host already
      attempt === SMART_REROUTE_ATTEMPT ? undefined : c.egress,
    ),
  );
  return out;
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
