// The built-in router's part in circuits over links: the controller routes it in process (a Route spec, as a stock
// router gets in a Route message) when a circuit dialed at a stock router ends at one of its terminators. It dials
// the host, relays between the host and the link (link/linkEnd.ts), and tells the controller when the circuit ended
// on its side. Payloads and acks arriving on a link go to their circuit's end by circuit id.
import type { Logger } from 'pino';
import { Header, type Message } from '../channel/wire';
import type { CircuitDial } from '../circuit';
import { dialHost } from '../hostDial';
import type { ConnectionRouter } from '../types';
import type { RouterLink } from './linkListener';
import { LinkEnd } from './linkEnd';
import { systemXgressTime, type XgressTime } from './xgressEnd';
import { decodeXgress, XgressWireError } from './xgressWire';

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

export class LinkCircuits {
  private readonly links = new Map<string, RouterLink>();
  private readonly ends = new Map<string, LinkEnd>();
  private readonly time: XgressTime;
  /** told when a circuit ended on this router's side (the controller ends it everywhere) */
  onEnded: (circuitId: string, reason: string) => void = () => undefined;

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
  }

  /** Ids of the links up now. */
  linkIds(): string[] {
    return [...this.links.keys()];
  }

  xgress(link: RouterLink, msg: Message): void {
    const m = decodeXgress(msg);
    if (m === undefined) return;
    if (m instanceof XgressWireError) return void this.log.debug({ link: link.id, reason: m.message }, 'link: malformed xgress message dropped');
    const end = this.ends.get(m.circuitId);
    // a payload for a circuit this router does not have: dropped (OpenZiti's forwarder faults it; the controller knows)
    if (!end || end.link !== link) return;
    if (m.kind === 'payload') end.receiver.receive(m);
    else if (m.kind === 'ack') end.sender.ack(m);
  }

  /** The circuit's end at this router: its host dialed, the link end made; nothing is kept when it fails. */
  async route(r: LocalRoute): Promise<LocalRouteResult> {
    const link = this.links.get(r.linkId);
    if (!link) return { failure: `invalid link destination ${r.linkId}`, cause: 'invalid link' };
    const terminator = this.router.terminator(r.terminatorId);
    if (!terminator) return { failure: `invalid terminator ${r.terminatorId}`, cause: 'invalid terminator' };
    const end = new LinkEnd({
      circuitId: r.circuitId,
      link,
      originator: 'Terminator',
      time: this.time,
      ended: (id, reason) => {
        if (this.ends.get(id) === end) this.ends.delete(id);
        this.onEnded(id, reason);
      },
    });
    const info: CircuitDial = {
      ...r.dial,
      serviceId: terminator.serviceId,
      terminatorId: terminator.id,
      hostId: terminator.kind === 'sdk' ? (terminator.conn.caller?.identityId ?? '') : this.router.id,
      cost: terminator.cost,
    };
    const circuit = this.router.newCircuit(info, { kind: 'link', end }, r.circuitId);
    end.attach(circuit);
    this.ends.set(r.circuitId, end);
    const callerId = r.peerData.get(Header.CallerId)?.toString('utf8') ?? r.dial.caller;
    const dialed = await dialHost(terminator, circuit, callerId, r.peerData, () => undefined);
    if ('failure' in dialed || circuit.closed) {
      this.ends.delete(r.circuitId);
      end.sender.close();
      circuit.close('failure' in dialed ? dialed.failure : 'the circuit ended while its host was dialed', 'dialer');
      return { failure: 'failure' in dialed ? dialed.failure : 'the circuit ended while its host was dialed', cause: 'dial failed' };
    }
    return { peerData: new Map(dialed.hostKey ? [[Header.PublicKey, dialed.hostKey]] : []) };
  }

  /** The controller ended the circuit: its host is told, nothing more goes on the link. */
  unroute(circuitId: string): void {
    const end = this.ends.get(circuitId);
    if (!end) return;
    this.ends.delete(circuitId);
    end.unrouted();
  }

  /** Every link end stops (the router is stopping). */
  close(): void {
    for (const id of [...this.ends.keys()]) this.unroute(id);
  }
}
