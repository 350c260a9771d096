// The little of protobuf's wire format the control channel speaks (OpenZiti's ctrl_pb and edge_ctrl_pb messages are
// proto3): varints and length-delimited fields out, the same in with the other wire types skipped. Field numbers
// and types are the .proto's; each message's encoder and decoder live with what uses it (edgeMessages.ts, fabric.ts).

/** A message being written: fields in the order they are added (proto3 leaves defaults out; so does `omit`). */
export class ProtoWriter {
  private readonly parts: Buffer[] = [];

  private key(field: number, wireType: number): void {
    this.varint(BigInt((field << 3) | wireType));
  }

  private varint(v: bigint): void {
    const bytes: number[] = [];
    let n = BigInt.asUintN(64, v);
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n) b |= 0x80;
      bytes.push(b);
    } while (n);
    this.parts.push(Buffer.from(bytes));
  }

  /** uint32/uint64/int32/enum/bool field (omitted when zero, as proto3 does). */
  uint(field: number, v: number | bigint | boolean | undefined): this {
    const n = typeof v === 'boolean' ? (v ? 1n : 0n) : BigInt(v ?? 0);
    if (n === 0n) return this;
    this.key(field, 0);
    this.varint(n);
    return this;
  }

  /** bytes, string or embedded message field (empty strings and bytes omitted; messages always written). */
  bytes(field: number, v: Buffer | string | undefined, always = false): this {
    if (v === undefined) return this;
    const b = typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
    if (b.length === 0 && !always) return this;
    this.key(field, 2);
    this.varint(BigInt(b.length));
    this.parts.push(b);
    return this;
  }

  message(field: number, m: ProtoWriter | undefined): this {
    return m ? this.bytes(field, m.finish(), true) : this;
  }

  strings(field: number, vs: readonly string[] | undefined): this {
    for (const v of vs ?? []) this.bytes(field, v, true);
    return this;
  }

  /** A packed repeated enum/uint field. */
  packed(field: number, vs: readonly number[]): this {
    if (vs.length === 0) return this;
    const inner = new ProtoWriter();
    for (const v of vs) inner.varint(BigInt(v));
    return this.bytes(field, inner.finish(), true);
  }

  /** map<string, string|bytes> (each entry a message: key = 1, value = 2). */
  map(field: number, m: Record<string, string | Buffer> | Map<string, string | Buffer> | undefined): this {
    const entries = m instanceof Map ? [...m] : Object.entries(m ?? {});
    for (const [k, v] of entries) this.message(field, new ProtoWriter().bytes(1, k, true).bytes(2, v, true));
    return this;
  }

  /** map<string, uint/enum>. */
  uintMap(field: number, m: Record<string, number> | undefined): this {
    for (const [k, v] of Object.entries(m ?? {})) this.message(field, new ProtoWriter().bytes(1, k, true).uint(2, v));
    return this;
  }

  /** map<uint32, bytes>. */
  u32BytesMap(field: number, m: Map<number, Buffer> | undefined): this {
    for (const [k, v] of m ?? []) this.message(field, new ProtoWriter().uint(1, k).bytes(2, v, true));
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

export class ProtoError extends Error {}

/** One field read: its number and either a varint or the bytes of a length-delimited value. */
export interface ProtoField {
  field: number;
  varint?: bigint;
  bytes?: Buffer;
}

/** The fields of a message, in order (unknown wire types 1 and 5 skipped; groups refused). */
export function readFields(buf: Buffer): ProtoField[] {
  const out: ProtoField[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (pos >= buf.length) throw new ProtoError('truncated varint');
      const b = buf[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return BigInt.asUintN(64, result);
    }
    throw new ProtoError('varint too long');
  };
  while (pos < buf.length) {
    const key = varint();
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (field === 0) throw new ProtoError('field number 0');
    if (wire === 0) out.push({ field, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (pos + len > buf.length) throw new ProtoError('truncated field');
      out.push({ field, bytes: buf.subarray(pos, pos + len) });
      pos += len;
    } else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else throw new ProtoError(`unsupported wire type ${wire}`);
    if (pos > buf.length) throw new ProtoError('truncated field');
  }
  return out;
}

/** Typed access to a decoded message's fields (the last one of a number wins, as protobuf's does for scalars). */
export class ProtoReader {
  private readonly fields: ProtoField[];

  constructor(buf: Buffer) {
    this.fields = readFields(buf);
  }

  private last(field: number): ProtoField | undefined {
    for (let i = this.fields.length - 1; i >= 0; i--) if (this.fields[i]!.field === field) return this.fields[i];
    return undefined;
  }

  str(field: number): string {
    return this.last(field)?.bytes?.toString('utf8') ?? '';
  }

  buf(field: number): Buffer {
    return this.last(field)?.bytes ?? Buffer.alloc(0);
  }

  uint(field: number): number {
    return Number(this.last(field)?.varint ?? 0n);
  }

  bigint(field: number): bigint {
    return this.last(field)?.varint ?? 0n;
  }

  bool(field: number): boolean {
    return (this.last(field)?.varint ?? 0n) !== 0n;
  }

  strs(field: number): string[] {
    return this.fields.filter((f) => f.field === field && f.bytes).map((f) => f.bytes!.toString('utf8'));
  }

  messages(field: number): ProtoReader[] {
    return this.fields.filter((f) => f.field === field && f.bytes).map((f) => new ProtoReader(f.bytes!));
  }

  message(field: number): ProtoReader | undefined {
    const f = this.last(field);
    return f?.bytes ? new ProtoReader(f.bytes) : undefined;
  }

  /** map<uint32, bytes> */
  u32BytesMap(field: number): Map<number, Buffer> {
    return new Map(this.messages(field).map((e) => [e.uint(1), e.buf(2)]));
  }
}
