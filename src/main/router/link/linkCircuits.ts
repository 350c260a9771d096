// The built-in router's part in circuits over links. The controller routes it in process (a Route spec, as a stock
// router gets in a Route message) when a circuit dialed at a stock router ends at one of its terminators: it dials
// the host and relays between the host and the link (link/linkEnd.ts). A dial at the built-in router for a service
// it holds no terminator of goes to the controller, which routes it to one at a stock router; the built-in router's
// end then goes on the path's first link. Either way the controller is told when the circuit ended on this side.
// Payloads and acks arriving on a link go to their circuit's end by circuit id. A circuit the controller routes
// through this router between two other routers (a transit hop) has no end here: what arrives on one of its links
// leaves on the other as it came (OpenZiti's forwarder), flow control being the ends' business.
import type { Logger } from 'pino';
import type { ChannelCaller, SessionGrant } from '../../core/dataPlane/index';
import { Header, str, type Headers, type Message } from '../channel/wire';
import type { Circuit, CircuitDial } from '../circuit';
import { dialHost, type HostDial } from '../hostDial';
import type { ConnectionRouter } from '../types';
import type { RouterLink } from './linkSession';
import { LinkEnd } from './linkEnd';
import { systemXgressTime, type XgressTime } from './xgressEnd';
import { decodeXgress, XgressWireError, type Originator } from './xgressWire';

/** What the controller asks the built-in router to do for a circuit (a Route's content, ctrl/edgeMessages.ts RouteSpec). */
export interface LocalRoute {
  circuitId: string;
  /** the link the circuit arrives on (its forwards name it) */
  linkId: string;
  /** the terminator of this router the circuit ends at */
  terminatorId: string;
  /** the dialer's peer data (its public key, app data, connection marker, caller id: edge header numbers) */
  peerData: Map<number, Buffer>;
  /** what the circuit is, for the live view */
  dial: Omit<CircuitDial, 'terminatorId' | 'serviceId' | 'hostId' | 'cost'>;
}

/** A route's outcome: the host's peer data on success (its public key), or why not and OpenZiti's failure cause. */
export type LocalRouteResult = { peerData: Map<number, Buffer> } | { failure: string; cause: 'invalid link' | 'invalid terminator' | 'dial failed' };

/** A dial at this router that the controller routes to a terminator at another router (ctrl/fabric.ts routeFromBuiltin). */
export interface LinkDialRequest {
  circuitId: string;
  caller: ChannelCaller;
  grant: SessionGrant;
  instanceId: string;
  /** the dialer's peer data (edge header numbers: public key, app data, marker, caller id) */
  peerData: Map<number, Buffer>;
  /** makes this router's end of the circuit on the link the path starts with */
  install(circuitId: string, linkId: string): LocalRouteResult;
}

/** What the dialer's Dial passes on to the host at the other end (OpenZiti's edge peer data). */
const PEER_DATA = [Header.PublicKey, Header.AppData, Header.ConnectionMarker] as const;

export class LinkCircuits {
  private readonly links = new Map<string, RouterLink>();
  private readonly ends = new Map<string, LinkEnd>();
  /** circuits this router forwards between two links (a transit hop) */
  private readonly transits = new Map<string, [RouterLink, RouterLink]>();
  /** circuits dialed here whose route the controller has not answered yet */
  private readonly dialing = new Set<string>();
  private readonly time: XgressTime;
  /** told when a circuit ended on this router's side (the controller ends it everywhere) */
  onEnded: (circuitId: string, reason: string) => void = () => undefined;
  /** the controller's routing of a dial here to a terminator elsewhere (set while the router is part of the mesh) */
  remote?: (req: LinkDialRequest) => Promise<{ peerData: Map<number, Buffer> } | { failure: string }>;
  /** the controller's judgement whether a terminator elsewhere beats one here of that rank and cost (set with `remote`) */
  remoteBeats?: (q: { serviceId: string; instanceId: string; rank: number; cost: number }) => Promise<boolean>;

  constructor(
    private readonly router: ConnectionRouter,
    private readonly log: Logger,
    time?: XgressTime,
  ) {
    this.time = time ?? systemXgressTime(router.core.clock);
  }

  linked(link: RouterLink): void {
    this.links.set(link.id, link);
  }

  unlinked(link: RouterLink): void {
    if (this.links.get(link.id) === link) this.links.delete(link.id);
    for (const end of [...this.ends.values()]) if (end.link === link) end.linkLost();
    // the controller takes the circuits through it another way (or ends them)
    for (const [id, pair] of [...this.transits]) if (pair.includes(link)) this.transits.delete(id);
  }

  /** Ids of the links up now. */
  linkIds(): string[] {
    return [...this.links.keys()];
  }

  xgress(link: RouterLink, msg: Message): void {
    const m = decodeXgress(msg);
    if (m === undefined) return;
    if (m instanceof XgressWireError) return void this.log.debug({ link: link.id, reason: m.message }, 'link: malformed xgress message dropped');
    const through = this.transits.get(m.circuitId);
    if (through) {
      const next = through[0] === link ? through[1] : through[1] === link ? through[0] : undefined;
      // as it came, in a new frame of the other link's channel
      if (next) next.channel.send({ ...msg, sequence: 0 });
      return;
    }
    const end = this.ends.get(m.circuitId);
    // a payload for a circuit this router does not have: dropped (OpenZiti's forwarder faults it; the controller knows)
    if (!end || end.link !== link) return;
    if (m.kind === 'payload') end.receiver.receive(m);
    else if (m.kind === 'ack') end.sender.ack(m);
  }

  /** Whether a dial here can go to another router: the controller routes this router's dials and a link is up. */
  get routable(): boolean {
    return this.remote !== undefined && this.links.size > 0;
  }

  /**
   * Whether a dial here had better go to a terminator at another router than to this router's best (rank, cost); asked
   * while `routable`.
   */
  async preferRemote(serviceId: string, instanceId: string, local: { rank: number; cost: number }): Promise<boolean> {
    return (await this.remoteBeats?.({ serviceId, instanceId, ...local })) ?? false;
  }

  /** The circuit's end at this router: its host dialed, the link end made; nothing is kept when it fails. */
  async route(r: LocalRoute): Promise<LocalRouteResult> {
    const link = this.links.get(r.linkId);
    if (!link) return { failure: `invalid link destination ${r.linkId}`, cause: 'invalid link' };
    const terminator = this.router.terminator(r.terminatorId);
    if (!terminator) return { failure: `invalid terminator ${r.terminatorId}`, cause: 'invalid terminator' };
    const end = this.endFor(r.circuitId, link, 'Terminator');
    const info: CircuitDial = {
      ...r.dial,
      serviceId: terminator.serviceId,
      terminatorId: terminator.id,
      hostId: terminator.kind === 'sdk' ? (terminator.conn.caller?.identityId ?? '') : this.router.id,
      cost: terminator.cost,
    };
    const circuit = this.router.newCircuit(info, { kind: 'link', end }, r.circuitId);
    end.attach(circuit);
    const callerId = r.peerData.get(Header.CallerId)?.toString('utf8') ?? r.dial.caller;
    const dialed = await dialHost(terminator, circuit, callerId, r.peerData, () => undefined);
    if ('failure' in dialed || circuit.closed) {
      const failure = 'failure' in dialed ? dialed.failure : 'the circuit ended while its host was dialed';
      // the route's answer tells the controller: the end closes without ending the circuit there as well
      this.ends.delete(r.circuitId);
      end.unrouted(failure);
      return { failure, cause: 'dial failed' };
    }
    return { peerData: new Map(dialed.hostKey ? [[Header.PublicKey, dialed.hostKey]] : []) };
  }

  /** A circuit through this router between two links (a transit hop, or a rerouted one's new hop). */
  transit(circuitId: string, a: string, b: string): LocalRouteResult {
    const [la, lb] = [this.links.get(a), this.links.get(b)];
    if (!la || !lb) return { failure: `invalid link destination ${la ? b : a}`, cause: 'invalid link' };
    this.transits.set(circuitId, [la, lb]);
    return { peerData: new Map() };
  }

  /**
   * A dial at this router for a service it holds no terminator of: the controller picks one at another router and
   * routes the path; this router's end goes on the path's first link and, once routed, starts the circuit. Resolves
   * with the host's public key, or why not.
   */
  async dial(circuit: Circuit, req: Omit<LinkDialRequest, 'circuitId' | 'install' | 'peerData'>, dialer: Headers): Promise<HostDial> {
    // no link up: nothing elsewhere is reachable (the answer a lone router gives)
    if (!this.remote || !this.routable) return { failure: `service ${req.grant.serviceName} has no terminators`, cause: 'NO_TERMINATORS' };
    let end: LinkEnd | undefined;
    const install = (circuitId: string, linkId: string): LocalRouteResult => {
      const link = this.links.get(linkId);
      if (!link) return { failure: `invalid link destination ${linkId}`, cause: 'invalid link' };
      if (circuit.closed) return { failure: 'the dialer went away', cause: 'dial failed' };
      end = this.endFor(circuitId, link, 'Initiator');
      end.attach(circuit);
      circuit.attachHost({ kind: 'link', end });
      return { peerData: new Map() };
    };
    const peerData = new Map<number, Buffer>([[Header.CallerId, str(req.caller.identityName)]]);
    for (const h of PEER_DATA) {
      const v = dialer.get(h);
      if (v) peerData.set(h, Buffer.from(v));
    }
    // until the controller has answered, an unroute (a failed route elsewhere on the path) leaves the dial to fail
    this.dialing.add(circuit.id);
    const routed = await this.remote({ ...req, circuitId: circuit.id, peerData, install }).finally(() => this.dialing.delete(circuit.id));
    if ('failure' in routed) {
      if (end && this.ends.get(circuit.id) === end) this.ends.delete(circuit.id);
      end?.sender.close();
      return { failure: routed.failure, cause: 'ROUTER_ERR_GENERIC' };
    }
    // every router of the path has its route now: the circuit starts (the stock Terminator reads its host from here on)
    end?.sender.circuitStart();
    return { hostKey: routed.peerData.get(Header.PublicKey) };
  }

  /** A circuit's end on a link, known by its circuit id until it has ended. */
  private endFor(circuitId: string, link: RouterLink, originator: Originator): LinkEnd {
    const end: LinkEnd = new LinkEnd({
      circuitId,
      link,
      originator,
      time: this.time,
      ended: (id, reason) => {
        if (this.ends.get(id) === end) this.ends.delete(id);
        this.onEnded(id, reason);
      },
    });
    this.ends.set(circuitId, end);
    return end;
  }

  /** The controller ended the circuit: its host is told, nothing more goes on the link. */
  unroute(circuitId: string): void {
    this.transits.delete(circuitId);
    const end = this.ends.get(circuitId);
    if (!end) return;
    this.ends.delete(circuitId);
    if (this.dialing.has(circuitId)) end.sender.close();
    else end.unrouted();
  }

  /** Every link end stops (the router is stopping). */
  close(): void {
    this.transits.clear();
    for (const id of [...this.ends.keys()]) this.unroute(id);
  }
}
