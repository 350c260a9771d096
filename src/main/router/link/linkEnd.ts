// The far end of a circuit that reaches the built-in router over a link: what the circuit relays to it leaves as
// xgress payloads, what arrives as payloads is relayed as edge Data frames (OpenZiti router/xgress_edge/fabric.go:
// the body as is, the edge UUID header as xgress header 0, the edge flags — FIN included — as xgress header 0x10;
// conn ids and edge sequence numbers stay on their side).
import { encode, EdgeType, Header, findHeader, bodyOf, message, u32, type Headers } from '../channel/wire';
import type { Circuit, LinkCircuitEnd } from '../circuit';
import type { RouterLink } from './linkListener';
import { XgressReceiver, XgressSender, type XgressTime } from './xgressEnd';
import { encodeAck, encodePayload, hasFlag, PayloadFlag, XgressHeader, XgressKey, type Originator, type Payload } from './xgressWire';

/** The edge UUID header (edge.UUIDHeader), carried as xgress header 0. */
const EDGE_UUID = 128;
const UUID_KEY = XgressHeader.MinHeaderKey + XgressKey.UUID;
const FLAGS_KEY = XgressHeader.MinHeaderKey + XgressKey.EdgeFlags;

export interface LinkEndOptions {
  circuitId: string;
  link: RouterLink;
  /** which end of the circuit this router is (the built-in router as egress: Terminator) */
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

  constructor(private readonly o: LinkEndOptions) {
    const send = (p: Payload) => o.link.channel.send(encodePayload(p));
    this.sender = new XgressSender({
      circuitId: o.circuitId,
      originator: o.originator,
      time: o.time,
      send,
      onWritable: () => this.wake(),
      onClosed: () => this.finish('the hosting side closed'),
    });
    this.receiver = new XgressReceiver({
      circuitId: o.circuitId,
      originator: o.originator,
      sendAck: (a) => o.link.channel.send(encodeAck(a)),
      deliver: (p) => this.deliver(p),
      onWriteFailed: () => this.circuit?.close('the dialing side could not write', 'dialer'),
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
    return this.sender.write(Buffer.from(bodyOf(frame)), headers);
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
    // the host ended it: what it sent goes out first, then the circuit ends (OpenZiti's closeWhenEmpty)
    this.sender.eof();
    this.sender.closeWhenEmpty();
  }

  /** The controller ended the circuit: the host is told, the controller not again. */
  unrouted(): void {
    this.done = true;
    this.sender.close();
    this.circuit?.close('the circuit was unrouted', 'dialer');
  }

  /** The link went: nothing more can come or go. */
  linkLost(): void {
    this.sender.close();
    this.circuit?.close('the link to the dialing router closed', 'dialer');
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
      for (let p = this.waiting.shift(); p && !this.held; p = this.waiting.shift()) this.relay(p);
    });
  }

  private deliver(p: Payload): void {
    if (this.held || this.waiting.length > 0) return void this.waiting.push(p);
    this.relay(p);
  }

  private relay(p: Payload): void {
    const circuit = this.circuit;
    if (!circuit) return;
    if (hasFlag(p.flags, PayloadFlag.PayloadFlagCircuitStart)) return circuit.open();
    if (hasFlag(p.flags, PayloadFlag.PayloadFlagEOF) || hasFlag(p.flags, PayloadFlag.PayloadFlagCircuitEnd)) {
      circuit.close('the dialing side closed', 'dialer');
      return;
    }
    const headers: Array<[number, Buffer]> = [[Header.ConnId, u32(0)]];
    const uuid = p.headers.get(UUID_KEY);
    const flags = p.headers.get(FLAGS_KEY);
    if (uuid) headers.push([EDGE_UUID, uuid]);
    if (flags) headers.push([Header.Flags, flags]);
    circuit.relay('dialer', encode(message(EdgeType.Data, headers, p.data)));
    this.receiver.release(p.data.length);
  }
}
