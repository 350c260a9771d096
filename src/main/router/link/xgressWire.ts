// Xgress messages as they travel on OpenZiti router links (sdk-golang v1.2.10 xgress/messages.go), on top of the
// channel V2 framing in ../channel/wire.ts. Header ids, content types and flag names as in OpenZiti.
// Decoders never throw: a malformed message gives an XgressWireError value.

import { decode, FrameError, MAGIC, PREFIX_BYTES, type Headers, type Message } from '../channel/wire';

export const XgressType = { Payload: 1100, Acknowledgement: 1101, Control: 1102 } as const;

export const XgressHeader = {
  /** 2000 + k carries the payload's xgress header k (0 = UUID, 0x10 = edge flags) */
  MinHeaderKey: 2000,
  MaxHeaderKey: 2255,
  CircuitId: 2256,
  Sequence: 2257,
  Flags: 2258,
  RecvBufferSize: 2259,
  RTT: 2260,
  PayloadRaw: 2261,
} as const;

/** Xgress header keys (k of 2000 + k) that cross the edge bridge (router/xgress_common/messages.go). */
export const XgressKey = { UUID: 0, EdgeFlags: 0x10 } as const;

export const PayloadFlag = {
  PayloadFlagCircuitEnd: 1,
  PayloadFlagOriginator: 2,
  PayloadFlagCircuitStart: 4,
  PayloadFlagChunk: 8,
  PayloadFlagRetransmit: 16,
  PayloadFlagEOF: 32,
  PayloadFlagWriteFailed: 64,
} as const;

/** Which end of the circuit a payload or ack comes from (the Originator flag: Initiator 0, Terminator 1). */
export type Originator = 'Initiator' | 'Terminator';
export const originatorFlag = (o: Originator): number => (o === 'Terminator' ? PayloadFlag.PayloadFlagOriginator : 0);
export const originatorOf = (flags: number): Originator => (flags & PayloadFlag.PayloadFlagOriginator ? 'Terminator' : 'Initiator');
export const hasFlag = (flags: number, flag: number): boolean => (flags & flag) === flag;

export const ControlType = { TraceRoute: 1, TraceRouteResponse: 2 } as const;
export const ControlHeader = { HopCount: 20, HopType: 21, HopId: 22, Timestamp: 23, UserVal: 24, Error: 25 } as const;

/**
 * Link hello headers (router/xlink_transport/factory.go; 7, 9-11 from channel v4 message.go). 0-6 re-use channel
 * header numbers: on a link hello they are not HelloVersion/Heartbeat.
 */
export const LinkHeader = {
  LinkHeaderConnId: 0,
  LinkHeaderType: 1,
  LinkHeaderRouterId: 2,
  LinkHeaderRouterVersion: 3,
  LinkHeaderBinding: 4,
  LinkHeaderIteration: 5,
  LinkDialedRouterId: 6,
  TypeHeader: 7,
  IsGroupedHeader: 9,
  GroupSecretHeader: 10,
  IsFirstGroupConnection: 11,
} as const;

/** LinkHeaderType values of a split link's two connections. */
export const LinkChannelType = { PayloadChannel: 1, AckChannel: 2 } as const;

/** Receive buffer size an ack without header 2259 stands for (UnmarshallAcknowledgement: MaxUint32). */
export const UNKNOWN_RECV_BUFFER = 0xffffffff;

export interface Payload {
  circuitId: string;
  /** int32, per circuit direction, from 0 */
  sequence: number;
  flags: number;
  /** u16 ms clock of the sender when written (0 = none) */
  rtt: number;
  /** xgress headers by k (0–255), sent as channel headers 2000 + k */
  headers: Map<number, Buffer>;
  data: Buffer;
}

export interface Acknowledgement {
  circuitId: string;
  /** only the Originator bit: the acking side */
  flags: number;
  recvBufferSize: number;
  /** the acked payload's RTT value, echoed */
  rtt: number;
  sequences: number[];
}

export interface Control {
  type: number;
  circuitId: string;
  headers: Headers;
}

export type XgressMessage = ({ kind: 'payload' } & Payload) | ({ kind: 'ack' } & Acknowledgement) | ({ kind: 'control' } & Control);

/** A malformed xgress message or frame; returned, never thrown. */
export class XgressWireError {
  constructor(readonly message: string) {}
}

// ---- encoding ----------------------------------------------------------------------------------------------

const u16 = (v: number): Buffer => {
  const b = Buffer.allocUnsafe(2);
  b.writeUInt16LE(v & 0xffff);
  return b;
};
const u32 = (v: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(v >>> 0);
  return b;
};

/** Headers in ascending key order (Go's map order is random; sorted makes frames reproducible). */
const sorted = (headers: Array<[number, Buffer]>): Headers => new Map(headers.sort((a, b) => a[0] - b[0]));

/** Payload.Marshall: 2000+k, 2256, 2257 (u64 of the int32), 2258 if non-zero, 2260. */
export function encodePayload(p: Payload): Message {
  const seq = Buffer.allocUnsafe(8);
  seq.writeBigInt64LE(BigInt(p.sequence | 0));
  const h: Array<[number, Buffer]> = [...p.headers].map(([k, v]) => [XgressHeader.MinHeaderKey + k, v]);
  h.push([XgressHeader.CircuitId, Buffer.from(p.circuitId, 'utf8')], [XgressHeader.Sequence, seq], [XgressHeader.RTT, u16(p.rtt)]);
  if (p.flags !== 0) h.push([XgressHeader.Flags, u32(p.flags)]);
  return { contentType: XgressType.Payload, sequence: 0, headers: sorted(h), body: p.data };
}

/** Acknowledgement.Marshall: 2256, 2258 if non-zero, 2259 and 2260 always; body = big-endian int32s. */
export function encodeAck(a: Acknowledgement): Message {
  const body = Buffer.allocUnsafe(a.sequences.length * 4);
  a.sequences.forEach((s, i) => body.writeInt32BE(s, i * 4));
  const h: Array<[number, Buffer]> = [
    [XgressHeader.CircuitId, Buffer.from(a.circuitId, 'utf8')],
    [XgressHeader.RecvBufferSize, u32(a.recvBufferSize)],
    [XgressHeader.RTT, u16(a.rtt)],
  ];
  if (a.flags !== 0) h.push([XgressHeader.Flags, u32(a.flags)]);
  return { contentType: XgressType.Acknowledgement, sequence: 0, headers: sorted(h), body };
}

/** Control.Marshall: body = type byte + circuit id, headers as given. */
export function encodeControl(c: Control): Message {
  const body = Buffer.concat([Buffer.from([c.type]), Buffer.from(c.circuitId, 'utf8')]);
  return { contentType: XgressType.Control, sequence: 0, headers: sorted([...c.headers]), body };
}

// ---- decoding ----------------------------------------------------------------------------------------------

/** A fixed-size header: absent → undefined, wrong length → error (Go reads a wrong length as absent; we refuse it). */
function fixed(h: Headers, key: number, size: number): Buffer | undefined | XgressWireError {
  const v = h.get(key);
  if (v === undefined) return undefined;
  return v.length === size ? v : new XgressWireError(`header ${key} is ${v.length} bytes, expected ${size}`);
}

function circuitIdOf(h: Headers): string | XgressWireError {
  const v = h.get(XgressHeader.CircuitId);
  return v === undefined ? new XgressWireError('no circuit id (header 2256)') : v.toString('utf8');
}

/** UnmarshallPayload; heartbeat headers 5/6 and other non-xgress headers are ignored. */
export function decodePayload(m: Message): Payload | XgressWireError {
  const circuitId = circuitIdOf(m.headers);
  if (circuitId instanceof XgressWireError) return circuitId;
  const seq = fixed(m.headers, XgressHeader.Sequence, 8);
  if (seq === undefined) return new XgressWireError('no sequence (header 2257)');
  if (seq instanceof XgressWireError) return seq;
  const flags = fixed(m.headers, XgressHeader.Flags, 4);
  if (flags instanceof XgressWireError) return flags;
  const rtt = fixed(m.headers, XgressHeader.RTT, 2);
  if (rtt instanceof XgressWireError) return rtt;
  const headers = new Map<number, Buffer>();
  for (const [k, v] of m.headers) if (k >= XgressHeader.MinHeaderKey && k <= XgressHeader.MaxHeaderKey) headers.set(k - XgressHeader.MinHeaderKey, v);
  return {
    circuitId,
    sequence: Number(BigInt.asIntN(32, seq.readBigUInt64LE(0))),
    flags: flags?.readUInt32LE(0) ?? 0,
    rtt: rtt?.readUInt16LE(0) ?? 0,
    headers,
    data: m.body,
  };
}

/** UnmarshallAcknowledgement: no 2259 → UNKNOWN_RECV_BUFFER; body must be whole int32s. */
export function decodeAck(m: Message): Acknowledgement | XgressWireError {
  const circuitId = circuitIdOf(m.headers);
  if (circuitId instanceof XgressWireError) return circuitId;
  const flags = fixed(m.headers, XgressHeader.Flags, 4);
  if (flags instanceof XgressWireError) return flags;
  const recv = fixed(m.headers, XgressHeader.RecvBufferSize, 4);
  if (recv instanceof XgressWireError) return recv;
  const rtt = fixed(m.headers, XgressHeader.RTT, 2);
  if (rtt instanceof XgressWireError) return rtt;
  if (m.body.length % 4 !== 0) return new XgressWireError(`ack body of ${m.body.length} bytes is not a list of int32 sequences`);
  const sequences: number[] = [];
  for (let off = 0; off < m.body.length; off += 4) sequences.push(m.body.readInt32BE(off));
  return {
    circuitId,
    flags: flags?.readUInt32LE(0) ?? 0,
    recvBufferSize: recv?.readUInt32LE(0) ?? UNKNOWN_RECV_BUFFER,
    rtt: rtt?.readUInt16LE(0) ?? 0,
    sequences,
  };
}

/** UnmarshallControl: body = type byte + circuit id (at least 2 bytes). */
export function decodeControl(m: Message): Control | XgressWireError {
  if (m.body.length < 2) return new XgressWireError('control message body too short');
  return { type: m.body[0]!, circuitId: m.body.subarray(1).toString('utf8'), headers: m.headers };
}

/** An xgress message from a decoded channel message; undefined for other content types (heartbeats, latency). */
export function decodeXgress(m: Message): XgressMessage | XgressWireError | undefined {
  if (m.contentType === XgressType.Payload) {
    const p = decodePayload(m);
    return p instanceof XgressWireError ? p : { kind: 'payload', ...p };
  }
  if (m.contentType === XgressType.Acknowledgement) {
    const a = decodeAck(m);
    return a instanceof XgressWireError ? a : { kind: 'ack', ...a };
  }
  if (m.contentType === XgressType.Control) {
    const c = decodeControl(m);
    return c instanceof XgressWireError ? c : { kind: 'control', ...c };
  }
  return undefined;
}

/** One whole V2 frame (as FrameDecoder hands them out) → channel message, checking what wire.decode assumes. */
export function decodeFrame(frame: Buffer): Message | XgressWireError {
  if (frame.length < PREFIX_BYTES) return new XgressWireError(`frame of ${frame.length} bytes is shorter than the 20-byte prefix`);
  if (frame.readUInt32LE(0) !== MAGIC) return new XgressWireError('bad magic number');
  const total = PREFIX_BYTES + frame.readUInt32LE(12) + frame.readUInt32LE(16);
  if (total !== frame.length) return new XgressWireError(`frame is ${frame.length} bytes, its prefix says ${total}`);
  try {
    return decode(frame);
  } catch (e) {
    if (e instanceof FrameError) return new XgressWireError(e.message);
    throw e;
  }
}
