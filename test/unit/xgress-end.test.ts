// Xgress flow control between two circuit ends over an in-memory link that drops, duplicates and reorders
// payloads and acks (every message goes through the real wire encoding). Time moves only by hand.
import { describe, expect, it } from 'vitest';
import { decode, encode } from '../../src/main/router/channel/wire';
import { rttNow, XGRESS_DEFAULTS, XgressReceiver, XgressSender } from '../../src/main/router/link/xgressEnd';
import {
  decodeXgress,
  encodeAck,
  encodePayload,
  hasFlag,
  PayloadFlag,
  XgressWireError,
  type Acknowledgement,
  type Originator,
  type Payload,
} from '../../src/main/router/link/xgressWire';
import { ManualTime } from '../support/manualTime';

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Faults {
  drop: number;
  duplicate: number;
  /** drop every ack (to fill the sender's own window) */
  dropAcks?: boolean;
}

/** Frames in flight, delivered in random order with drops and duplicates, through encode/decode. */
class LossyLink {
  private inFlight: Array<{ frame: Buffer; to: End }> = [];
  readonly random: () => number;
  constructor(
    seed: number,
    public faults: Faults,
  ) {
    this.random = rng(seed);
  }
  send(frame: Buffer, to: End, isAck: boolean): void {
    if (isAck && this.faults.dropAcks) return;
    if (this.random() < this.faults.drop) return;
    this.inFlight.push({ frame, to });
    if (this.random() < this.faults.duplicate) this.inFlight.push({ frame, to });
  }
  get busy(): boolean {
    return this.inFlight.length > 0;
  }
  /** Delivers everything now in flight (and what that triggers), in shuffled order. */
  flush(): void {
    while (this.inFlight.length > 0) {
      const batch = this.inFlight;
      this.inFlight = [];
      for (let i = batch.length - 1; i > 0; i--) {
        const j = Math.floor(this.random() * (i + 1));
        [batch[i], batch[j]] = [batch[j]!, batch[i]!];
      }
      for (const { frame, to } of batch) to.frame(frame);
    }
  }
}

/** One circuit end: a sender for its direction, a receiver for the other, a consumer that may stall. */
class End {
  peer!: End;
  readonly sender: XgressSender;
  readonly receiver: XgressReceiver;
  readonly got: Payload[] = [];
  stalled = false;
  held = 0;
  writableEvents = 0;

  constructor(
    originator: Originator,
    link: LossyLink,
    time: ManualTime,
    readonly sent: Payload[] = [],
  ) {
    this.sender = new XgressSender({
      circuitId: 'c1',
      originator,
      time,
      send: (p) => {
        sent.push(p);
        link.send(encode(encodePayload(p)), this.peer, false);
      },
      onWritable: () => this.writableEvents++,
    });
    this.receiver = new XgressReceiver({
      circuitId: 'c1',
      originator,
      sendAck: (a) => link.send(encode(encodeAck(a)), this.peer, true),
      deliver: (p) => {
        this.got.push(p);
        if (this.stalled) this.held += p.data.length;
        else this.receiver.release(p.data.length);
      },
    });
  }

  frame(frame: Buffer): void {
    const m = decodeXgress(decode(frame));
    if (m === undefined || m instanceof XgressWireError) throw new Error('bad frame on the test link');
    if (m.kind === 'payload') this.receiver.receive(m);
    else if (m.kind === 'ack') this.sender.ack(m);
  }

  resume(): void {
    this.stalled = false;
    const n = this.held;
    this.held = 0;
    this.receiver.release(n);
  }

  bytes(): Buffer {
    return Buffer.concat(this.got.map((p) => p.data));
  }
}

function pair(seed: number, faults: Faults) {
  const time = new ManualTime();
  const link = new LossyLink(seed, faults);
  const a = new End('Initiator', link, time);
  const b = new End('Terminator', link, time);
  a.peer = b;
  b.peer = a;
  return { time, link, a, b };
}

function chunks(random: () => number, total: number, max = 40_000): Buffer[] {
  const out: Buffer[] = [];
  for (let n = 0; n < total;) {
    const len = Math.min(total - n, 1 + Math.floor(random() * max));
    const b = Buffer.allocUnsafe(len);
    for (let i = 0; i < len; i++) b[i] = (n + i) * 31 + (n >> 8);
    out.push(b);
    n += len;
  }
  return out;
}

/** Runs the link and the clock until `done`, at most `limitMs` of virtual time. */
function run(p: ReturnType<typeof pair>, done: () => boolean, limitMs = 120_000): void {
  const start = p.time.nowMs();
  p.link.flush();
  while (!done()) {
    if (p.time.nowMs() - start > limitMs) throw new Error('no progress within the time limit');
    p.time.advance(XGRESS_DEFAULTS.retxTickMs);
    p.link.flush();
  }
}

const seqs = (ps: Payload[]) => ps.map((p) => p.sequence);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('xgress ends over a lossy link', () => {
  for (const seed of [1, 2, 3]) {
    it(`delivers every byte once and in order both ways despite drops, duplicates and reordering (seed ${seed})`, () => {
      const p = pair(seed, { drop: 0.1, duplicate: 0.1 });
      const up = chunks(p.link.random, 1_000_000);
      const down = chunks(p.link.random, 300_000);
      p.a.sender.circuitStart();
      for (const c of up) p.a.sender.write(c);
      p.a.sender.eof();
      for (const c of down) p.b.sender.write(c, new Map([[0x10, Buffer.from([0, 0, 0, 0])]]));
      p.b.sender.eof();
      run(p, () => p.a.sender.pending === 0 && p.b.sender.pending === 0 && !p.link.busy);

      // b got CircuitStart (seq 0), the data, then EOF: each sequence exactly once
      expect(seqs(p.b.got)).toEqual(range(up.length + 2));
      expect(hasFlag(p.b.got[0]!.flags, PayloadFlag.PayloadFlagCircuitStart)).toBe(true);
      expect(p.b.bytes().equals(Buffer.concat(up))).toBe(true);
      expect(hasFlag(p.b.got.at(-1)!.flags, PayloadFlag.PayloadFlagEOF)).toBe(true);
      expect(p.b.receiver.ended).toBe(true);
      expect(seqs(p.a.got)).toEqual(range(down.length + 1));
      expect(p.a.bytes().equals(Buffer.concat(down))).toBe(true);
      expect(p.a.got[0]!.headers.get(0x10)).toEqual(Buffer.from([0, 0, 0, 0]));
      // the faults really happened: retransmits (flag 16) and duplicates seen and acked
      expect(p.a.sender.retransmits).toBeGreaterThan(0);
      expect(p.a.sent.some((x) => hasFlag(x.flags, PayloadFlag.PayloadFlagRetransmit))).toBe(true);
      expect(p.b.receiver.duplicates).toBeGreaterThan(0);
      expect(p.a.receiver.buffered + p.b.receiver.buffered).toBe(0);
    });
  }

  it('a stalled receiver blocks the sender once it reports more than the 4 MiB window, and resumes it when drained', () => {
    const p = pair(7, { drop: 0.02, duplicate: 0.02 });
    p.b.stalled = true;
    const data = chunks(p.link.random, 10 * 1024 * 1024, 64 * 1024);
    let next = 0;
    const feed = () => {
      while (next < data.length) if (!p.a.sender.write(data[next++]!)) return;
    };
    p.a.sender.circuitStart();
    run(p, () => {
      if (p.a.sender.writable) feed();
      return !p.a.sender.writable && !p.link.busy;
    });
    const blockedAt = next;
    expect(blockedAt).toBeLessThan(data.length);
    // stays blocked: once retransmits have filled the gaps, the receiver (holding > 4 MiB) takes nothing new,
    // however long we wait; it can hold at most what was in flight when it crossed the limit (as stock)
    p.time.advance(10_000);
    p.link.flush();
    const heldBefore = p.b.held;
    const deliveredBefore = p.b.got.length;
    const eventsBefore = p.a.writableEvents;
    p.time.advance(10_000);
    p.link.flush();
    expect(p.a.sender.writable).toBe(false);
    expect(p.b.got.length).toBe(deliveredBefore);
    expect(p.b.held).toBe(heldBefore);
    expect(p.b.held).toBeGreaterThan(XGRESS_DEFAULTS.windowBytes);
    expect(p.b.held).toBeLessThan(2 * XGRESS_DEFAULTS.windowBytes + 64 * 1024);
    expect(p.a.writableEvents).toBe(eventsBefore);

    // the consumer drains: an empty ack reopens the window, the sender says so and the rest flows
    p.b.resume();
    p.link.flush();
    expect(p.a.sender.writable).toBe(true); // at once, by the empty ack, not by a later retransmit
    run(p, () => {
      if (p.a.sender.writable) feed();
      return next === data.length && p.a.sender.pending === 0 && !p.link.busy;
    });
    expect(p.a.writableEvents).toBeGreaterThan(eventsBefore);
    expect(seqs(p.b.got)).toEqual(range(data.length + 1));
    expect(p.b.bytes().equals(Buffer.concat(data))).toBe(true);
  });

  it('without acks the sender stops at its 4 MiB window, retransmits (flag 16) and finishes once acks return', () => {
    const p = pair(11, { drop: 0, duplicate: 0, dropAcks: true });
    const data = chunks(p.link.random, 6 * 1024 * 1024, 64 * 1024);
    let next = 0;
    while (next < data.length && p.a.sender.write(data[next++]!));
    p.link.flush();
    const sentBytes = p.a.sent.reduce((n, x) => n + x.data.length, 0);
    expect(sentBytes).toBeGreaterThan(XGRESS_DEFAULTS.windowBytes);
    expect(sentBytes).toBeLessThan(XGRESS_DEFAULTS.windowBytes + 64 * 1024 + 1);
    expect(p.a.sent.some((x) => hasFlag(x.flags, PayloadFlag.PayloadFlagRetransmit))).toBe(false);
    p.time.advance(XGRESS_DEFAULTS.retxStartMs);
    p.link.flush();
    const retx = p.a.sent.filter((x) => hasFlag(x.flags, PayloadFlag.PayloadFlagRetransmit));
    expect(retx.length).toBeGreaterThan(0);
    expect(seqs(retx)).toEqual([...seqs(retx)].sort((x, y) => x - y));

    p.link.faults.dropAcks = false;
    run(p, () => {
      if (p.a.sender.writable) while (next < data.length && p.a.sender.write(data[next++]!));
      return next === data.length && p.a.sender.pending === 0 && !p.link.busy;
    });
    expect(seqs(p.b.got)).toEqual(range(data.length));
    expect(p.b.bytes().equals(Buffer.concat(data))).toBe(true);
  });
});

describe('xgress sender and receiver details', () => {
  function lone(originator: Originator = 'Initiator') {
    const time = new ManualTime();
    const sent: Payload[] = [];
    const closed: number[] = [];
    const sender = new XgressSender({ circuitId: 'c1', originator, time, send: (p) => sent.push(p), onClosed: () => closed.push(time.nowMs()) });
    return { time, sent, sender, closed };
  }
  const ackOf = (seq: number[], rtt: number, recvBufferSize = 0): Acknowledgement => ({
    circuitId: 'c1',
    flags: 2,
    recvBufferSize,
    rtt,
    sequences: seq,
  });

  it('retransmits after 200 ms at first, then after 1.5 × the measured RTT (averaged, as LinkSendBuffer)', () => {
    const { time, sent, sender } = lone();
    sender.write(Buffer.from('a'));
    time.advance(100);
    expect(sent).toHaveLength(1);
    time.advance(100);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatchObject({ sequence: 0, flags: PayloadFlag.PayloadFlagRetransmit });
    expect(sent[1]!.rtt).toBe((sent[0]!.rtt + 200) & 0xffff); // a fresh RTT stamp on the retransmit
    sender.ack(ackOf([0], (rttNow(time.clock) - 400) & 0xffff)); // rtt 400 ms → threshold 600 ms
    expect(sender.pending).toBe(0);
    sender.write(Buffer.from('b'));
    time.advance(500);
    expect(sent).toHaveLength(3);
    time.advance(200);
    expect(sent).toHaveLength(4);
    expect(sent[3]).toMatchObject({ sequence: 1, flags: PayloadFlag.PayloadFlagRetransmit });
    sender.close();
  });

  it('numbers payloads from 0 with the end’s originator bit; CircuitEnd takes the next number and is never resent', () => {
    const { time, sent, sender } = lone('Terminator');
    sender.write(Buffer.from('x'));
    sender.writeFailed();
    sender.circuitEnd();
    expect(sent.map((p) => [p.sequence, p.flags])).toEqual([
      [0, PayloadFlag.PayloadFlagOriginator],
      [1, PayloadFlag.PayloadFlagOriginator | PayloadFlag.PayloadFlagWriteFailed],
      [2, PayloadFlag.PayloadFlagOriginator | PayloadFlag.PayloadFlagCircuitEnd],
    ]);
    time.advance(5_000);
    expect(sent).toHaveLength(3); // closed: no retransmit timer left
    sender.write(Buffer.from('late'));
    expect(sent).toHaveLength(3);
  });

  it('closeWhenEmpty: CircuitEnd 5 s after the last ack, or after 30 s with payloads still unacked', () => {
    const { time, sent, sender, closed } = lone();
    const t0 = time.nowMs();
    sender.write(Buffer.from('x'));
    sender.eof();
    sender.closeWhenEmpty();
    sender.ack(ackOf([0, 1], 0));
    time.advance(5_000);
    expect(closed).toEqual([]);
    time.advance(100);
    expect(closed).toEqual([t0 + 5_100]);
    expect(sent.at(-1)).toMatchObject({ sequence: 2, flags: PayloadFlag.PayloadFlagCircuitEnd });

    const other = lone();
    other.sender.write(Buffer.from('never acked'));
    other.sender.closeWhenEmpty();
    other.time.advance(30_000);
    expect(other.closed).toEqual([]);
    other.time.advance(100);
    expect(other.closed).toHaveLength(1);
    expect(other.sent.at(-1)).toMatchObject({ sequence: 1, flags: PayloadFlag.PayloadFlagCircuitEnd });
  });

  it('a WriteFailed payload is reported on arrival, even out of order, once', () => {
    let failed = 0;
    const rx = new XgressReceiver({ circuitId: 'c1', originator: 'Initiator', sendAck: () => {}, deliver: () => {}, onWriteFailed: () => failed++ });
    const wf: Payload = {
      circuitId: 'c1',
      sequence: 5,
      flags: PayloadFlag.PayloadFlagOriginator | PayloadFlag.PayloadFlagWriteFailed,
      rtt: 0,
      headers: new Map(),
      data: Buffer.alloc(0),
    };
    rx.receive(wf);
    rx.receive(wf);
    expect(failed).toBe(1);
    expect(rx.writeFailed).toBe(true);
  });

  it('a consumer that writes at once gets one ack per payload, reporting the buffer after the write', () => {
    const acks: Acknowledgement[] = [];
    const rx: XgressReceiver = new XgressReceiver({
      circuitId: 'c1',
      originator: 'Terminator',
      sendAck: (a) => acks.push(a),
      deliver: (p) => rx.release(p.data.length),
    });
    for (let i = 0; i < 10; i++) rx.receive({ circuitId: 'c1', sequence: i, flags: 0, rtt: 0, headers: new Map(), data: Buffer.alloc(64 * 1024) });
    expect(acks.map((a) => [a.sequences, a.recvBufferSize])).toEqual(Array.from({ length: 10 }, (_, i) => [[i], 0]));
  });

  it('the receiver acks duplicates and out-of-order payloads, drops its own originator’s, stops after CircuitEnd', () => {
    const acks: Acknowledgement[] = [];
    const got: number[] = [];
    const rx = new XgressReceiver({ circuitId: 'c1', originator: 'Terminator', sendAck: (a) => acks.push(a), deliver: (p) => got.push(p.sequence) });
    const pl = (sequence: number, flags = 0, data = 'd'): Payload => ({
      circuitId: 'c1',
      sequence,
      flags,
      rtt: 40 + sequence,
      headers: new Map(),
      data: Buffer.from(data),
    });
    rx.receive(pl(1));
    expect(got).toEqual([]);
    expect(acks.at(-1)).toMatchObject({ sequences: [1], rtt: 41, recvBufferSize: 1, flags: PayloadFlag.PayloadFlagOriginator });
    rx.receive(pl(0));
    expect(got).toEqual([0, 1]);
    rx.receive(pl(0, PayloadFlag.PayloadFlagRetransmit));
    expect(acks.at(-1)).toMatchObject({ sequences: [0] });
    expect(rx.duplicates).toBe(1);
    rx.receive(pl(2, PayloadFlag.PayloadFlagOriginator)); // a payload of our own: a cycle, dropped unacked
    expect(acks).toHaveLength(3);
    rx.receive(pl(2, PayloadFlag.PayloadFlagCircuitEnd, ''));
    rx.receive(pl(3));
    expect(got).toEqual([0, 1, 2]);
    expect(rx.ended).toBe(true);
    expect(acks).toHaveLength(5);
  });
});
