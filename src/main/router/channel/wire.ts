// OpenZiti's channel framing (channel v4, "V2" wire format) and the edge protocol's constants: what SDKs and
// routers exchange over TLS. All integers little-endian.
//
//   magic 03 06 09 0c | content type i32 | sequence i32 | headers length u32 | body length u32 | headers | body
//   header = key i32 | length u32 | value

export const MAGIC = 0x0c090603; // 03 06 09 0c read as u32le
export const PREFIX_BYTES = 20;

/** Channel-level content types. */
export const ChannelType = { Hello: 0, Ping: 1, Result: 2, Latency: 3, LatencyResponse: 4, Heartbeat: 5 } as const;

/** Edge content types (sdk-golang pb/edge_client_pb). */
export const EdgeType = {
  Connect: 60783,
  StateConnected: 60784,
  StateClosed: 60785,
  Data: 60786,
  Dial: 60787,
  DialSuccess: 60788,
  DialFailed: 60789,
  Bind: 60790,
  Unbind: 60791,
  StateSessionEnded: 60792,
  Probe: 60793,
  UpdateBind: 60794,
  HealthEvent: 60795,
  TraceRoute: 60796,
  TraceRouteResponse: 60797,
  ConnInspectRequest: 60798,
  InspectResponse: 60799,
  BindSuccess: 60800,
  UpdateTokenSuccess: 60801,
  UpdateTokenFailure: 60802,
  UpdateToken: 60803,
  InspectRequest: 60804,
  ConnInspectResponse: 60805,
} as const;

/** Header keys: 0–127 channel, 128–255 reflected into replies, 1000–1099 edge. */
export const Header = {
  ConnectionId: 0,
  ReplyFor: 1,
  ResultSuccess: 2,
  HelloVersion: 4,
  Heartbeat: 5,
  HeartbeatResponse: 6,
  Type: 7,
  Id: 8,
  IsGrouped: 9,
  LatencyProbeTime: 128,
  ConnId: 1000,
  Seq: 1001,
  SessionToken: 1002,
  PublicKey: 1003,
  Cost: 1004,
  Precedence: 1005,
  TerminatorIdentity: 1006,
  TerminatorIdentitySecret: 1007,
  CallerId: 1008,
  CryptoMethod: 1009,
  Flags: 1010,
  AppData: 1011,
  RouterProvidedConnId: 1012,
  HealthStatus: 1013,
  ListenerId: 1021,
  SupportsInspect: 1023,
  SupportsBindSuccess: 1024,
  ConnectionMarker: 1025,
  CircuitId: 1026,
  StickinessToken: 1027,
  UseXgressToSdk: 1028,
} as const;

/** Data flags (header 1010). */
export const Flag = { FIN: 1, MULTIPART: 4 } as const;

/** Terminator precedence as the Bind's header 1005 encodes it. */
export const PRECEDENCES = ['default', 'required', 'failed'] as const;

export type Headers = Map<number, Buffer>;

export interface Message {
  contentType: number;
  sequence: number;
  headers: Headers;
  body: Buffer;
}

export class FrameError extends Error {}

/** Limit of a hello's headers and of its body (as OpenZiti's channel listener: readHelloV2). */
export const HELLO_MAX_PART = 4192;
/**
 * Until its hello is accepted a peer is unknown (any TLS client gets this far): nothing larger than a hello is
 * buffered for it, so it cannot make a listener hold megabytes until the hello timeout.
 */
export const HELLO_LIMITS: FrameLimits = { maxHeaders: HELLO_MAX_PART, maxFrame: PREFIX_BYTES + 2 * HELLO_MAX_PART, name: 'hello message' };

export function message(contentType: number, headers: Array<[number, Buffer]> = [], body: Buffer | string = Buffer.alloc(0)): Message {
  return { contentType, sequence: 0, headers: new Map(headers), body: typeof body === 'string' ? Buffer.from(body) : body };
}

export function encode(m: Message): Buffer {
  return encodeWith(m, m.body.length);
}

/** A frame's prefix and headers without its body, which is written after it as is (large bodies are not copied). */
export function encodeHead(m: Message): Buffer {
  return encodeWith(m, 0);
}

/** The frame with the first `copied` bytes of its body (all or nothing); the prefix declares the whole body. */
function encodeWith(m: Message, copied: number): Buffer {
  let headerBytes = 0;
  for (const v of m.headers.values()) headerBytes += 8 + v.length;
  const out = Buffer.allocUnsafe(PREFIX_BYTES + headerBytes + copied);
  out.writeUInt32LE(MAGIC, 0);
  out.writeInt32LE(m.contentType, 4);
  out.writeInt32LE(m.sequence, 8);
  out.writeUInt32LE(headerBytes, 12);
  out.writeUInt32LE(m.body.length, 16);
  let off = PREFIX_BYTES;
  for (const [k, v] of m.headers) {
    out.writeInt32LE(k, off);
    out.writeUInt32LE(v.length, off + 4);
    v.copy(out, off + 8);
    off += 8 + v.length;
  }
  if (copied > 0) m.body.copy(out, off);
  return out;
}

export const contentTypeOf = (frame: Buffer): number => frame.readInt32LE(4);

/** Offset and length of a header's value inside a frame, without decoding the rest. */
export function findHeader(frame: Buffer, key: number): { offset: number; length: number } | undefined {
  const end = PREFIX_BYTES + frame.readUInt32LE(12);
  for (let off = PREFIX_BYTES; off + 8 <= end;) {
    const k = frame.readInt32LE(off);
    const len = frame.readUInt32LE(off + 4);
    if (k === key) return { offset: off + 8, length: len };
    off += 8 + len;
  }
  return undefined;
}

/** The body of a frame, without decoding its headers. */
export const bodyOf = (frame: Buffer): Buffer => frame.subarray(PREFIX_BYTES + frame.readUInt32LE(12));

/** A Data frame's FIN flag (header 1010): the sender will write no more (half-close). */
export function hasFin(frame: Buffer): boolean {
  const flags = findHeader(frame, Header.Flags);
  return flags?.length === 4 && (frame.readUInt32LE(flags.offset) & Flag.FIN) !== 0;
}

export function decode(frame: Buffer): Message {
  const headerBytes = frame.readUInt32LE(12);
  const end = PREFIX_BYTES + headerBytes;
  const headers: Headers = new Map();
  let off = PREFIX_BYTES;
  while (off < end) {
    if (off + 8 > end) throw new FrameError('truncated header');
    const k = frame.readInt32LE(off);
    const len = frame.readUInt32LE(off + 4);
    if (off + 8 + len > end) throw new FrameError('header runs past the header section');
    headers.set(k, frame.subarray(off + 8, off + 8 + len));
    off += 8 + len;
  }
  return { contentType: frame.readInt32LE(4), sequence: frame.readInt32LE(8), headers, body: frame.subarray(end) };
}

/** What a decoder accepts, in bytes: the header section, and the whole frame (prefix, headers and body). */
export interface FrameLimits {
  maxHeaders: number;
  maxFrame: number;
  /** what a frame over the limits is called in the error (default "frame") */
  name?: string;
}

/**
 * Splits a byte stream into frames. A frame over the limits or a wrong magic is an error (the connection is then
 * dropped), found from the 20-byte prefix alone: nothing of an oversized frame is buffered. The limits may change
 * between frames (e.g. once a hello is accepted). Each byte is copied at most once, when a frame spans several reads.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private length = 0;
  private need = PREFIX_BYTES;
  limits: FrameLimits;

  constructor(
    limits: FrameLimits | number,
    private readonly onFrame: (frame: Buffer) => void,
  ) {
    this.limits = typeof limits === 'number' ? { maxHeaders: limits, maxFrame: limits } : limits;
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (this.length < this.need) return;
    const data = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
    let off = 0;
    this.need = PREFIX_BYTES;
    while (data.length - off >= PREFIX_BYTES) {
      if (data.readUInt32LE(off) !== MAGIC) throw new FrameError('bad magic number');
      const headerBytes = data.readUInt32LE(off + 12);
      const total = PREFIX_BYTES + headerBytes + data.readUInt32LE(off + 16);
      const { maxHeaders, maxFrame, name = 'frame' } = this.limits;
      if (headerBytes > maxHeaders) throw new FrameError(`${name} too big: ${headerBytes} bytes of headers exceed the limit of ${maxHeaders}`);
      if (total > maxFrame) throw new FrameError(`${name} too big: ${total} bytes exceed the limit of ${maxFrame}`);
      if (data.length - off < total) {
        this.need = total;
        break;
      }
      this.onFrame(data.subarray(off, off + total));
      off += total;
    }
    const rest = off === data.length ? undefined : data.subarray(off);
    this.chunks = rest ? [rest] : [];
    this.length = rest?.length ?? 0;
  }
}

// ---- header values -----------------------------------------------------------------------------------------

export const u32 = (v: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(v >>> 0);
  return b;
};
export const i32 = (v: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeInt32LE(v);
  return b;
};
export const u64 = (v: bigint): Buffer => {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, v));
  return b;
};
export const bool = (v: boolean): Buffer => Buffer.from([v ? 1 : 0]);
export const str = (v: string): Buffer => Buffer.from(v, 'utf8');

export const getU32 = (h: Headers, key: number): number | undefined => {
  const v = h.get(key);
  return v && v.length === 4 ? v.readUInt32LE(0) : undefined;
};
export const getU64 = (h: Headers, key: number): bigint | undefined => {
  const v = h.get(key);
  return v && v.length === 8 ? v.readBigUInt64LE(0) : undefined;
};
export const getU16 = (h: Headers, key: number): number | undefined => {
  const v = h.get(key);
  return v && v.length === 2 ? v.readUInt16LE(0) : undefined;
};
export const getBool = (h: Headers, key: number): boolean => {
  const v = h.get(key);
  return !!v && v.length > 0 && v[0] === 1;
};
export const getByte = (h: Headers, key: number): number | undefined => h.get(key)?.[0];
export const getStr = (h: Headers, key: number): string | undefined => h.get(key)?.toString('utf8');
