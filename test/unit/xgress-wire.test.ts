// Xgress payloads, acks and controls on router links, checked against byte vectors printed by OpenZiti's own Go code
// (sdk-golang v1.2.10 xgress + channel v4.2.41; RTT forced to 0x1234), pasted here as hex since CI cannot run Go.
import { describe, expect, it } from 'vitest';
import { decode, encode, type Message } from '../../src/main/router/channel/wire';
import {
  ControlHeader,
  ControlType,
  decodeFrame,
  decodeXgress,
  encodeAck,
  encodeControl,
  encodePayload,
  originatorFlag,
  originatorOf,
  PayloadFlag,
  UNKNOWN_RECV_BUFFER,
  XgressHeader,
  XgressType,
  XgressWireError,
  type Acknowledgement,
  type Payload,
  type XgressMessage,
} from '../../src/main/router/link/xgressWire';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** A message as the Go program listed it: content type, headers (key=hex value), body hex. */
function golden(contentType: number, headers: Record<number, string>, body: string): Message {
  return { contentType, sequence: -1, headers: new Map(Object.entries(headers).map(([k, v]) => [Number(k), hex(v)])), body: hex(body) };
}

const CIRCUIT_START = golden(1100, { 2256: '6331', 2257: '0000000000000000', 2258: '04000000', 2260: '3412' }, '');
const DATA_FIN = golden(1100, { 2016: '01000000', 2256: '6331', 2257: '0100000000000000', 2258: '02000000', 2260: '3412' }, '6869');
const ACK = golden(1101, { 2256: '6331', 2259: '02000000', 2260: '3412' }, '00000000 00000001');
/** channel.MarshalV2(ack.Marshall()), sequence not yet assigned (-1) */
const ACK_FRAME = hex(
  '0306090c 4d040000 ffffffff 20000000 08000000 d0080000 02000000 6331 d3080000 04000000 02000000 d4080000 02000000 3412 0000000000000001',
);

function decoded(m: Message): XgressMessage {
  const x = decodeXgress(m);
  if (x === undefined || x instanceof XgressWireError) throw new Error(`not an xgress message: ${x?.message}`);
  return x;
}

/** Same bytes as Go wrote (headers in ascending key order, which is how the vectors are listed). */
function expectSameFrame(ours: Message, go: Message): void {
  expect(encode({ ...ours, sequence: -1 }).toString('hex')).toBe(encode(go).toString('hex'));
}

describe('xgress wire: OpenZiti golden vectors', () => {
  it('decodes the Initiator’s CircuitStart (seq 0, empty) and re-encodes it byte for byte', () => {
    const p = decoded(CIRCUIT_START) as Payload & { kind: 'payload' };
    expect(p).toMatchObject({ kind: 'payload', circuitId: 'c1', sequence: 0, flags: PayloadFlag.PayloadFlagCircuitStart, rtt: 0x1234 });
    expect(p.data).toHaveLength(0);
    expect(originatorOf(p.flags)).toBe('Initiator');
    expectSameFrame(encodePayload(p), CIRCUIT_START);
  });

  it('decodes a Terminator data payload with the edge FIN in xgress header 0x10 (2016) and re-encodes it', () => {
    const p = decoded(DATA_FIN) as Payload & { kind: 'payload' };
    expect(p).toMatchObject({ circuitId: 'c1', sequence: 1, flags: originatorFlag('Terminator'), rtt: 0x1234 });
    expect(p.data.toString()).toBe('hi');
    expect([...p.headers]).toEqual([[0x10, hex('01000000')]]);
    expect(originatorOf(p.flags)).toBe('Terminator');
    expectSameFrame(encodePayload(p), DATA_FIN);
  });

  it('decodes the Initiator’s ack of [0, 1] (big-endian body, no 2258) and re-encodes the exact V2 frame', () => {
    const msg = decodeFrame(ACK_FRAME);
    if (msg instanceof XgressWireError) throw new Error(msg.message);
    expect(msg).toMatchObject({ contentType: XgressType.Acknowledgement, sequence: -1 });
    const a = decoded(msg) as Acknowledgement & { kind: 'ack' };
    expect(a).toMatchObject({ kind: 'ack', circuitId: 'c1', flags: 0, recvBufferSize: 2, rtt: 0x1234, sequences: [0, 1] });
    expect(encode({ ...encodeAck(a), sequence: -1 })).toEqual(ACK_FRAME);
    expectSameFrame(encodeAck(a), ACK);
  });

  it('writes 2258 only when flags are set, and the sequence as 8 bytes (negative int32s sign-extended, as Go)', () => {
    const base: Payload = { circuitId: 'x', sequence: 7, flags: 0, rtt: 1, headers: new Map(), data: Buffer.alloc(0) };
    expect(encodePayload(base).headers.has(XgressHeader.Flags)).toBe(false);
    const neg = encodePayload({ ...base, sequence: -2 });
    expect(neg.headers.get(XgressHeader.Sequence)).toEqual(hex('feffffffffffffff'));
    expect((decoded(neg) as Payload).sequence).toBe(-2);
    const ack = encodeAck({ circuitId: 'x', flags: originatorFlag('Terminator'), recvBufferSize: 0, rtt: 0, sequences: [] });
    expect(ack.headers.get(XgressHeader.Flags)).toEqual(hex('02000000'));
    expect(ack.headers.get(XgressHeader.RecvBufferSize)).toEqual(hex('00000000'));
    expect(ack.body).toHaveLength(0);
  });

  it('round-trips a traceroute control (type byte + circuit id body, headers kept)', () => {
    const c = encodeControl({ type: ControlType.TraceRoute, circuitId: 'c1', headers: new Map([[ControlHeader.HopCount, hex('03000000')]]) });
    expect(c.body).toEqual(hex('01 6331'));
    const back = decoded(decode(encode(c)));
    expect(back).toMatchObject({ kind: 'control', type: 1, circuitId: 'c1' });
    expect((back as { headers: Map<number, Buffer> }).headers.get(ControlHeader.HopCount)).toEqual(hex('03000000'));
  });

  it('ignores heartbeat headers on payloads and reads an ack without 2259 as MaxUint32 (as Go)', () => {
    const withHb: Message = { ...DATA_FIN, headers: new Map([...DATA_FIN.headers, [5, hex('0102030405060708')]]) };
    expect([...(decoded(withHb) as Payload).headers.keys()]).toEqual([0x10]);
    const noRb: Message = { ...ACK, headers: new Map([...ACK.headers].filter(([k]) => k !== XgressHeader.RecvBufferSize)) };
    expect((decoded(noRb) as Acknowledgement).recvBufferSize).toBe(UNKNOWN_RECV_BUFFER);
    expect(decodeXgress({ ...ACK, contentType: 5 })).toBeUndefined();
  });
});

describe('xgress wire: malformed input gives an error value, never a throw', () => {
  const without = (m: Message, key: number): Message => ({ ...m, headers: new Map([...m.headers].filter(([k]) => k !== key)) });
  const withHeader = (m: Message, key: number, v: string): Message => ({ ...m, headers: new Map([...m.headers, [key, hex(v)]]) });
  const cases: Array<[string, Message]> = [
    ['payload without circuit id', without(DATA_FIN, XgressHeader.CircuitId)],
    ['payload without sequence', without(DATA_FIN, XgressHeader.Sequence)],
    ['payload with a 4-byte sequence', withHeader(DATA_FIN, XgressHeader.Sequence, '01000000')],
    ['payload with 2-byte flags', withHeader(DATA_FIN, XgressHeader.Flags, '0200')],
    ['payload with a 4-byte RTT', withHeader(DATA_FIN, XgressHeader.RTT, '34120000')],
    ['ack without circuit id', without(ACK, XgressHeader.CircuitId)],
    ['ack body not whole int32s', { ...ACK, body: hex('000000') }],
    ['ack with a 2-byte receive buffer', withHeader(ACK, XgressHeader.RecvBufferSize, '0200')],
    ['control with a 1-byte body', { contentType: XgressType.Control, sequence: 0, headers: new Map(), body: hex('01') }],
  ];
  for (const [name, m] of cases) {
    it(name, () => {
      expect(decodeXgress(m)).toBeInstanceOf(XgressWireError);
    });
  }

  it('frames: too short, bad magic, wrong lengths, a header running past its section', () => {
    expect(decodeFrame(ACK_FRAME.subarray(0, 12))).toBeInstanceOf(XgressWireError);
    const badMagic = Buffer.from(ACK_FRAME);
    badMagic[0] = 0;
    expect(decodeFrame(badMagic)).toBeInstanceOf(XgressWireError);
    expect(decodeFrame(ACK_FRAME.subarray(0, ACK_FRAME.length - 1))).toBeInstanceOf(XgressWireError);
    expect(decodeFrame(Buffer.concat([ACK_FRAME, hex('00')]))).toBeInstanceOf(XgressWireError);
    const longHeader = Buffer.from(ACK_FRAME);
    longHeader.writeUInt32LE(200, 24); // first header's value length
    expect(decodeFrame(longHeader)).toBeInstanceOf(XgressWireError);
    const shortSection = Buffer.from(ACK_FRAME);
    shortSection.writeUInt32LE(0x1c, 12); // header section ends inside the last header
    shortSection.writeUInt32LE(0x0c, 16);
    expect(decodeFrame(shortSection)).toBeInstanceOf(XgressWireError);
  });
});
