// The far end of a circuit that reaches the built-in router over a link: what the circuit relays to it leaves as
// xgress payloads, what arrives as payloads is relayed as edge Data frames (OpenZiti router/xgress_edge/fabric.go:
// the body as is, the edge UUID header as xgress header 0, the edge flags — FIN included — as xgress header 0x10;
// conn ids and edge sequence numbers stay on their side).
import { encode, EdgeType, Header, findHeader, bodyOf, message, u32, type Headers } from '../channel/wire';
import type { Circuit, LinkCircuitEnd, Side } from '../circuit';
import type { RouterLink } from './linkSession';
import { XgressReceiver, XgressSender, type XgressTime } from './xgressEnd';
import { encodeAck, encodePayload, hasFlag, PayloadFlag, XgressKey, type Originator, type Payload } from './xgressWire';

/** The edge UUID header (edge.UUIDHeader), carried as xgress header 0. */
const EDGE_UUID = 128;
const UUID_KEY = XgressKey.UUID;
const FLAGS_KEY = XgressKey.EdgeFlags;

export interface LinkEndOptions {
  circuitId: string;
  link: RouterLink;
  /** which end of the circuit this router is: the egress (Terminator; the link is the circuit's dialer) or the ingress */
  originator: Originator;
  time: XgressTime;
  /** the circuit is over here and nothing more will come or go on the link: the controller is told */
  ended(circuitId: string, reason: string): void;
}

export class LinkEnd implements LinkCircuitEnd {
  readonly sender: XgressSender;
  readonly receiver: XgressReceiver;
  private circuit?: Circuit;
  private held?: Promise<unknown>;
  private readonly waiting: Payload[] = [];
  private writableWaiters: Array<() => void> = [];
  private done = false;
  /** the circuit's side the link is: its dialer when this router is the egress, its host when the ingress */
  private readonly side: Side;

  constructor(private readonly o: LinkEndOptions) {
    this.side = o.originator === 'Terminator' ? 'dialer' : 'host';
    const send = (p: Payload) => o.link.channel.send(encodePayload(p));
    this.sender = new XgressSender({
      circuitId: o.circuitId,
      originator: o.originator,
      time: o.time,
      send,
      onWritable: () => this.wake(),
      onClosed: () => this.finish('this side closed'),
    });
    this.receiver = new XgressReceiver({
      circuitId: o.circuitId,
      originator: o.originator,
      sendAck: (a) => o.link.channel.send(encodeAck(a)),
      deliver: (p) => this.deliver(p),
      onWriteFailed: () => this.circuit?.close('the far end could not write', this.side),
    });
  }

  get link(): RouterLink {
    return this.o.link;
  }

  attach(circuit: Circuit): void {
    this.circuit = circuit;
  }

  // ---- from the circuit to the link --------------------------------------------------------------------------

  write(frame: Buffer): boolean {
    const headers: Headers = new Map();
    for (const [edge, key] of [
      [EDGE_UUID, UUID_KEY],
      [Header.Flags, FLAGS_KEY],
    ] as const) {
      const at = findHeader(frame, edge);
      if (at) headers.set(key, Buffer.from(frame.subarray(at.offset, at.offset + at.length)));
    }
    // the body is not copied: a read buffer is never reused, and nothing writes into a frame once relayed to a link
    return this.sender.write(bodyOf(frame), headers);
  }

  drained(): Promise<void> {
    if (this.sender.writable || this.sender.closed) return Promise.resolve();
    return new Promise((resolve) => this.writableWaiters.push(resolve));
  }

  close(reason: string, told: boolean): void {
    this.wake();
    if (told || this.done) {
      this.sender.close();
      return this.finish(reason);
    }
    // this side ended it: what it sent goes out first, then the circuit ends (OpenZiti's closeWhenEmpty)
    this.sender.eof();
    this.sender.closeWhenEmpty();
  }

  /** The controller ended the circuit, or is told otherwise (a failed route): this side is told, the controller not again. */
  unrouted(reason = 'the circuit was unrouted'): void {
    this.done = true;
    this.sender.close();
    this.circuit?.close(reason, this.side);
  }

  /** The link went: nothing more can come or go. */
  linkLost(): void {
    this.sender.close();
    this.circuit?.close('the link to the other router closed', this.side);
    this.finish('the link closed');
  }

  private wake(): void {
    const waiters = this.writableWaiters;
    this.writableWaiters = [];
    for (const w of waiters) w();
  }

  private finish(reason: string): void {
    if (this.done) return;
    this.done = true;
    this.o.ended(this.o.circuitId, reason);
  }

  // ---- from the link to the circuit --------------------------------------------------------------------------

  holdUntil(until: Promise<unknown>): void {
    const held = until.then(
      () => undefined,
      () => undefined,
    );
    this.held = held;
    void held.then(() => {
      if (this.held !== held) return;
      this.held = undefined;
      // in order, until a relay holds them again (what is left waits for that hold)
      while (this.waiting.length > 0 && !this.held) this.relay(this.waiting.shift()!);
    });
  }

  private deliver(p: Payload): void {
    if (this.held || this.waiting.length > 0) return void this.waiting.push(p);
    this.relay(p);
  }

  private relay(p: Payload): void {
    const circuit = this.circuit;
    if (!circuit) return;
    // the Initiator's first payload: the Terminator's host may be heard from now on
    if (hasFlag(p.flags, PayloadFlag.PayloadFlagCircuitStart)) return circuit.open();
    if (hasFlag(p.flags, PayloadFlag.PayloadFlagEOF) || hasFlag(p.flags, PayloadFlag.PayloadFlagCircuitEnd)) {
      circuit.close(this.side === 'dialer' ? 'the dialing side closed' : 'the hosting side closed', this.side);
      return;
    }
    const headers: Array<[number, Buffer]> = [[Header.ConnId, u32(0)]];
    const uuid = p.headers.get(UUID_KEY);
    const flags = p.headers.get(FLAGS_KEY);
    if (uuid) headers.push([EDGE_UUID, uuid]);
    if (flags) headers.push([Header.Flags, flags]);
    circuit.relay(this.side, encode(message(EdgeType.Data, headers, p.data)));
    this.receiver.release(p.data.length);
  }
}
