// A circuit's end on a router link (src/main/router/link/linkEnd.ts) between a real Circuit and an in-memory link:
// edge Data frames become xgress payloads with the edge UUID and flags as xgress headers 0 and 0x10 and back; payloads
// held back while the SDK connection is full are all relayed, in order, once it drains; the far end's EOF closes the
// circuit and tells the controller once.
import { describe, expect, it } from 'vitest';
import { Circuit, type CircuitDial } from '../../src/main/router/circuit';
import { bodyOf, decode, EdgeType, encode, findHeader, Header, message, u32, type Message } from '../../src/main/router/channel/wire';
import { LinkEnd } from '../../src/main/router/link/linkEnd';
import type { RouterLink } from '../../src/main/router/link/linkSession';
import { decodeXgress, PayloadFlag, XgressKey, type Payload } from '../../src/main/router/link/xgressWire';
import { ManualTime } from '../support/manualTime';

const INFO: CircuitDial = {
  serviceId: 's',
  serviceName: 'svc',
  terminatorId: 't',
  sessionId: 'sess',
  caller: 'c',
  callerId: 'cid',
  hostId: 'h',
  instanceId: '',
  cost: 0,
};

/** An SDK connection whose socket takes frames until told it is full, and drains when the test says so. */
class FakeSdk {
  readonly frames: Buffer[] = [];
  full = false;
  private drained: Array<() => void> = [];
  readonly channel = {
    write: (frame: Buffer) => {
      this.frames.push(Buffer.from(frame));
      // a full socket has more queued than the relay lets through without pausing the sender
      this.channel.socket.writableLength = this.full ? 2 * 1024 * 1024 : 0;
      return !this.full;
    },
    send: () => true,
    drain: () => new Promise<void>((r) => this.drained.push(r)),
    socket: { writableLength: 0 },
  };
  forget() {}
  drain(): void {
    const d = this.drained;
    this.drained = [];
    d.forEach((r) => r());
  }
}

function setup() {
  const sent: Message[] = [];
  const link = { id: 'L', peerRouterId: 'r', iteration: 1, channel: { send: (m: Message) => (sent.push(m), true) } } as unknown as RouterLink;
  const ended: string[] = [];
  const time = new ManualTime();
  const end = new LinkEnd({ circuitId: 'c1', link, originator: 'Initiator', time, ended: (id) => ended.push(id) });
  const sdk = new FakeSdk();
  const circuit = new Circuit('c1', INFO, { kind: 'sdk', conn: sdk as never, connId: 7 }, () => undefined);
  end.attach(circuit);
  circuit.attachHost({ kind: 'link', end });
  circuit.open();
  const payloads = () =>
    sent.map((m) => decodeXgress(decode(encode(m)))).filter((x): x is { kind: 'payload' } & Payload => (x as any)?.kind === 'payload');
  return { end, sdk, circuit, sent, payloads, ended, time };
}

const payload = (
  sequence: number,
  data: string,
  headers = new Map<number, Buffer>(),
  flags: number = PayloadFlag.PayloadFlagOriginator,
): Payload => ({
  circuitId: 'c1',
  sequence,
  flags,
  rtt: 0,
  headers,
  data: Buffer.from(data),
});

describe('a circuit end on a link', () => {
  it('carries the edge UUID and flags both ways as xgress headers 0 and 0x10, nothing else', () => {
    const { sdk, circuit, payloads, end } = setup();
    const uuid = Buffer.alloc(16, 9);
    circuit.relay(
      'dialer',
      encode(
        message(
          EdgeType.Data,
          [
            [Header.ConnId, u32(7)],
            [Header.Seq, u32(3)],
            [128, uuid],
            [Header.Flags, u32(1)],
          ],
          'hi',
        ),
      ),
    );
    const [out] = payloads();
    expect(out!.data.toString()).toBe('hi');
    expect([...out!.headers.entries()]).toEqual([
      [XgressKey.UUID, uuid],
      [XgressKey.EdgeFlags, u32(1)],
    ]);
    end.receiver.receive(payload(0, 'back', new Map([[XgressKey.EdgeFlags, u32(1)]])));
    const frame = sdk.frames[0]!;
    expect(bodyOf(frame).toString()).toBe('back');
    const m = decode(frame);
    expect(m.headers.get(Header.ConnId)!.readUInt32LE(0)).toBe(7);
    expect(m.headers.get(Header.Flags)!.readUInt32LE(0)).toBe(1);
    expect(findHeader(frame, 128)).toBeUndefined();
  });

  it('relays every payload held back by a full SDK connection, in order, once it drains', async () => {
    const { end, sdk } = setup();
    sdk.full = true;
    for (let i = 0; i < 10; i++) end.receiver.receive(payload(i, `p${i}`));
    // the first went out and filled it; the rest wait
    expect(sdk.frames.map((f) => bodyOf(f).toString())).toEqual(['p0']);
    sdk.full = true;
    sdk.drain();
    await new Promise((r) => setImmediate(r));
    // full again after the next one: still in order, nothing skipped
    expect(sdk.frames.map((f) => bodyOf(f).toString())).toEqual(['p0', 'p1']);
    sdk.full = false;
    sdk.drain();
    await new Promise((r) => setImmediate(r));
    expect(sdk.frames.map((f) => bodyOf(f).toString())).toEqual(Array.from({ length: 10 }, (_, i) => `p${i}`));
  });

  it("ends the circuit at the far end's EOF, tells the SDK and the controller once", () => {
    const { end, circuit, ended, sdk } = setup();
    end.receiver.receive(payload(0, '', new Map(), PayloadFlag.PayloadFlagOriginator | PayloadFlag.PayloadFlagEOF));
    expect(circuit.closed).toBe(true);
    expect(ended).toEqual(['c1']);
    end.linkLost();
    expect(ended).toEqual(['c1']);
    expect(sdk.frames).toEqual([]);
  });
});
