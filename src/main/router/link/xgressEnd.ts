// One circuit end's flow control over router links, as OpenZiti's xgress does it (sdk-golang v1.2.10:
// xgress/link_send_buffer.go, link_receive_buffer.go, xgress.go). A sender numbers one direction's payloads,
// keeps them until acked and retransmits them; a receiver acks every payload, delivers in order and reports how
// many bytes it holds. Neither owns a socket: the caller passes payloads and acks in and out. Time comes from an
// injected clock and interval timer, so tests move it by hand.

import type { Clock } from '../../core/clock';
import { hasFlag, originatorFlag, originatorOf, PayloadFlag, type Acknowledgement, type Originator, type Payload } from './xgressWire';

/** Time source and repeating timer; `every` returns a function that stops it. */
export interface XgressTime {
  clock: Clock;
  every(ms: number, fn: () => void): () => void;
}

export const systemXgressTime = (clock: Clock): XgressTime => ({
  clock,
  every(ms, fn) {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  },
});

/** Defaults of xgress/options.go DefaultOptions. */
export const XGRESS_DEFAULTS = {
  /** TxPortalStartSize = TxPortalMaxSize: unacked bytes allowed, and the peer's receive buffer above which we wait */
  windowBytes: 4 * 1024 * 1024,
  /** RxBufferSize: beyond this, payloads past the highest seen are dropped unacked */
  rxBufferBytes: 4 * 1024 * 1024,
  /** RetxStartMs, and the floor of the threshold afterwards (Weft: max(200 ms, 1.5·rtt)) */
  retxStartMs: 200,
  retxScale: 1.5,
  /** the retransmit ticker (LinkSendBuffer.run) and the least time between two scans */
  retxTickMs: 100,
  retxMinIntervalMs: 64,
  /** closeWhenEmpty: close once empty this long (checkForClose), or after MaxCloseWait whatever is left */
  emptyCloseMs: 5_000,
  maxCloseWaitMs: 30_000,
} as const;

/** A u16 millisecond clock, as the RTT header carries it (uint16(info.NowInMilliseconds())). */
export const rttNow = (clock: Clock): number => clock.now().getTime() & 0xffff;

interface Unacked {
  payload: Payload;
  sentAt: number;
}

export interface SenderOptions {
  circuitId: string;
  originator: Originator;
  time: XgressTime;
  /** writes a payload to the link */
  send(p: Payload): void;
  /** called when a blocked sender can take data again (resume reading the edge peer) */
  onWritable?(): void;
  /** called once when closeWhenEmpty() has closed the sender (after sending CircuitEnd) */
  onClosed?(): void;
  windowBytes?: number;
  retxStartMs?: number;
}

/** LinkSendBuffer: sequence numbers from 0, unacked payloads kept and retransmitted, local and remote windows. */
export class XgressSender {
  private nextSeq = 0;
  private readonly queued: Payload[] = [];
  private readonly unacked = new Map<number, Unacked>();
  private unackedBytes = 0;
  /** the peer's last reported receive buffer (RecvBufferSize); 0 until its first ack */
  private peerBuffered = 0;
  private lastRtt = 0;
  private retxThreshold: number;
  private lastRetransmit = -Infinity;
  private wasBlocked = false;
  private readonly stopTicker: () => void;
  /** when closeWhenEmpty() was called */
  private closingSince: number | undefined;
  retransmits = 0;
  closed = false;

  constructor(private readonly o: SenderOptions) {
    this.retxThreshold = o.retxStartMs ?? XGRESS_DEFAULTS.retxStartMs;
    this.stopTicker = o.time.every(XGRESS_DEFAULTS.retxTickMs, () => {
      this.retransmit();
      this.checkForClose();
    });
  }

  private get now(): number {
    return this.o.time.clock.now().getTime();
  }

  /** LinkSendBuffer.isBlocked: unacked bytes over the window, or the peer holding more than the window. */
  get blocked(): boolean {
    const window = this.o.windowBytes ?? XGRESS_DEFAULTS.windowBytes;
    return this.unackedBytes > window || this.peerBuffered > window;
  }

  /** Payloads sent and not yet acked, or not yet sent. */
  get pending(): number {
    return this.unacked.size + this.queued.length;
  }

  /** The Initiator's first payload: seq 0, empty, CircuitStart (Xgress.Start). */
  circuitStart(): void {
    this.enqueue(Buffer.alloc(0), new Map(), PayloadFlag.PayloadFlagCircuitStart);
  }

  /** Data from the edge peer. false = blocked: stop reading until onWritable (the payload is kept either way). */
  write(data: Buffer, headers: Map<number, Buffer> = new Map()): boolean {
    this.enqueue(data, headers, 0);
    return this.writable;
  }

  /** Not blocked and nothing waiting to be sent. */
  get writable(): boolean {
    return !this.blocked && this.queued.length === 0;
  }

  /** The edge peer closed its side: a sequenced EOF, retransmitted like data (Xgress.sendEOF). */
  eof(): void {
    this.enqueue(Buffer.alloc(0), new Map(), PayloadFlag.PayloadFlagEOF);
  }

  /** Writing to the edge peer failed: a sequenced WriteFailed (Xgress.sendWriteFailed). */
  writeFailed(): void {
    this.enqueue(Buffer.alloc(0), new Map(), PayloadFlag.PayloadFlagWriteFailed);
  }

  /** The end is closing: CircuitEnd takes the next sequence but is sent once and not kept (Xgress.Close). */
  circuitEnd(): void {
    if (this.closed) return;
    this.o.send(this.payload(this.nextSeq++, Buffer.alloc(0), new Map(), PayloadFlag.PayloadFlagCircuitEnd));
    this.close();
  }

  close(): void {
    this.closed = true;
    this.stopTicker();
  }

  /**
   * The edge peer is gone (after eof()): once every payload is acked and 5 s have passed — or only EOF is left
   * unacked after 5 s, or 30 s have passed — send CircuitEnd and close (LinkSendBuffer.CloseWhenEmpty/checkForClose).
   * Queued payloads are no longer held back by the windows meanwhile.
   */
  closeWhenEmpty(): void {
    if (this.closed || this.closingSince !== undefined) return;
    this.closingSince = this.now;
    this.pump();
  }

  private checkForClose(): void {
    if (this.closingSince === undefined || this.closed) return;
    const waited = this.now - this.closingSince;
    const left = [...this.unacked.values()];
    const onlyEnd = this.queued.length === 0 && left.length === 1 && hasFlag(left[0]!.payload.flags, PayloadFlag.PayloadFlagEOF);
    if (((this.pending === 0 || onlyEnd) && waited > XGRESS_DEFAULTS.emptyCloseMs) || waited > XGRESS_DEFAULTS.maxCloseWaitMs) {
      this.circuitEnd();
      this.o.onClosed?.();
    }
  }

  /** LinkSendBuffer.receiveAcknowledgement; unknown sequences are duplicate acks (ignored). */
  ack(a: Acknowledgement): void {
    for (const seq of a.sequences) {
      const u = this.unacked.get(seq);
      if (!u) continue;
      this.unacked.delete(seq);
      this.unackedBytes -= u.payload.data.length;
    }
    this.peerBuffered = a.recvBufferSize;
    if (a.rtt > 0) {
      let rtt = (rttNow(this.o.time.clock) - a.rtt) & 0xffff;
      if (this.lastRtt > 0) rtt = (rtt + this.lastRtt) >> 1;
      this.lastRtt = rtt;
      const floor = this.o.retxStartMs ?? XGRESS_DEFAULTS.retxStartMs;
      this.retxThreshold = Math.max(floor, Math.floor(rtt * XGRESS_DEFAULTS.retxScale));
    }
    this.pump();
    this.retransmit();
  }

  private payload(sequence: number, data: Buffer, headers: Map<number, Buffer>, flags: number): Payload {
    return { circuitId: this.o.circuitId, sequence, flags: flags | originatorFlag(this.o.originator), rtt: rttNow(this.o.time.clock), headers, data };
  }

  private enqueue(data: Buffer, headers: Map<number, Buffer>, flags: number): void {
    if (this.closed) return;
    this.queued.push(this.payload(this.nextSeq++, data, headers, flags));
    this.pump();
  }

  /** Sends queued payloads while not blocked; blocked with nothing unacked still lets one through (run()). */
  private pump(): void {
    while (this.queued.length > 0 && !this.closed && (!this.blocked || this.unackedBytes === 0 || this.closingSince !== undefined)) {
      const p = this.queued.shift()!;
      p.rtt = rttNow(this.o.time.clock);
      this.unacked.set(p.sequence, { payload: p, sentAt: this.now });
      this.unackedBytes += p.data.length;
      this.o.send(p);
    }
    const blocked = !this.writable;
    if (this.wasBlocked && !blocked && !this.closed) this.o.onWritable?.();
    this.wasBlocked = blocked;
  }

  /** LinkSendBuffer.retransmit: at most every 64 ms, in sequence order, the payloads older than the threshold. */
  private retransmit(): void {
    const now = this.now;
    if (this.closed || this.unacked.size === 0 || now - this.lastRetransmit <= XGRESS_DEFAULTS.retxMinIntervalMs) return;
    this.lastRetransmit = now;
    const due = [...this.unacked.values()]
      .filter((u) => now - u.sentAt >= this.retxThreshold)
      .sort((a, b) => a.payload.sequence - b.payload.sequence);
    for (const u of due) {
      u.sentAt = now;
      this.retransmits++;
      this.o.send({ ...u.payload, flags: u.payload.flags | PayloadFlag.PayloadFlagRetransmit, rtt: rttNow(this.o.time.clock) });
    }
  }
}

export interface ReceiverOptions {
  circuitId: string;
  /** this end's originator: payloads carrying it are dropped (a cycle), acks carry it */
  originator: Originator;
  /** writes an ack to the link */
  sendAck(a: Acknowledgement): void;
  /** the next payload in sequence order (data, CircuitStart, EOF, WriteFailed, CircuitEnd); its bytes count as held until release() */
  deliver(p: Payload): void;
  /** a WriteFailed payload arrived (in any order): the peer cannot write, stop sending (Xgress.SendPayload) */
  onWriteFailed?(): void;
  rxBufferBytes?: number;
}

/** LinkReceiveBuffer + Xgress.PayloadReceived: ack everything taken, deliver in order, report held bytes. */
export class XgressReceiver {
  private delivered = -1;
  private maxSeen = -1;
  private readonly waiting = new Map<number, Payload>();
  /** bytes received and not yet released by the consumer (reorder buffer included) */
  buffered = 0;
  private lastReported = 0;
  /** EOF or CircuitEnd delivered: nothing after it is delivered (Xgress.tx) */
  ended = false;
  /** a WriteFailed payload has arrived */
  writeFailed = false;
  duplicates = 0;
  dropped = 0;

  constructor(private readonly o: ReceiverOptions) {}

  receive(p: Payload): void {
    if (originatorOf(p.flags) === this.o.originator) return void this.dropped++;
    if (hasFlag(p.flags, PayloadFlag.PayloadFlagWriteFailed) && !this.writeFailed) {
      this.writeFailed = true;
      this.o.onWriteFailed?.();
    }
    if (p.sequence <= this.delivered) {
      this.duplicates++;
    } else if (this.buffered > (this.o.rxBufferBytes ?? XGRESS_DEFAULTS.rxBufferBytes) && p.sequence > this.maxSeen) {
      return void this.dropped++; // over the receive buffer: dropped unacked, the sender retransmits
    } else if (this.waiting.has(p.sequence)) {
      this.duplicates++;
    } else {
      this.waiting.set(p.sequence, p);
      this.buffered += p.data.length;
      this.maxSeen = Math.max(this.maxSeen, p.sequence);
    }
    // delivered first: a consumer that writes at once releases the bytes, and the ack reports the buffer after it
    // (acked before, the release would need a second, empty ack to reopen the window)
    this.deliverInOrder();
    this.ackWith([p.sequence], p.rtt);
  }

  /** The consumer wrote `bytes` of delivered data out; an empty ack tells a waiting sender once half is gone. */
  release(bytes: number): void {
    this.buffered = Math.max(0, this.buffered - bytes);
    if (this.lastReported > 10_000 && this.lastReported >> 1 > this.buffered) this.ackWith([], 0);
  }

  private ackWith(sequences: number[], rtt: number): void {
    this.lastReported = this.buffered;
    this.o.sendAck({ circuitId: this.o.circuitId, flags: originatorFlag(this.o.originator), recvBufferSize: this.buffered, rtt, sequences });
  }

  private deliverInOrder(): void {
    for (let p = this.waiting.get(this.delivered + 1); p; p = this.waiting.get(this.delivered + 1)) {
      this.waiting.delete(p.sequence);
      this.delivered = p.sequence;
      if (this.ended) {
        this.buffered -= p.data.length;
        continue;
      }
      if (hasFlag(p.flags, PayloadFlag.PayloadFlagEOF) || hasFlag(p.flags, PayloadFlag.PayloadFlagCircuitEnd)) this.ended = true;
      this.o.deliver(p);
    }
  }
}
